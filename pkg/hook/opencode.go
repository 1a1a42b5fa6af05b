package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// opencode's side of the seam. Its plugin (integrations/opencode/retval.js)
// hands retval what its hooks receive, one JSON object on stdin, and
// applies the answer:
//
//   - tool.execute.after (the object has no "event", or
//     "event": "tool.execute.after"):
//     {"input": {"tool", "sessionID", "callID", "args"}, "output": {"output", "metadata": {"outputPath"}, "content", ...}},
//     answered {"output": STUB} for a built-in tool or {"content": BLOCKS}
//     for an MCP tool, the members of the output object to replace, and
//     {"note": TEXT} when an argument still begins with $expand: (the
//     call ran with a reference as the model wrote it), which the plugin
//     appends to what the model sees. The model reads more with the
//     stub's shell command, run by its bash tool.
//   - tool.execute.before ("event": "tool.execute.before"):
//     {"input": {"tool", "sessionID", "callID"}, "output": {"args"}},
//     answered {"args": EXPANDED, "summary": LINE} when the arguments hold
//     references ($expand: strings, bare {"$ref"}/{"$concat"} objects:
//     opencode checks a tool's arguments only after this hook), which the
//     plugin puts in place of the arguments' members and whose summary it
//     appends to the result; or {"refused": TEXT}, naming each failing
//     reference, which the plugin throws so that the call does not run.
//     No answer: the call runs as it is.
//   - experimental.chat.system.transform ("event": "system"): answered
//     {"system": TEXT}, the reference form taught once, which the plugin
//     adds to the system prompt.

func init() { register(opencode{}) }

type opencode struct{}

func (opencode) Name() string              { return "opencode" }
func (opencode) ReadMore() retain.ReadMore { return retain.ReadMoreShell }
func (opencode) Settings() *Settings       { return nil } // the plugin is a file to copy

// Opencode answers one tool.execute.after call of the opencode plugin,
// read from in (see the package's opencode.go for the format).
func Opencode(in io.Reader, o Options) (Answer, error) { return Run(opencode{}, in, o) }

type opencodeInput struct {
	Event string `json:"event"`
	Input struct {
		Tool      string `json:"tool"`
		SessionID string `json:"sessionID"`
		CallID    string `json:"callID"`
		// Args are the arguments the tool ran with (after): absent when
		// the plugin expanded them itself, in its before hook.
		Args json.RawMessage `json:"args"`
	} `json:"input"`
	Output struct {
		// Args are the arguments the model wrote (before).
		Args json.RawMessage `json:"args"`
		// Output is a built-in tool's output, cut by opencode when it
		// saved the whole output to Metadata.OutputPath.
		Output   *string `json:"output"`
		Metadata struct {
			OutputPath string `json:"outputPath"`
		} `json:"metadata"`
		// Content is an MCP tool's result, as the server sent it.
		Content []json.RawMessage `json:"content"`
	} `json:"output"`
}

// opencodeAnswer replaces members of the output object (after), or of the
// arguments (before).
type opencodeAnswer struct {
	Output  *string           `json:"output,omitempty"`
	Content []json.RawMessage `json:"content,omitempty"`
	// Note is appended to what the model sees of the result.
	Note string `json:"note,omitempty"`

	Args    json.RawMessage `json:"args,omitempty"`
	Summary string          `json:"summary,omitempty"`
	Refused string          `json:"refused,omitempty"`

	System string `json:"system,omitempty"`
}

// shellMetadata is the block opencode's shell tool adds after a command's
// output (exit reasons, timeouts): it is not the output, and it stays
// after the stub.
var shellMetadata = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\n\n<shell_metadata>\n.*</shell_metadata>\z`) })

func (opencode) Answer(h *Hook, b []byte) (Answer, error) {
	// An MCP tool's content blocks and the arguments, which may be
	// megabytes, are taken as slices of the input, not copied (see
	// decodeMembers).
	var in opencodeInput
	if _, ok := decodeMembers(b, &in); !ok {
		if err := json.Unmarshal(b, &in); err != nil {
			return Answer{}, fmt.Errorf("the plugin's input is not a JSON object: %v", err)
		}
	}
	if in.Event == "system" {
		return opencodeAnswerOf(opencodeAnswer{System: expand.Instructions}, nil)
	}
	call := Call{Run: in.Input.SessionID, ID: in.Input.CallID, Tool: in.Input.Tool}
	if call.Run == "" || call.ID == "" {
		return Answer{}, errors.New("the plugin's input lacks sessionID or callID")
	}
	switch in.Event {
	case "tool.execute.before":
		return opencodeBefore(h, call, in.Output.Args)
	case "", "tool.execute.after":
	default:
		return Answer{Reason: fmt.Sprintf("a %q event: only tool.execute.before, tool.execute.after and system are answered", in.Event)}, nil
	}
	var a opencodeAnswer
	if paths := expand.Unexpanded(in.Input.Args); len(paths) > 0 {
		// The fail-open case: the call ran with its references as the
		// model wrote them (no before hook expanded them).
		a.Note = unexpandedNote(paths)
	}
	d, reason, err := opencodeRetain(h, call, in, &a)
	if a.Output == nil && a.Content == nil && a.Note == "" {
		return Answer{Reason: reason}, err
	}
	// A note goes to the model even when retaining failed: the output is
	// then shown as it is, as on any failure, and the note after it.
	return opencodeAnswerOf(a, d)
}

// opencodeRetain retains a big result: a's Output (a built-in tool's) or
// Content (an MCP tool's) become what the model sees instead. Left unset,
// with the reason, when the result is shown as it is.
func opencodeRetain(h *Hook, call Call, in opencodeInput, a *opencodeAnswer) (*retain.Descriptor, string, error) {
	out := in.Output
	switch {
	case out.Content != nil:
		// An MCP tool: opencode shows the model its content blocks (text
		// joined, images attached) and nothing else of the result.
		content, kept, reason, err := h.Blocks(call, out.Content)
		if kept == nil {
			return nil, reason, err
		}
		a.Content = content
		return kept.Descriptor, "", nil
	case out.Output != nil:
		value := *out.Output
		trailer := shellMetadata().FindString(value)
		value = value[:len(value)-len(trailer)]
		shown, reason, err := h.Shell(call, Shell{Stdout: value, Saved: out.Metadata.OutputPath, SavedAs: "metadata.outputPath"})
		if shown == nil {
			return nil, reason, err
		}
		s := shown.Stdout + trailer
		a.Output = &s
		return shown.Descriptor, "", nil
	}
	return nil, "an output with neither output nor content: shown as is", nil
}

// opencodeBefore answers tool.execute.before: arguments that hold
// references are answered expanded, with the bytes and SHA-256 of each
// expanded field; a reference that fails refuses the call, naming each
// failure, and so does any failure to expand arguments that hold a
// $expand: string (run as written, the reference would be written into
// a file or run as a command literally). Anything else: no answer, the
// call runs as it is. opencode checks a tool's arguments against its
// schema after this hook, so bare node objects are references for every
// tool, built-in ones too.
func opencodeBefore(h *Hook, call Call, args json.RawMessage) (Answer, error) {
	if len(args) == 0 {
		return Answer{Reason: "no args"}, nil
	}
	in, err := h.Expand(call, args, expand.InputOptions{Objects: true})
	switch {
	case retain.CodeOf(err) == retain.CodeExpandRefused:
		return opencodeAnswerOf(opencodeAnswer{Refused: refusalText(err)}, nil)
	case err != nil && len(expand.Unexpanded(args)) > 0:
		return opencodeAnswerOf(opencodeAnswer{Refused: fmt.Sprintf("retval could not expand the references of this call; nothing ran: %v (%s)", err, retain.CodeOf(err))}, nil)
	case err != nil:
		return Answer{}, err
	case len(in.Fields) == 0:
		return Answer{Reason: "no $expand: reference in the arguments: run as they are"}, nil
	}
	return opencodeAnswerOf(opencodeAnswer{Args: in.Doc, Summary: in.Summary()}, nil)
}

func opencodeAnswerOf(a opencodeAnswer, d *retain.Descriptor) (Answer, error) {
	b, err := encode(a)
	return Answer{Output: b, Descriptor: d}, err
}
