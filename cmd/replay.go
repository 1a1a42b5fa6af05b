package cmd

import (
	"io"

	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("replay", replayCommand) }

// replayOptions are replay's flags.
type replayOptions struct {
	opts
	call string
}

func replayCommand() *cli.Command {
	var o replayOptions
	return &cli.Command{
		Name:      "replay",
		Usage:     "rebuild what the model saw for a call, writing nothing",
		UsageText: "retval replay --run R --call C [FILE|-]",
		Description: `Reads the full text of a tool result as the transcript holds it. When
the call's value exists and holds exactly these bytes, prints its stub,
byte-identical to the one retain printed (under the same settings);
otherwise prints the input unchanged. Never writes to the store.

Example:
   retval replay --run "$RUN" --call "$CALL_ID" < full-output.txt

Exit status: 0 printed, 1 I/O error, 2 usage.`,
		Flags: append(globalFlags("policy", "read-more", "threshold", "preview-bytes", "peek-lines"),
			&cli.StringFlag{Name: "call", Usage: "call id of the tool call (required)", Destination: &o.call},
		),
		Action: action(&o.opts, func(e *env) error { return runReplay(e, &o) }),
	}
}

func runReplay(e *env, o *replayOptions) error {
	r, run, err := o.settingsRun(e)
	if err != nil {
		return err
	}
	in, err := openInput(o.args, e)
	if err != nil {
		return err
	}
	defer in.Close()
	call := o.call
	if call == "" {
		return usageErr("no call id given: use --call C")
	}
	// With --json, the object retain --json printed: the descriptor with
	// "retained" and "stub", or {"retained":false,"stub":INPUT}.
	out := e.stdout
	var jw *verbatimJSON
	if r.JSON {
		jw = &verbatimJSON{w: e.stdout}
		out = jw
	}
	st := r.Limits.StubSettings(r.Policy)
	st.ReadMore = r.ReadMore
	res, err := retain.Open(r.Location()).ReplayResult(in, out, run, call, st)
	if err != nil {
		return err
	}
	switch {
	case !r.JSON:
		_, err = io.WriteString(e.stdout, res.Stub)
	case res.Verbatim:
		err = jw.finish(nil)
	default:
		err = writeJSON(e.stdout, retainJSON{Descriptor: res.Descriptor, Retained: true, Stub: res.Stub})
	}
	return err
}
