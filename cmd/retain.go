package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

func init() { register("retain", retainCommand) }

// retainOptions are retain's flags.
type retainOptions struct {
	opts
	call, tool        string
	partial, timedOut bool
	omittedBytes      *int64
	exitCode          *int
}

func retainCommand() *cli.Command {
	var o retainOptions
	return &cli.Command{
		Name:      "retain",
		Usage:     "keep a tool result, print what the model should see",
		UsageText: "retval retain --run R --call C [--tool T] [--threshold SIZE] [--compress none|zstd|auto] [--off] [--policy legacy|bounded] [--partial [--omitted-bytes N]] [--exit-code N] [--timed-out] [FILE|-]",
		Description: `Reads FILE (or stdin) as it streams. A result within the threshold is
printed unchanged and nothing is stored; a larger one is stored once and its
stub is printed: id, size, SHA-256, completeness, head and tail excerpts and
the peek command that reads more. If the store cannot be written, the result
is printed unchanged with a warning on stderr (exit 0): a stub never points
at nothing. A mistake in retain's own command line or settings (no run, no
--call, a bad value, an unknown flag) prints the output unchanged as well,
keeps nothing and reports the mistake (exit 2): the output still reaches
the model.

Example:
   go test ./... 2>&1 | retval retain --run "$RUN" --call "$CALL_ID" --tool go-test

Exit status: 0 printed (stub or verbatim), 1 conflict (the call id holds
other bytes) or I/O error, 2 usage, 4 run at capacity (bounded policy).`,
		Flags: append(globalFlags("off", "policy", "compress", "read-more", "threshold", "preview-bytes", "peek-lines",
			"max-value-size", "max-run-bytes", "max-run-values"),
			&cli.StringFlag{Name: "call", Usage: "call id of the tool call (required)", Destination: &o.call},
			&cli.StringFlag{Name: "tool", Usage: "name of the tool that produced the result", Destination: &o.tool},
			&cli.BoolFlag{Name: "partial", Usage: "the producer kept only the tail of its output", Destination: &o.partial},
			&cli.Int64Flag{Name: "omitted-bytes", Usage: "bytes the producer discarded (with --partial)", Action: setTo(&o.omittedBytes)},
			&cli.IntFlag{Name: "exit-code", Usage: "the tool's exit status", Action: setTo(&o.exitCode)},
			&cli.BoolFlag{Name: "timed-out", Usage: "the tool was stopped by a timeout", Destination: &o.timedOut},
		),
		Action: action(&o.opts, func(e *env) error { return runRetain(e, &o) }),
		// A flag the library cannot parse: the output is printed all the
		// same (passThrough).
		OnUsageError: func(_ context.Context, c *cli.Command, err error, _ bool) error {
			return passThrough(envOf(c), nil, commandUsageError(c, err))
		},
	}
}

func runRetain(e *env, o *retainOptions) error {
	in, err := openInput(o.args, e)
	if err != nil {
		if len(o.args) > 1 {
			return passThrough(e, nil, err) // which FILE is unclear: stdin, as for a flag error
		}
		return err // the FILE that holds the output cannot be opened: nothing to print
	}
	defer in.Close()
	r, err := o.settings(e)
	if err != nil {
		return passThrough(e, in, err)
	}
	if r.Off {
		_, err := io.Copy(e.stdout, in)
		return err
	}
	run, err := needRun(r)
	if err != nil {
		return passThrough(e, in, err)
	}
	if o.call == "" {
		return passThrough(e, in, usageErr("no call id given: use --call C"))
	}
	meta := retain.Meta{Tool: o.tool, Partial: o.partial, TimedOut: o.timedOut, ExitCode: o.exitCode}
	if o.omittedBytes != nil {
		if !meta.Partial {
			return passThrough(e, in, usageErr("--omitted-bytes needs --partial"))
		}
		if *o.omittedBytes < 0 {
			return passThrough(e, in, usageErr("--omitted-bytes must be ≥ 0"))
		}
		meta.OmittedBytes = o.omittedBytes
	}
	opts := retain.RetainOptions{Run: run, Call: o.call, Meta: meta, Limits: r.Limits, Policy: r.Policy, Compress: r.Compress, ReadMore: r.ReadMore,
		ShowLater: true}
	store := logStore(r.Location(), e, "retain")

	out := e.stdout
	var jw *verbatimJSON
	if r.JSON {
		jw = &verbatimJSON{w: e.stdout}
		out = jw
	}
	res, err := store.Retain(in, out, opts)
	if err != nil {
		return err
	}
	if res.Warning != nil {
		fmt.Fprintf(e.stderr, "retval: retain: warning: %v\n", res.Warning)
	}
	if res.Verbatim {
		if r.JSON {
			return jw.finish(res.Warning)
		}
		return nil
	}
	if r.JSON {
		err = writeJSON(e.stdout, retainJSON{Descriptor: res.Descriptor, Retained: res.Retained, Stub: res.Stub, NotRetained: res.NotRetained})
	} else {
		_, err = io.WriteString(e.stdout, res.Stub)
	}
	if err == nil {
		store.LogShown(opts, res) // only a stub that was written was shown
	}
	return err
}

// passThrough is retain's answer to a mistake in its own command line or
// settings (an empty RETVAL_RUN, no --call, RETVAL_POLICY=strict, an
// unknown flag): the tool's output is already on its way in, so it is
// printed unchanged — streamed, as a small result is — and the error is
// reported as usual (exit 2), so the output reaches the model even though
// it was not kept. in is the input, or nil where the command line could
// not be read far enough to know it: then stdin, unless it is a terminal
// (nobody is piping an output in, and copying would wait for one). With
// --json the output is the {"retained":false,"stub":…} object of a
// verbatim result, with the error beside it.
func passThrough(e *env, in io.Reader, cause error) error {
	if in == nil {
		if isTerminalReader(e.stdin) {
			return cause
		}
		in = e.stdin
	}
	if jsonWanted(e.args) {
		jw := &verbatimJSON{w: e.stdout}
		if _, err := io.Copy(jw, in); err != nil {
			return cause
		}
		err := jw.finishWith(nil, map[string]any{"error": map[string]any{"code": retain.CodeOf(cause), "message": oneLine(cause.Error())}})
		if err != nil {
			return cause
		}
		return reportedError{cause}
	}
	n, err := io.Copy(e.stdout, in)
	if err != nil || n == 0 {
		return cause
	}
	hint := "the output was printed unchanged and nothing was kept"
	if h := hintOf(cause); h != "" {
		hint = h + " (" + hint + ")"
	}
	return retain.WithHint(cause, hint)
}

// reportedError is an error already written out where it belongs (inside
// retain's --json answer): Main ends with its exit status and prints
// nothing more.
type reportedError struct{ err error }

func (r reportedError) Error() string   { return r.err.Error() }
func (r reportedError) Unwrap() error   { return r.err }
func (r reportedError) ExitStatus() int { return exitCode(r.err) }

// isTerminalReader reports whether r is a terminal (only an *os.File can
// be). Tests replace it.
var isTerminalReader = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type retainJSON struct {
	*retain.Descriptor
	Retained    bool   `json:"retained"`
	Stub        string `json:"stub"`
	NotRetained string `json:"not_retained,omitempty"`
}

// verbatimJSON streams a verbatim result as {"retained":false,"stub":"…"}.
type verbatimJSON struct {
	w       io.Writer
	started bool
	s       *jsonstr.Writer
}

func (v *verbatimJSON) Write(p []byte) (int, error) {
	if !v.started {
		v.started = true
		if _, err := io.WriteString(v.w, `{"retained":false,"stub":"`); err != nil {
			return 0, err
		}
		v.s = &jsonstr.Writer{W: v.w}
	}
	return v.s.Write(p)
}

func (v *verbatimJSON) finish(warning error) error { return v.finishWith(warning, nil) }

// finishWith ends the object with the warning, if any, and the fields
// of extra (in key order).
func (v *verbatimJSON) finishWith(warning error, extra map[string]any) error {
	if _, err := v.Write(nil); err != nil {
		return err
	}
	if err := v.s.Close(); err != nil {
		return err
	}
	tail := `"`
	if warning != nil {
		w := jsonstr.Append(nil, []byte(warning.Error()))
		tail += `,"warning":"` + string(w) + `"`
	}
	if len(extra) > 0 {
		b, err := json.Marshal(extra)
		if err != nil {
			return err
		}
		tail += "," + string(b[1:len(b)-1])
	}
	_, err := io.WriteString(v.w, tail+"}\n")
	return err
}
