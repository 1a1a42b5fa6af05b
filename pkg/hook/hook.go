package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// An Agent is one agent's side of the seam: the wire format of its hook
// and the file its hook is installed in. Everything else an agent's hook
// does — deciding to retain or to let an output through, the run and call
// ids, the stub and its read-more line, installing into a settings file
// with a backup and a byte-exact round trip — is the Hook's and the
// Settings', shared by every agent. Adding an agent is one file: a type
// that implements Agent, registered in an init function.
type Agent interface {
	// Name is the agent as `retval hook NAME` names it ("claude-code").
	Name() string
	// ReadMore is the form of the stub's read-more line: a command in
	// the syntax of a tool the agent's model can call.
	ReadMore() retain.ReadMore
	// Answer decodes one hook input (the whole of stdin) and answers it,
	// leaving to h all that is not the agent's own. An Answer with no
	// Output lets the agent show the output as it is.
	Answer(h *Hook, input []byte) (Answer, error)
	// Settings is what install adds to the agent's settings file; nil
	// for an agent whose hook is not installed through one.
	Settings() *Settings
}

var agents []Agent

// register adds an agent; each agent's file calls it from init.
func register(a Agent) { agents = append(agents, a) }

// Lookup returns the agent named name.
func Lookup(name string) (Agent, bool) {
	i := slices.IndexFunc(agents, func(a Agent) bool { return a.Name() == name })
	if i < 0 {
		return nil, false
	}
	return agents[i], true
}

// Names are the agents' names, sorted.
func Names() []string {
	var names []string
	for _, a := range agents {
		names = append(names, a.Name())
	}
	slices.Sort(names)
	return names
}

// DefaultMaxInput bounds one hook input read from stdin: the JSON of one
// tool call, which for an MCP tool holds the whole result (JSON escaping
// can make it several times the result's size).
const DefaultMaxInput = 64 << 20

// Options configure a hook. The zero value of every field but RunsDir
// means the documented default.
type Options struct {
	// RunsDir is the store: a runs-dir (a relative one is taken from the
	// working directory and made absolute, so the stub's command works
	// anywhere) or an s3://BUCKET/PREFIX address.
	RunsDir string
	// Limits are retain's; zero fields are the defaults.
	Limits retain.Limits
	// Compress is retain's content storage: "", "none", "zstd" or "auto".
	Compress string
	// Off passes every result through: no answer, nothing stored.
	Off bool
	// MaxInput bounds the hook input; 0 is DefaultMaxInput.
	MaxInput int64
	// OnLogError is told of a failure to append to the run's read log
	// (see retain.Store.OnLogError).
	OnLogError func(error)
	// ExpandShell and WrapShell are the user's opt-ins, given at install,
	// for an agent that accepts a rewritten shell call only as an
	// approved one (Codex): expand the references in shell commands, and
	// run every shell command through retval exec.
	ExpandShell, WrapShell bool
	// Exe is this retval's path, for the commands a hook writes.
	Exe string
}

// Answer is what the hook says.
type Answer struct {
	// Output is the hook's answer for stdout; empty when the agent is to
	// show the tool's own output.
	Output []byte
	// Reason says why there is no Output (the result was small, the tool
	// is not one the hook handles, retval is off).
	Reason string
	// Descriptor is the retained value, when one was retained.
	Descriptor *retain.Descriptor
}

// Run reads one hook input from in and has agent answer it. Every
// failure is an error and no Output: the caller prints nothing, so the
// agent shows its own output, and exits 0 — a hook never breaks a tool
// call.
func Run(agent Agent, in io.Reader, o Options) (Answer, error) {
	max := o.MaxInput
	if max <= 0 {
		max = DefaultMaxInput
	}
	b, err := iox.ReadAll(in, max)
	if err != nil {
		return Answer{}, fmt.Errorf("reading the hook input: %w", err)
	}
	if int64(len(b)) > max {
		io.Copy(io.Discard, in) // let the agent finish writing
		return Answer{}, fmt.Errorf("the hook input is over %d bytes: the output is shown as is", max)
	}
	if o.Off {
		return Answer{Reason: "retval is off: the output is shown as is"}, nil
	}
	return agent.Answer(&Hook{opts: o, readMore: agent.ReadMore(), agent: agent.Name()}, b)
}

// Hook is what every agent's hook shares: it decides whether an output is
// retained, retains it in the run of the agent's session, and says what
// the model sees instead. An Agent calls it with its hook input decoded.
type Hook struct {
	opts     Options
	readMore retain.ReadMore
	agent    string // the agent's name, for the read log
	store    *retain.Store
}

// Expand expands the references in a tool call's input (its arguments,
// one JSON document: see expand.ExpandInput) against the run of the
// agent's session, and records what they saved in the read log. An input
// without references is returned as it is, with no Fields: the agent is
// to run the call untouched. A refusal (expand_refused) names each
// failing reference; the agent is to refuse the call with it.
func (h *Hook) Expand(c Call, input []byte, o expand.InputOptions) (*expand.Input, error) {
	if !bytes.Contains(input, []byte("$")) && !bytes.Contains(input, []byte(`\u`)) {
		return &expand.Input{Doc: input}, nil // no reference can be there
	}
	store, err := h.open() // a value is read only where a reference is found
	if err != nil {
		return nil, err
	}
	x := &expand.Expander{Store: store, Run: c.Run, MaxBytes: h.opts.Limits.MaxExpandBytes}
	in, err := x.ExpandInput(input, o)
	if err != nil {
		return nil, err
	}
	x.LogInput("hook "+h.agent, c.Tool, in)
	return in, nil
}

// Call names one tool call: Run is the agent's session, ID the agent's
// id of the call (retain makes both safe names), Tool the tool's name.
type Call struct {
	Run, ID, Tool string
}

func (h *Hook) open() (*retain.Store, error) {
	if h.store != nil {
		return h.store, nil
	}
	dir, err := filepath.Abs(h.opts.RunsDir)
	if retain.IsObjectStore(h.opts.RunsDir) {
		dir = h.opts.RunsDir
	} else if err != nil || h.opts.RunsDir == "" {
		return nil, errors.New("no store: set runs_dir in the config file")
	}
	h.store = retain.Open(dir)
	h.store.OnLogError = h.opts.OnLogError
	return h.store, nil
}

// Value is one output to retain.
type Value struct {
	// Call is the tool call; Suffix is added to its id to name a second
	// value of the same call ("-stderr").
	Call   Call
	Suffix string
	// Tool is the value's tool as recorded ("" is Call.Tool).
	Tool     string
	TimedOut bool
	// Partial: the agent kept only the output's tail (its own buffer
	// limit), so the stub must not say complete.
	Partial bool
	// Note is shown to the model after the stub (where the value came
	// from); the read log counts it with the stub.
	Note string
}

// Kept is a value retained: the stub to show instead (Note included) and
// its descriptor.
type Kept struct {
	Stub       string
	Descriptor *retain.Descriptor
}

// Retain keeps the output read from r when it is over the threshold and
// returns what the model sees instead; nil and the reason when the model
// sees the output as it is (within the threshold, or not kept under the
// legacy policy: at capacity a hook lets the output through, since a
// preview without a reference is worse than the agent's own).
func (h *Hook) Retain(r io.Reader, v Value) (*Kept, string, error) {
	store, err := h.open()
	if err != nil {
		return nil, "", err
	}
	tool := v.Tool
	if tool == "" {
		tool = v.Call.Tool
	}
	res, err := store.Retain(r, io.Discard, retain.RetainOptions{
		Run: v.Call.Run, Call: v.Call.ID + v.Suffix, Meta: retain.Meta{Tool: tool, TimedOut: v.TimedOut, Partial: v.Partial},
		Limits: h.opts.Limits, Policy: retain.PolicyLegacy, Compress: h.opts.Compress,
		ReadMore: h.readMore, Via: "hook", Note: v.Note,
	})
	switch {
	case err != nil:
		return nil, "", err
	case res.Warning != nil:
		return nil, "", fmt.Errorf("the store could not take the output: %v", res.Warning)
	case res.Verbatim:
		return nil, "the output is within the threshold: shown as is", nil
	case !res.Retained:
		return nil, "not retained (" + res.NotRetained + "): the output is shown as is", nil
	}
	return &Kept{Stub: res.Stub + v.Note, Descriptor: res.Descriptor}, "", nil
}

// Shell is a shell command's output as an agent hands it over.
type Shell struct {
	// Stdout is the output the agent shows (cut, when Saved is set).
	Stdout string
	// StdoutJSON, when set, is Stdout as the agent sent it, a JSON string
	// literal (valid JSON), and Stdout is left empty: the output is read
	// from it as it is retained, and built only if it is to be shown, so a
	// 16 MiB output is not held twice.
	StdoutJSON json.RawMessage
	// Saved names the file the agent wrote the whole output to when it
	// cut Stdout (SavedAs names the field in messages): the value is read
	// from there, never from the cut copy, and only when it is a plain
	// file given by an absolute path.
	Saved, SavedAs string
	// Stderr is the command's error output, when the agent keeps it apart.
	Stderr      string
	Interrupted bool
	// Partial: the agent kept only stdout's tail.
	Partial bool
	// Note is shown to the model after stdout's stub: what the value is,
	// where that is not the command's stdout as it wrote it.
	Note string
}

// ShellShown is what the model sees of a shell command's output.
type ShellShown struct {
	Stdout, Stderr string
	// Descriptor is stdout's, when it was retained.
	Descriptor *retain.Descriptor
}

// Shell retains a shell command's output: stdout when it is over the
// threshold, and stderr, as a value of its own (the call's id and
// "-stderr"), when that is. Either is then shown as its stub and the
// other as it is; nil and the reason when both are shown as they are.
func (h *Hook) Shell(c Call, out Shell) (*ShellShown, string, error) {
	var stdout io.Reader = strings.NewReader(out.Stdout)
	if out.StdoutJSON != nil {
		stdout = jsonstr.NewUnquoter(out.StdoutJSON)
	}
	if out.Saved != "" {
		f, reason, err := h.openSaved(out.Saved, out.SavedAs)
		if f == nil {
			return nil, reason, err
		}
		defer f.Close()
		stdout = f
	}
	shown := &ShellShown{Stdout: out.Stdout, Stderr: out.Stderr}
	kept, reason, err := h.Retain(stdout, Value{Call: c, TimedOut: out.Interrupted, Partial: out.Partial, Note: out.Note})
	if err != nil {
		return nil, "", err
	}
	if kept != nil {
		shown.Stdout, shown.Descriptor = kept.Stub, kept.Descriptor
	}
	// A large stderr is retained too; when that fails it is shown whole:
	// nothing the agent would show is lost.
	lim := h.opts.Limits.Effective().Threshold
	if lim > 0 && int64(len(out.Stderr)) > lim {
		if k, _, err := h.Retain(strings.NewReader(out.Stderr), Value{Call: c, Suffix: "-stderr", Tool: c.Tool + " stderr", TimedOut: out.Interrupted}); err == nil && k != nil {
			shown.Stderr = k.Stub
		}
	}
	if kept == nil && shown.Stderr == out.Stderr {
		return nil, reason, nil
	}
	if kept == nil && out.StdoutJSON != nil {
		var b strings.Builder
		io.Copy(&b, jsonstr.NewUnquoter(out.StdoutJSON))
		shown.Stdout = b.String()
	}
	return shown, "", nil
}

// openSaved opens the file an agent saved a whole output in: an absolute
// path to a plain file within max-value-size, never through a symlink,
// never a FIFO or a device. A file too big is no error: nil and the
// reason.
func (h *Hook) openSaved(p, field string) (io.ReadCloser, string, error) {
	if !filepath.IsAbs(p) {
		return nil, "", fmt.Errorf("%s %q is not absolute", field, p)
	}
	f, err := fsx.Open(p)
	switch {
	case errors.Is(err, fsx.ErrSymlink):
		return nil, "", fmt.Errorf("%s %s is a symlink: the whole output is read only from a plain file", field, p)
	case errors.Is(err, fsx.ErrNotRegular):
		return nil, "", fmt.Errorf("%s %s is not a regular file", field, p)
	case err != nil:
		return nil, "", fmt.Errorf("reading the whole output: %v", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", err
	}
	if m := h.opts.Limits.Effective().MaxValueSize; m > 0 && fi.Size() > m {
		f.Close()
		return nil, fmt.Sprintf("the output's %d bytes exceed max-value-size %d: shown as is", fi.Size(), m), nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, fi.Size()), f}, "", nil
}

// DefaultRunsDir is the hooks' store where none is configured:
// $XDG_STATE_HOME/retval/runs, by default ~/.local/state/retval/runs
// (never ./runs, which would scatter stores over every project the agent
// visits). It is absolute, or "" when neither variable says where.
func DefaultRunsDir() string {
	dir := config.XDGDir("XDG_STATE_HOME", filepath.Join(".local", "state"))
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "retval", "runs")
}

// encode is v as one line of JSON, as an agent reads a hook's answer
// (no HTML escaping: the model sees the text as it is).
func encode(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
