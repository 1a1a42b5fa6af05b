package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/retval/retval/pkg/retain"
)

// opencode's side of the seam. Its plugin (integrations/opencode/retval.js)
// hands retval what its tool.execute.after hook receives,
//
//	{"input": {"tool", "sessionID", "callID"}, "output": {"output", "metadata": {"outputPath"}, "content", ...}}
//
// and applies the answer, {"output": STUB} for a built-in tool or
// {"content": BLOCKS} for an MCP tool, to the output object. The model
// reads more with the stub's shell command, run by its bash tool.

func init() { register(opencode{}) }

type opencode struct{}

func (opencode) Name() string              { return "opencode" }
func (opencode) ReadMore() retain.ReadMore { return retain.ReadMoreShell }
func (opencode) Settings() *Settings       { return nil } // the plugin is a file to copy

// Opencode answers one tool.execute.after call of the opencode plugin,
// read from in (see the package's opencode.go for the format).
func Opencode(in io.Reader, o Options) (Answer, error) { return Run(opencode{}, in, o) }

type opencodeInput struct {
	Input struct {
		Tool      string `json:"tool"`
		SessionID string `json:"sessionID"`
		CallID    string `json:"callID"`
	} `json:"input"`
	Output struct {
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

// opencodeAnswer replaces members of the output object.
type opencodeAnswer struct {
	Output  *string           `json:"output,omitempty"`
	Content []json.RawMessage `json:"content,omitempty"`
}

// shellMetadata is the block opencode's shell tool adds after a command's
// output (exit reasons, timeouts): it is not the output, and it stays
// after the stub.
var shellMetadata = regexp.MustCompile(`(?s)\n\n<shell_metadata>\n.*</shell_metadata>\z`)

func (opencode) Answer(h *Hook, b []byte) (Answer, error) {
	var in opencodeInput
	if err := json.Unmarshal(b, &in); err != nil {
		return Answer{}, fmt.Errorf("the plugin's input is not a JSON object: %v", err)
	}
	call := Call{Run: in.Input.SessionID, ID: in.Input.CallID, Tool: in.Input.Tool}
	if call.Run == "" || call.ID == "" {
		return Answer{}, errors.New("the plugin's input lacks sessionID or callID")
	}
	out := in.Output
	switch {
	case out.Content != nil:
		// An MCP tool: opencode shows the model its content blocks (text
		// joined, images attached) and nothing else of the result.
		content, kept, reason, err := h.Blocks(call, out.Content)
		if kept == nil {
			return Answer{Reason: reason}, err
		}
		return opencodeAnswerOf(opencodeAnswer{Content: content}, kept.Descriptor)
	case out.Output != nil:
		value := *out.Output
		trailer := shellMetadata.FindString(value)
		value = value[:len(value)-len(trailer)]
		shown, reason, err := h.Shell(call, Shell{Stdout: value, Saved: out.Metadata.OutputPath, SavedAs: "metadata.outputPath"})
		if shown == nil {
			return Answer{Reason: reason}, err
		}
		s := shown.Stdout + trailer
		return opencodeAnswerOf(opencodeAnswer{Output: &s}, shown.Descriptor)
	}
	return Answer{Reason: "an output with neither output nor content: shown as is"}, nil
}

func opencodeAnswerOf(a opencodeAnswer, d *retain.Descriptor) (Answer, error) {
	b, err := encode(a)
	return Answer{Output: b, Descriptor: d}, err
}
