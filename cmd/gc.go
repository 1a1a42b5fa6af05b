package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/retval/retval/internal/human"
	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

func init() { register("gc", gcCommand) }

// gcOptions are gc's flags.
type gcOptions struct {
	opts
	dryRun, verbose bool
}

func gcCommand() *cli.Command {
	var o gcOptions
	return &cli.Command{
		Name:      "gc",
		Usage:     "collect old runs and debris (for cron)",
		UsageText: "retval gc [--max-age DUR] [--max-bytes SIZE] [--keep-runs N] [--grace DUR] [--dry-run] [--verbose] [--json]",
		Description: `Removes whole runs idle longer than --max-age (last activity: the newest
write, or a read's .activity stamp), then the oldest runs until the store is
within --max-bytes (apparent size, as du -sb counts) and holds at most
--keep-runs runs; and removes debris (files of unfinished writes, content
without a descriptor, strays) older than --grace.

Never touches a run whose lock a writer holds (it is skipped and reported)
or one active within --grace. A run is renamed out of the store under its
exclusive lock before it is deleted, and a tombstone is left so that later
lookups fail with "collected" (exit 3) instead of "unknown_reference";
tombstones are dropped 30 days after the collection. Two gc processes never
work on one runs-dir: the second exits 1 at once.

Nothing outside the runs-dir is ever touched: no symlink under it is
followed, and a link found in a run or in the trash is removed as itself. A
symlink in place of .retval or .retval/gc.lock stops gc (exit 1); one in
place of .retval/trash or .retval/tombstones is reported as a failure (exit
1) while gc collects what it safely can. A runs-dir that does not exist yet
is an empty store: "nothing to collect", exit 0. A runs-dir gc cannot write
(a read-only mount or snapshot) is an error with the code read_only, exit 1;
--dry-run still shows the plan there.

Prints a one-line summary (and the runs it skipped); --verbose lists every
action, --dry-run lists the plan and changes nothing. A progress bar is
drawn on stderr when it is a terminal.

For testing, RETVAL_NOW (an RFC 3339 time) replaces the clock.

Example:
   retval gc --runs-dir /var/lib/agent/runs --max-age 14d --max-bytes 20GiB --dry-run
   # crontab: 17 3 * * * retval gc --runs-dir /var/lib/agent/runs --max-age 14d

Exit status: 0 done (skipped busy runs included, and no runs-dir yet), 1
another gc is running, an action failed, gc refused part of the store, or
the store cannot be written (read_only), 2 usage.`,
		Flags: append(globalFlags("grace", "max-age", "max-bytes", "keep-runs"),
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the plan, change nothing", Destination: &o.dryRun},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every action, not only the summary", Destination: &o.verbose},
		),
		Action: action(&o.opts, func(e *env) error { return runGC(e, &o) }),
	}
}

// clock returns the time source of a command: time.Now, or the fixed time
// in RETVAL_NOW (RFC 3339), a testing aid so that scripts can simulate the
// passing of time without sleeping.
func clock() (func() time.Time, error) {
	v := os.Getenv("RETVAL_NOW")
	if v == "" {
		return time.Now, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, usageErr("RETVAL_NOW %q: want an RFC 3339 time such as 2030-01-02T15:04:05Z", v)
	}
	return func() time.Time { return t }, nil
}

func runGC(e *env, g *gcOptions) error {
	r, err := g.settings(e)
	if err != nil {
		return err
	}
	if len(g.args) > 0 {
		return usageErr("gc takes no arguments, got %q", g.args[0])
	}
	// Settings hold SPEC's reading (0: no limit); gc.Options hold Go's
	// (0: the default). Grace arrives as retain.Limits already mapped.
	o := gc.Options{Grace: r.Limits.Grace, DryRun: g.dryRun, KeepRuns: int(r.KeepRuns),
		MaxAge: r.MaxAge, MaxBytes: r.MaxBytes}
	if o.MaxAge == 0 {
		o.MaxAge = gc.Unlimited
	}
	now, err := clock()
	if err != nil {
		return err
	}
	store := openStore(r.Location(), now)
	var bar *progress
	if isTerminal(e.stderr) {
		bar = newProgress(e.stderr)
		o.Progress = bar.update
	}
	rep, err := gc.Collect(store, o)
	// The bar's line is cleared before anything else is printed: on a
	// terminal stdout and stderr share the screen.
	bar.finish()
	if rep == nil {
		return err
	}
	if r.JSON {
		if werr := writeJSON(e.stdout, rep); werr != nil {
			return werr
		}
		return err
	}
	if werr := printGC(e.stdout, rep, o.DryRun || g.verbose, r.Location()); werr != nil {
		return werr
	}
	return err
}

// isTerminal reports whether w is a terminal (only an *os.File can be):
// gc draws its progress bar there, peek escapes what it shows there. Tests
// replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printGC writes the human report: every action when all is set, then the
// skipped runs and failures, then one summary line.
func printGC(w io.Writer, rep *gc.Report, all bool, runsDir string) error {
	if rep.NoRunsDir && retain.IsObjectStore(runsDir) {
		_, err := fmt.Fprintf(w, "nothing to collect: %s holds no runs yet\n", runsDir)
		return err
	}
	if rep.NoRunsDir {
		_, err := fmt.Fprintf(w, "nothing to collect: no runs-dir %s yet\n", runsDir)
		return err
	}
	var b strings.Builder
	verb := func(did, would string) string {
		if rep.DryRun {
			return would
		}
		return did
	}
	if all {
		for _, t := range rep.Trash {
			fmt.Fprintf(&b, "%s %s (left by an interrupted gc, %s)\n", verb("finished", "would finish"), t.Path, size(t.Bytes))
		}
		for _, t := range rep.Tombstones {
			fmt.Fprintf(&b, "%s the tombstone of run %s (collected %s)\n", verb("dropped", "would drop"), t.Run, t.Collected.UTC().Format(time.RFC3339))
		}
		for _, x := range rep.Removed {
			fmt.Fprintf(&b, "%s run %s: %s (%d values, %s, last active %s)\n", verb("removed", "would remove"), x.Run,
				ruleText(x.Rule, rep.Now.Sub(x.LastActivity)), x.Values, size(x.Bytes), x.LastActivity.UTC().Format(time.RFC3339))
		}
		for _, d := range rep.Debris {
			fmt.Fprintf(&b, "%s debris %s (%s, %s)\n", verb("removed", "would remove"), d.Path, d.Kind, size(d.Bytes))
		}
	}
	for _, s := range rep.Skipped {
		what := "run " + string(s.Run)
		if s.Rule == gc.RuleDebris {
			what = "debris of run " + string(s.Run)
		}
		fmt.Fprintf(&b, "%s %s (%s): %s\n", verb("skipped", "would skip"), what, s.Reason, s.Message)
	}
	for _, f := range rep.Failed {
		what := f.Path
		if f.Run != "" {
			what = "run " + string(f.Run)
		}
		fmt.Fprintf(&b, "failed %s: %s\n", what, f.Error)
	}
	runs := len(rep.Removed)
	fmt.Fprintf(&b, "%s %d %s and %d debris %s, %s %s; kept %d %s (%s)",
		verb("removed", "would remove"), runs, plural(runs, "run", "runs"), len(rep.Debris), plural(len(rep.Debris), "file", "files"),
		verb("freed", "freeing"), size(rep.BytesFreed), rep.RunsKept, plural(rep.RunsKept, "run", "runs"), size(rep.BytesKept))
	if n := len(rep.Skipped); n > 0 {
		fmt.Fprintf(&b, "; %d skipped", n)
	}
	if n := len(rep.Failed); n > 0 {
		fmt.Fprintf(&b, "; %d failed", n)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func ruleText(rule string, idle time.Duration) string {
	switch rule {
	case gc.RuleMaxAge:
		return "idle " + gc.Age(idle) + ", over --max-age"
	case gc.RuleMaxBytes:
		return "oldest while the store is over --max-bytes"
	case gc.RuleKeepRuns:
		return "oldest while the store holds more than --keep-runs"
	}
	return rule
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// size humanises a byte count for human tables and messages (never JSON).
func size(n int64) string {
	if n < 0 {
		n = 0
	}
	return human.IBytes(uint64(n))
}

// progress draws gc's progress on a terminal: one line, redrawn in place
// at most every 100 ms. (schollz/progressbar did this before, but it links
// net/http and crypto/tls into every retval process, and start-up is paid
// on every call a harness makes.)
type progress struct {
	f     io.Writer
	phase string
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer) *progress { return &progress{f: w} }

func (p *progress) update(phase string, done, total int) {
	now := time.Now()
	if phase == p.phase && done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.phase, p.last = phase, now
	desc := "scanning runs"
	if phase == "collect" {
		desc = "collecting"
	}
	const width = 30
	filled := width
	if total > 0 {
		filled = width * min(done, total) / total
	}
	fmt.Fprintf(p.f, "\r\033[K%s [%s%s] %d/%d", desc, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total)
	p.drawn = true
}

// finish clears the bar's line, if one was drawn (p may be nil: no bar).
func (p *progress) finish() {
	if p != nil && p.drawn {
		fmt.Fprint(p.f, "\r\033[K")
		p.drawn = false
	}
}

// openStore opens the runs-dir with the command's clock.
func openStore(dir string, now func() time.Time) *retain.Store {
	s := retain.Open(dir)
	s.Now = now
	return s
}
