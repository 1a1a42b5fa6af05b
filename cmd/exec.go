package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/execute"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("exec", execCommand) }

// execOptions are exec's flags.
type execOptions struct {
	opts
	call, stderr        string
	tool, timeout, tail *string
}

func execCommand() *cli.Command {
	var o execOptions
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a command and retain what it printed",
		UsageText: "retval exec --run R [--call C] [--tool T] [retain flags] [--timeout DUR] [--tail SIZE] [--stderr merged|separate] -- CMD ARGS...",
		Description: `Runs CMD with ARGS, stdin passed through, and retains what it prints as
retain would: the output itself when it is small, else its stub, which
records the command's exit status (", exit 1") and whether it timed out.
retval then exits with the command's own status, as timeout(1) does: 124
when --timeout stopped it, 128+N when signal N ended it. Only when the
command never ran (not found, not executable, a bad flag) does retval
exit with its own codes, and the message says the command did not run.

stdout and stderr are retained together, interleaved as a terminal shows
them; --stderr separate retains stderr as a value of its own, call id
"<call>.stderr", printing its stub (or itself) on stderr; the stdout
stub names it (", stderr #ID"). The output goes
into the store as it comes, so memory stays bounded whatever the command
prints. A run at its caps or an output past the max value size never
stops the command: it runs to its end and the model is shown a preview
marked "[not retained: …]" naming the limit. Only --timeout, and a
--max-value-size given by the caller (flag, variable or config file, not
the default), stop it: an output past that stops the command there (its
process group is killed) and the value is the first bytes, the stub
saying "partial: stopped at max-value-size". With --tail SIZE, only the
last SIZE bytes are kept, as a test runner keeps them: the command runs
on, and the value is partial with the exact count of bytes discarded.
--tail is held in memory, so it is at most --max-value-size.

--timeout DUR (90s, 15m, 2h) kills the command's whole process group
(what it started, too) and keeps what it printed. The run ends when the
command itself exits: what it left running is not waited for. SIGINT,
SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to retval are forwarded
to the group, and the output so far is kept. Once the command has exited,
the first signal is let be and its output is still kept and shown; a
second ends retval. A killed retval takes the command with it (Linux). On
a terminal, the command is given it (it reads it, ^C reaches it) and
retval takes it back after.

Without --call, a short call id unused in the run is picked ("x7kq2m")
and shown in the stub, so the one reading it need not invent ids. Without
--run (and RETVAL_RUN), the output goes to the run of the day,
shell-YYYYMMDD (UTC), in the agents' store: runs_dir from the config file
or RETVAL_RUNS_DIR, else $XDG_STATE_HOME/retval/runs, as the hook and the
MCP proxy use, so an agent told to run its commands through retval needs
nothing else. The stub's read-more line is a retval peek command to paste
into a shell (--read-more peek for the short form).

Example:
   retval exec --run "$RUN" --call "$CALL_ID" --timeout 15m -- go test ./...
   retval exec --run "$RUN" --tail 256KiB -- make check
   retval exec --run "$RUN" -- seq 1 20000

Exit status: the command's own (124 on timeout, 128+N for signal N);
when the command did not run, 2 usage (no command, bad flag, command not
found or not executable) or 4 (a run under --policy bounded is full); 1
when its output could not be kept or shown (I/O).`,
		Flags: append(globalFlags("off", "policy", "compress", "read-more", "threshold", "preview-bytes", "peek-lines",
			"max-value-size", "max-run-bytes", "max-run-values"),
			&cli.StringFlag{Name: "call", Usage: "call id of the tool call (default: a short unused one, shown in the stub)", Destination: &o.call},
			&cli.StringFlag{Name: "tool", Usage: "name of the tool (default: the command's name)", Action: setTo(&o.tool)},
			&cli.StringFlag{Name: "timeout", Usage: "kill the command's process group after DUR (90s, 15m, 2h); exit 124", Action: setTo(&o.timeout)},
			&cli.StringFlag{Name: "tail", Usage: "keep only the last SIZE bytes (256KiB), as a test runner does", Action: setTo(&o.tail)},
			&cli.StringFlag{Name: "stderr", Value: "merged", Usage: "merged (one value, interleaved) or separate (stderr as <call>.stderr)", Destination: &o.stderr},
		),
		Action: action(&o.opts, func(e *env) error { return runExec(e, &o) }),
	}
}

// execStatus ends retval with the command's status; the command already
// said what it had to.
type execStatus int

func (s execStatus) Error() string   { return fmt.Sprintf("the command exited with status %d", int(s)) }
func (s execStatus) ExitStatus() int { return int(s) }

func runExec(e *env, x *execOptions) error {
	// Everything after the command's name is the command's: no flags of
	// retval are looked for there.
	argv := x.args
	r, err := x.settings(e)
	if err != nil {
		return err
	}
	if len(argv) == 0 {
		return usageErr("no command given: put it after --, as in retval exec --run R -- go test ./...")
	}
	o := execute.Options{Args: argv, Stdin: e.stdin, Out: e.stdout, ErrOut: e.stderr, Off: r.Off,
		Stderr: execute.StderrMode(x.stderr),
		// Only a max-value-size the caller chose stops the command: a
		// build must not be killed by a default, nor by a full run.
		StopAtMaxValueSize: r.Values["max-value-size"].Source != config.FromDefault}
	if x.timeout != nil {
		if o.Timeout, err = config.ParseDuration(*x.timeout); err != nil {
			return usageErr("--timeout: %v", err)
		}
	}
	if x.tail != nil {
		if o.Tail, err = config.ParseSize(*x.tail); err != nil {
			return usageErr("--tail: %v", err)
		}
	}
	dir := r.Location()
	if !r.Off {
		run := r.Run
		if run == "" {
			// An agent told to run its commands through retval, with no
			// integration at all: the agents' store and a run of the day.
			if dir, err = agentRunsDir(r); err != nil {
				return err
			}
			run = "shell-" + time.Now().UTC().Format("20060102")
		}
		tool := argv[0]
		if x.tool != nil {
			tool = *x.tool
		}
		readMore := r.ReadMore
		if r.Values["read-more"].Source == config.FromDefault {
			// Whoever runs exec has a shell: the read-more line is a
			// command to paste into it.
			readMore = retain.ReadMoreShell
		}
		o.Retain = retain.RetainOptions{Run: run, Call: x.call, Meta: retain.Meta{Tool: tool},
			Limits: r.Limits, Policy: r.Policy, Compress: r.Compress, ReadMore: readMore, ShowLater: true}
	}
	var jw *verbatimJSON
	if r.JSON && !r.Off {
		jw = &verbatimJSON{w: e.stdout}
		o.Out = jw
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, execute.Forwarded...)
	defer signal.Stop(sigs)
	o.Signals = sigs
	// Once the command has exited, what it printed is committed and shown
	// whatever signal comes (a harness's deadline, a ^C a moment after a
	// long build finished), and retval exits with the command's status;
	// a second signal ends retval as it ends any process — one blocked
	// writing to a reader that stopped reading included.
	o.Exited = func() {
		go endOnSecondSignal(sigs, e.stderr)
		execExited()
	}
	// A closed stdout must not end retval by SIGPIPE, leaving the command
	// without its reader: writing then fails, and that is said. Caught,
	// not ignored, so that the command does not inherit it ignored.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	store := logStore(dir, e, "exec")
	res, err := execute.Run(store, o)
	if res == nil {
		return err // the command did not run
	}
	if err != nil {
		// Retaining failed once the command had run: retval's failure,
		// with its code, saying what the command did.
		return &execFailure{err: err, status: res.Status, off: r.Off}
	}
	if res.Warning != nil {
		fmt.Fprintf(e.stderr, "retval: exec: warning: %v\n", res.Warning)
	}
	if werr := writeExec(e, r.JSON, jw, res); werr != nil {
		return werr
	}
	// The stubs reached their readers: the read log counts them shown.
	stdoutOpts, stderrOpts := o.Retain, o.Retain
	stdoutOpts.Call, stderrOpts.Call = res.Call, res.Call+execute.StderrSuffix
	store.LogShown(stdoutOpts, res.Stdout)
	store.LogShown(stderrOpts, res.Stderr)
	if res.Status != 0 {
		return execStatus(res.Status)
	}
	return nil
}

// execExited is called once the command has exited, before its output
// is committed: a test seam (the tests pause there to send signals).
var execExited = func() {}

// endOnSecondSignal takes the signals sent to retval once the command has
// exited. The first is let be: the command's output is still committed
// and shown, which takes a bounded time (what the pipes hold, one
// commit); what happens is said on stderr. The second ends retval by that
// signal, as it would end any process: a value being retained then is
// left unfinished — debris gc removes, never a stub.
func endOnSecondSignal(sigs chan os.Signal, stderr io.Writer) {
	first := <-sigs
	fmt.Fprintf(stderr, "retval: exec: %v: the command has exited; keeping what it printed (signal again to stop now)\n", first)
	second := <-sigs
	signal.Stop(sigs)
	if s, ok := second.(syscall.Signal); ok {
		raise(s)
	}
}

// writeExec shows what became of the output: the stub (stdout's on
// stdout, a separate stderr's on stderr), or with --json one object on
// stdout describing both, with the command's exit status.
func writeExec(e *env, asJSON bool, jw *verbatimJSON, res *execute.Result) error {
	for _, r := range []*retain.Result{res.Stdout, res.Stderr} {
		if r != nil && r.Warning != nil {
			fmt.Fprintf(e.stderr, "retval: exec: warning: %v\n", r.Warning)
		}
	}
	if res.Stdout == nil { // --off: the output went through
		return nil
	}
	if !asJSON {
		if !res.Stdout.Verbatim {
			if _, err := io.WriteString(e.stdout, res.Stdout.Stub); err != nil {
				return err
			}
		}
		if res.Stderr != nil && !res.Stderr.Verbatim {
			if _, err := io.WriteString(e.stderr, res.Stderr.Stub); err != nil {
				return err
			}
		}
		return nil
	}
	extra := map[string]any{}
	if res.Stderr != nil {
		extra["stderr_value"] = execJSONOf(res.Stderr)
	}
	if res.Stdout.Verbatim {
		extra["exit_code"], extra["timed_out"] = res.Status, res.TimedOut
		return jw.finishWith(res.Stdout.Warning, extra)
	}
	b, err := json.Marshal(retainJSON{Descriptor: res.Stdout.Descriptor, Retained: res.Stdout.Retained, Stub: res.Stdout.Stub, NotRetained: res.Stdout.NotRetained})
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		x, err := json.Marshal(extra)
		if err != nil {
			return err
		}
		b = append(append(b[:len(b)-1], ','), x[1:]...)
	}
	_, err = e.stdout.Write(append(b, '\n'))
	return err
}

// execJSONOf describes the stderr value: its descriptor, retained and
// stub; when it was printed as it is (on stderr), retained false and
// verbatim true.
func execJSONOf(r *retain.Result) any {
	if r.Verbatim {
		return map[string]any{"retained": false, "verbatim": true}
	}
	return retainJSON{Descriptor: r.Descriptor, Retained: r.Retained, Stub: r.Stub, NotRetained: r.NotRetained}
}

// execFailure is a failure to retain the output of a command that ran:
// its code is retval's, and it says the command's status (exit_code in
// the JSON error).
type execFailure struct {
	err    error
	status int
	off    bool // the output was passed through, not retained
}

func (f *execFailure) Error() string {
	if f.off {
		return fmt.Sprintf("%v; the command ran and exited %d", f.err, f.status)
	}
	return fmt.Sprintf("%v; the command ran and exited %d, its output was not kept", f.err, f.status)
}
func (f *execFailure) Unwrap() error                { return f.err }
func (f *execFailure) ErrorDetails() map[string]any { return map[string]any{"exit_code": f.status} }
