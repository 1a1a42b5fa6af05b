package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/retain"
)

// DefaultMaxInput bounds one hook input read from stdin: the JSON of one
// tool call, which for an MCP tool holds the whole result (JSON escaping
// can make it several times the result's size).
const DefaultMaxInput = 64 << 20

// Options configure ClaudeCode. The zero value of every field but RunsDir
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
}

// Answer is what the hook says.
type Answer struct {
	// Output is the hook's answer for stdout; empty when Claude Code is
	// to show the tool's own output.
	Output []byte
	// Reason says why there is no Output (the result was small, the tool
	// is not one the hook handles, retval is off).
	Reason string
	// Descriptor is the retained value, when one was retained.
	Descriptor *retain.Descriptor
}

// Input is the part of a Claude Code PostToolUse hook input the hook reads.
type Input struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
}

// bashResponse is the Bash tool's tool_response. Claude Code merges the
// command's stderr into stdout; stderr is kept for what it may hold.
type bashResponse struct {
	Stdout      *string `json:"stdout"`
	Stderr      string  `json:"stderr"`
	Interrupted bool    `json:"interrupted"`
	IsImage     bool    `json:"isImage"`
	// PersistedOutputPath names the file holding the whole output when
	// Claude Code cut stdout (to 30,000 characters).
	PersistedOutputPath string `json:"persistedOutputPath"`
}

// ClaudeCode reads one PostToolUse hook input from in and answers it: a
// Bash result over the threshold becomes
// {"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":STUB,"stderr":…,"interrupted":…}}},
// an MCP tool's (tool_name mcp__SERVER__TOOL) one with
// "updatedMCPToolOutput":STUB, a plain string. Anything else gets no
// Output and a Reason; a failure is an error, and then too the caller
// prints nothing, so Claude Code shows its own output.
func ClaudeCode(in io.Reader, o Options) (Answer, error) {
	max := o.MaxInput
	if max <= 0 {
		max = DefaultMaxInput
	}
	b, err := io.ReadAll(io.LimitReader(in, max+1))
	if err != nil {
		return Answer{}, fmt.Errorf("reading the hook input: %w", err)
	}
	if int64(len(b)) > max {
		io.Copy(io.Discard, in) // let Claude Code finish writing
		return Answer{}, fmt.Errorf("the hook input is over %d bytes: the output is shown as is", max)
	}
	var inp Input
	if err := json.Unmarshal(b, &inp); err != nil {
		return Answer{}, fmt.Errorf("the hook input is not a JSON object: %v", err)
	}
	if o.Off {
		return Answer{Reason: "retval is off: the output is shown as is"}, nil
	}
	if inp.HookEventName != "" && inp.HookEventName != "PostToolUse" {
		return Answer{Reason: fmt.Sprintf("a %s hook input: only PostToolUse is answered", inp.HookEventName)}, nil
	}
	if len(inp.ToolResponse) == 0 {
		return Answer{}, errors.New("the hook input has no tool_response")
	}
	if inp.SessionID == "" || inp.ToolUseID == "" {
		return Answer{}, errors.New("the hook input lacks session_id or tool_use_id")
	}
	dir, err := filepath.Abs(o.RunsDir)
	if retain.IsObjectStore(o.RunsDir) {
		dir = o.RunsDir
	} else if err != nil || o.RunsDir == "" {
		return Answer{}, fmt.Errorf("no store: set runs_dir in the config file")
	}
	store := retain.Open(dir)
	store.OnLogError = o.OnLogError
	h := &handler{store: store, in: inp, opts: o}
	switch {
	case inp.ToolName == "Bash":
		return h.bash()
	case strings.HasPrefix(inp.ToolName, "mcp__"):
		return h.mcp()
	}
	return Answer{Reason: fmt.Sprintf("tool %q is not one the hook handles (Bash, mcp__*)", inp.ToolName)}, nil
}

type handler struct {
	store *retain.Store
	in    Input
	opts  Options
}

// retain keeps r as the value of call and returns its stub, or "" and a
// reason when it was not retained.
func (h *handler) retain(r io.Reader, call string, meta retain.Meta, note string) (*retain.Result, string, error) {
	res, err := h.store.Retain(r, io.Discard, retain.RetainOptions{
		Run: h.in.SessionID, Call: call, Meta: meta, Limits: h.opts.Limits,
		// legacy: at capacity the hook passes (a preview without a
		// reference is worse than Claude Code's own); bounded would fail.
		Policy: retain.PolicyLegacy, Compress: h.opts.Compress,
		ReadMore: retain.ReadMoreShell, Via: "hook", Note: note,
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
	return res, "", nil
}

func (h *handler) bash() (Answer, error) {
	var resp bashResponse
	if err := json.Unmarshal(h.in.ToolResponse, &resp); err != nil || resp.Stdout == nil {
		return Answer{}, errors.New("the Bash tool_response has no stdout")
	}
	if resp.IsImage {
		return Answer{Reason: "an image: shown as is"}, nil
	}
	var value io.Reader = strings.NewReader(*resp.Stdout)
	if p := resp.PersistedOutputPath; p != "" {
		// Claude Code cut stdout and wrote the whole output here: read
		// that, never the cut copy, and never block on or follow
		// something that is not a plain file.
		if !filepath.IsAbs(p) {
			return Answer{}, fmt.Errorf("persistedOutputPath %q is not absolute", p)
		}
		f, err := fsx.Open(p)
		if err != nil {
			return Answer{}, fmt.Errorf("reading the whole output: %v", err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return Answer{}, err
		}
		if m := h.opts.Limits.Effective().MaxValueSize; m > 0 && fi.Size() > m {
			return Answer{Reason: fmt.Sprintf("the output's %d bytes exceed max-value-size %d: shown as is", fi.Size(), m)}, nil
		}
		value = io.LimitReader(f, fi.Size())
	}
	res, reason, err := h.retain(value, h.in.ToolUseID, retain.Meta{Tool: h.in.ToolName, TimedOut: resp.Interrupted}, "")
	if res == nil {
		return Answer{Reason: reason}, err
	}
	// stderr: kept as it is when small; a large one is retained too (its
	// own value, call id TOOL_USE_ID-stderr) and shown as its stub. When
	// that fails it is kept whole: nothing Claude Code would show is lost.
	stderr := resp.Stderr
	if int64(len(stderr)) > h.opts.Limits.Effective().Threshold && h.opts.Limits.Effective().Threshold > 0 {
		if r, _, err := h.retain(strings.NewReader(stderr), h.in.ToolUseID+"-stderr", retain.Meta{Tool: h.in.ToolName + " stderr", TimedOut: resp.Interrupted}, ""); err == nil && r != nil {
			stderr = r.Stub
		}
	}
	out := &bashOutput{Stdout: res.Stub, Stderr: stderr, Interrupted: resp.Interrupted}
	return answer(hookOutput{HookEventName: "PostToolUse", UpdatedToolOutput: out}, res.Descriptor)
}

func (h *handler) mcp() (Answer, error) {
	// The full result, as a string (often the JSON text of the structured
	// result) or, from some servers, as JSON.
	var text string
	if err := json.Unmarshal(h.in.ToolResponse, &text); err != nil {
		text = string(h.in.ToolResponse)
	}
	value, from := Payload([]byte(text))
	note := ""
	if from != "" {
		note = "[the value is " + from + ", decoded from the result's JSON]\n"
	}
	res, reason, err := h.retain(strings.NewReader(string(value)), h.in.ToolUseID, retain.Meta{Tool: h.in.ToolName}, note)
	if res == nil {
		return Answer{Reason: reason}, err
	}
	stub := res.Stub + note
	return answer(hookOutput{HookEventName: "PostToolUse", UpdatedMCPToolOutput: &stub}, res.Descriptor)
}

// hookOutput is the answer's hookSpecificOutput. For Bash the object form
// of updatedToolOutput is required (Claude Code drops a plain string); for
// an MCP tool a plain string reaches the model exactly (an object would be
// shown to it JSON-stringified).
type hookOutput struct {
	HookEventName        string      `json:"hookEventName"`
	UpdatedToolOutput    *bashOutput `json:"updatedToolOutput,omitempty"`
	UpdatedMCPToolOutput *string     `json:"updatedMCPToolOutput,omitempty"`
}

// bashOutput replaces the Bash tool's output. persistedOutputPath is never
// sent back: Claude Code would show its own copy of the output again.
type bashOutput struct {
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	Interrupted bool   `json:"interrupted"`
}

func answer(h hookOutput, d *retain.Descriptor) (Answer, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		HookSpecificOutput hookOutput `json:"hookSpecificOutput"`
	}{h}); err != nil {
		return Answer{}, err
	}
	return Answer{Output: []byte(b.String()), Descriptor: d}, nil
}

// DefaultRunsDir is the hook's store where none is configured:
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
