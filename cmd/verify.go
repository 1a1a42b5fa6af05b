package cmd

import (
	"fmt"
	"strings"

	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("verify", verifyCommand) }

func verifyCommand() *cli.Command {
	var o opts
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-read every value and check it against its descriptor",
		UsageText: "retval verify [--run R] [--grace DUR] [--json]",
		Description: `Re-reads every value of a run (or of every run), streaming, and checks
its size and SHA-256 against its descriptor, and its line index's block
digests against its bytes. Prints one line per problem as it is found:

   corrupt  the content (or its index) does not match the descriptor
   missing  a descriptor whose content file is not there
   debris   a file that belongs to no value (gc removes it); files younger
            than --grace may be a write in progress and are not reported

A run's read log (.reads, which retval stats sums) that is not a regular
file or holds lines that are not records is reported as corrupt.

then a summary line. --json prints {"runs", "refused", "values", "bytes",
"corrupt", "missing", "debris", "problems": [{"run", "file", "kind",
"message"}]}; when something is corrupt or missing, an error object
follows it.

A run refused as a whole (another user's directory) is one corrupt problem,
counted apart in the summary; a run whose .lock is a symlink or not a file
is reported (its lock is corrupt) and its values are checked all the same.

Example:
   retval verify --run "$RUN"
   retval verify --runs-dir /var/lib/agent/runs --json

Exit status: 0 every value checks out (debris alone is reported, exit 0),
1 something is corrupt or missing (or an I/O error), 2 usage, 3 unknown or
collected run.`,
		Flags:  globalFlags("grace"),
		Action: action(&o, func(e *env) error { return runVerify(e, &o) }),
	}
}

func runVerify(e *env, vo *opts) error {
	r, err := vo.settings(e)
	if err != nil {
		return err
	}
	if len(vo.args) > 0 {
		return usageErr("verify takes no arguments, got %q (the run goes in --run)", vo.args[0])
	}
	now, err := clock()
	if err != nil {
		return err
	}
	store := openStore(r.Location(), now)
	o := retain.VerifyOptions{Run: r.Run, Grace: r.Limits.Grace}
	if !r.JSON {
		o.Problem = func(p retain.Problem) {
			msg := p.Message
			if p.Kind == retain.ProblemDebris {
				msg += ", " + size(p.Bytes)
			}
			fmt.Fprintf(e.stdout, "%-7s  %s/%s: %s\n", p.Kind, p.Run, p.File, msg)
		}
	}
	rep, err := store.Verify(o)
	if err != nil {
		return err
	}
	if r.JSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "verified %d %s (%s) in %d %s", rep.Values, plural(rep.Values, "value", "values"), size(rep.Bytes), rep.Runs, plural(rep.Runs, "run", "runs"))
		if rep.Refused > 0 {
			fmt.Fprintf(&b, " (%d more %s refused, unchecked)", rep.Refused, plural(rep.Refused, "run", "runs"))
		}
		b.WriteString(": ")
		if rep.OK() && rep.Debris == 0 {
			b.WriteString("all good")
		} else {
			fmt.Fprintf(&b, "%d corrupt, %d missing, %d debris", rep.Corrupt, rep.Missing, rep.Debris)
			if rep.Debris > 0 {
				b.WriteString(" (retval gc removes debris)")
			}
		}
		fmt.Fprintln(e.stdout, b.String())
	}
	if !rep.OK() {
		return retain.Errorf(retain.CodeCorrupt, "%d corrupt, %d missing; each is listed with what to do", rep.Corrupt, rep.Missing)
	}
	return nil
}
