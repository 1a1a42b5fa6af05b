package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/mcpresult"
	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// Claude Code's side of the seam: its PostToolUse hook input and answer,
// its settings files, its allow-rule syntax. The model reads more with the
// stub's shell command, run by its Bash tool.

func init() { register(claudeCode{}) }

type claudeCode struct{}

func (claudeCode) Name() string              { return "claude-code" }
func (claudeCode) ReadMore() retain.ReadMore { return retain.ReadMoreShell }
func (claudeCode) Settings() *Settings       { return ClaudeCodeSettings }

// ClaudeCode reads one Claude Code PostToolUse hook input from in and
// answers it: a Bash result over the threshold becomes
// {"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":STUB,"stderr":…,"interrupted":…}}},
// an MCP tool's (tool_name mcp__SERVER__TOOL) one with
// "updatedMCPToolOutput":STUB, a plain string. Anything else gets no
// Output and a Reason; a failure is an error, and then too the caller
// prints nothing, so Claude Code shows its own output.
func ClaudeCode(in io.Reader, o Options) (Answer, error) { return Run(claudeCode{}, in, o) }

// Input is the part of a Claude Code PostToolUse hook input the hook reads.
type Input struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolResponse  json.RawMessage `json:"tool_response"`
}

// bashResponse is the Bash tool's tool_response. Claude Code merges the
// command's stderr into stdout; stderr is kept for what it may hold.
type bashResponse struct {
	// stdout is read from the input's bytes (claudeBash).
	Stderr      string `json:"stderr"`
	Interrupted bool   `json:"interrupted"`
	IsImage     bool   `json:"isImage"`
	// PersistedOutputPath names the file holding the whole output when
	// Claude Code cut stdout (to 30,000 characters).
	PersistedOutputPath string `json:"persistedOutputPath"`
}

// claudeHead is what the hook reads of its input besides tool_response.
type claudeHead struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

func (claudeCode) Answer(h *Hook, b []byte) (Answer, error) {
	// tool_response, which may be megabytes, is taken as a slice of the
	// input, not decoded into a copy of it.
	var head claudeHead
	m, ok := decodeMembers(b, &head)
	if !ok {
		head = claudeHead{}
		if err := json.Unmarshal(b, &head); err != nil {
			return Answer{}, fmt.Errorf("the hook input is not a JSON object: %v", err)
		}
		m, _ = mcpresult.Members(b)
	}
	in := Input{SessionID: head.SessionID, HookEventName: head.HookEventName, ToolName: head.ToolName,
		ToolUseID: head.ToolUseID, ToolInput: head.ToolInput, ToolResponse: m["tool_response"]}
	call := Call{Run: in.SessionID, ID: in.ToolUseID, Tool: in.ToolName}
	switch in.HookEventName {
	case "PreToolUse":
		return claudePre(h, call, in.ToolInput)
	case "SessionStart":
		return claudeAnswer(hookOutput{HookEventName: "SessionStart", AdditionalContext: expand.Instructions}, nil)
	case "", "PostToolUse":
	default:
		return Answer{Reason: fmt.Sprintf("a %s hook input: only SessionStart, PreToolUse and PostToolUse are answered", in.HookEventName)}, nil
	}
	if paths := expand.Unexpanded(in.ToolInput); len(paths) > 0 {
		// The fail-open case: the call ran with its references as the
		// model wrote them (no PreToolUse expanded them).
		return claudeAnswer(hookOutput{HookEventName: "PostToolUse", AdditionalContext: unexpandedNote(paths)}, nil)
	}
	switch {
	case len(in.ToolResponse) == 0:
		return Answer{}, errors.New("the hook input has no tool_response")
	case in.SessionID == "" || in.ToolUseID == "":
		return Answer{}, errors.New("the hook input lacks session_id or tool_use_id")
	case in.ToolName == "Bash":
		return claudeBash(h, call, in.ToolResponse)
	case strings.HasPrefix(in.ToolName, "mcp__"):
		return claudeMCP(h, call, in.ToolResponse)
	}
	return Answer{Reason: fmt.Sprintf("tool %q is not one the hook handles (Bash, mcp__*)", in.ToolName)}, nil
}

func claudeBash(h *Hook, call Call, raw json.RawMessage) (Answer, error) {
	// stdout, which may be megabytes, is read from its JSON in the input
	// as it is retained: never decoded into a copy.
	var resp bashResponse
	m, ok := decodeFields(raw, &resp)
	if !ok {
		m, ok = mcpresult.Members(raw)
		ok = ok && json.Unmarshal(raw, &resp) == nil
	}
	stdout := m["stdout"]
	if !ok || len(stdout) == 0 || stdout[0] != '"' {
		return Answer{}, errors.New("the Bash tool_response has no stdout")
	}
	if resp.IsImage {
		return Answer{Reason: "an image: shown as is"}, nil
	}
	shown, reason, err := h.Shell(call, Shell{StdoutJSON: stdout, Saved: resp.PersistedOutputPath, SavedAs: "persistedOutputPath",
		Stderr: resp.Stderr, Interrupted: resp.Interrupted})
	if shown == nil {
		return Answer{Reason: reason}, err
	}
	// persistedOutputPath is never sent back: Claude Code would show its
	// own copy of the output again.
	out := &bashOutput{Stdout: shown.Stdout, Stderr: shown.Stderr, Interrupted: resp.Interrupted}
	return claudeAnswer(hookOutput{HookEventName: "PostToolUse", UpdatedToolOutput: out}, shown.Descriptor)
}

func claudeMCP(h *Hook, call Call, raw json.RawMessage) (Answer, error) {
	// The full result, as a string (often the JSON text of the structured
	// result) or, from some servers, as JSON.
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		text = string(raw)
	}
	value, from := Payload([]byte(text))
	note := ""
	if from != "" {
		note = "[the value is " + from + ", decoded from the result's JSON]\n"
	}
	kept, reason, err := h.Retain(strings.NewReader(string(value)), Value{Call: call, Note: note})
	if kept == nil {
		return Answer{Reason: reason}, err
	}
	return claudeAnswer(hookOutput{HookEventName: "PostToolUse", UpdatedMCPToolOutput: &kept.Stub}, kept.Descriptor)
}

// claudePre answers PreToolUse: a call whose input holds references
// ($expand: strings; for an MCP tool, whose input Claude Code does not
// check before the hook, bare node objects too) gets updatedInput, the
// expanded input, with no permission decision — Claude Code's own rules
// then judge the expanded call, so the hook grants nothing — and
// additionalContext, the bytes and SHA-256 of each expanded field. A
// reference that fails denies the call, naming each failure. Any other
// call: no output, Claude Code runs it as it is.
func claudePre(h *Hook, call Call, input json.RawMessage) (Answer, error) {
	if len(input) == 0 {
		return Answer{Reason: "no tool_input"}, nil
	}
	in, err := h.Expand(call, input, expand.InputOptions{Objects: strings.HasPrefix(call.Tool, "mcp__")})
	if retain.CodeOf(err) == retain.CodeExpandRefused {
		return claudeAnswer(hookOutput{HookEventName: "PreToolUse", PermissionDecision: "deny",
			PermissionDecisionReason: refusalText(err)}, nil)
	}
	if err != nil {
		return Answer{}, err
	}
	if len(in.Fields) == 0 {
		return Answer{Reason: "no $expand: reference in the tool input: run as it is"}, nil
	}
	return claudeAnswer(hookOutput{HookEventName: "PreToolUse", UpdatedInput: json.RawMessage(in.Doc),
		AdditionalContext: in.Summary()}, nil)
}

// hookOutput is the answer's hookSpecificOutput. For Bash the object form
// of updatedToolOutput is required (Claude Code drops a plain string); for
// an MCP tool a plain string reaches the model exactly (an object would be
// shown to it JSON-stringified).
type hookOutput struct {
	HookEventName        string      `json:"hookEventName"`
	UpdatedToolOutput    *bashOutput `json:"updatedToolOutput,omitempty"`
	UpdatedMCPToolOutput *string     `json:"updatedMCPToolOutput,omitempty"`
	// PreToolUse: the expanded input, or a denial.
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	// AdditionalContext reaches the model as a system message.
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// bashOutput replaces the Bash tool's output.
type bashOutput struct {
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	Interrupted bool   `json:"interrupted"`
}

func claudeAnswer(h hookOutput, d *retain.Descriptor) (Answer, error) {
	b, err := encode(struct {
		HookSpecificOutput hookOutput `json:"hookSpecificOutput"`
	}{h})
	return Answer{Output: b, Descriptor: d}, err
}

// Matcher is the tools the PostToolUse entry is for: Bash and every MCP
// tool, whose outputs it retains, and the tools whose input may hold
// references, so that one run with its references unexpanded is flagged.
const Matcher = "Bash|mcp__.*|Write|Edit|MultiEdit|NotebookEdit"

// PreMatcher is the tools the PreToolUse entry is for: those whose input
// may hold references. (Edit's old_string is checked against the file
// before the hook runs, so only its new_string can be one.)
const PreMatcher = "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"

// Allowed are the permissions.allow entries that let the model read
// values through its Bash tool without a permission prompt.
var Allowed = []string{"Bash(retval peek:*)", "Bash(retval resolve:*)"}

// ClaudeCodeSettings is what retval adds to a Claude Code settings file:
// the PostToolUse hook for Bash and MCP tools, and the allow entries for
// the model's read commands, which always go into the user's file: Claude
// Code ignores a project's permissions.allow until the folder is trusted
// (while it runs the project's hooks regardless).
var ClaudeCodeSettings = &Settings{
	Agent:       "Claude Code",
	Name:        "claude-code",
	Hooks:       []HookEntry{{Event: "PostToolUse", Matcher: Matcher}, {Event: "PreToolUse", Matcher: PreMatcher}, {Event: "SessionStart"}},
	AllowAt:     []string{"permissions", "allow"},
	Allowed:     Allowed,
	AllowedFor:  "retval peek and retval resolve",
	AllowInUser: "Claude Code ignores a project's permissions.allow until the folder is trusted",
	UserFile:    UserSettings,
	ProjectFile: ProjectSettings,
}

// UserSettings is the user's Claude Code settings file:
// $CLAUDE_CONFIG_DIR/settings.json when that is set, else
// ~/.claude/settings.json.
func UserSettings() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Abs(filepath.Join(d, "settings.json"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory: set HOME, or use --project DIR")
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// ProjectSettings is the settings file of the project in dir.
func ProjectSettings(dir string) (string, error) { return projectFile(dir, ".claude", "settings.json") }

// Command is the hook's command line for the retval binary at exe.
func Command(exe string) string { return ClaudeCodeSettings.Command(exe) }

// Install adds the hook entry
//
//	{"matcher":"Bash|mcp__.*","hooks":[{"type":"command","command":COMMAND}]}
//
// to hooks.PostToolUse in o.Hooks and the Allowed entries to
// permissions.allow in o.Allow (see Settings.Install).
func Install(o InstallOptions) ([]Change, error) { return ClaudeCodeSettings.Install(o) }

// Uninstall removes what Install added (see Settings.Uninstall).
func Uninstall(o UninstallOptions) ([]Change, error) { return ClaudeCodeSettings.Uninstall(o) }

// refusalText is a refused expansion as one message: every failing
// reference with its path in the input and its code.
func refusalText(err error) string {
	var r *expand.Refusal
	if !errors.As(err, &r) {
		return "retval: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("retval could not expand the references of this call; nothing ran:")
	for _, f := range r.Failures {
		fmt.Fprintf(&b, " at %q: %s (%s);", f.Path, f.Message, f.Code)
	}
	b.WriteString(" correct them and call again")
	return b.String()
}

// unexpandedNote tells the model that a call ran with its references as
// written.
func unexpandedNote(paths []string) string {
	return fmt.Sprintf("retval: the tool received %s still beginning with $expand: — no hook expanded the reference, so the text was used as written (a file may now hold it literally); check the retval hook is installed and trusted, then redo the call", strings.Join(quoteAll(paths), ", "))
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}
