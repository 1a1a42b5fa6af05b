package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// Codex's side of the seam. Codex's command hooks take Claude Code's wire
// format (session_id, hook_event_name, tool_name, tool_input, tool_use_id;
// its shell tool is "Bash" with a string "command", an MCP tool
// "mcp__SERVER__TOOL"), but it accepts a rewritten input (updatedInput)
// only with permissionDecision "allow", which skips its approval prompt
// for that call. So the hook rewrites only where that grants nothing new:
// MCP tools, for which Codex's own approval policy still applies; the
// shell tool only where the user opted in at install (--expand-shell,
// --wrap-shell), knowing that each call so rewritten is approved. Its
// PostToolUse sees only Codex's own cut of an output, so retention
// through the hook is the --wrap-shell rewrite to retval exec (and the
// MCP proxy for MCP servers).

func init() { register(codexAgent{}) }

type codexAgent struct{}

func (codexAgent) Name() string              { return "codex" }
func (codexAgent) ReadMore() retain.ReadMore { return retain.ReadMoreShell }
func (codexAgent) Settings() *Settings       { return CodexSettings }

// CodexSettings is what retval adds to Codex's hooks.json: the PreToolUse
// hook for the shell and MCP tools (expanding references, and with
// --wrap-shell running commands through retval exec), the PostToolUse
// hook (flagging a call that ran with its references unexpanded) and
// SessionStart (teaching the form once).
var CodexSettings = &Settings{
	Agent: "Codex",
	Name:  "codex",
	Hooks: []HookEntry{{Event: "PreToolUse", Matcher: "Bash|mcp__.*"}, {Event: "PostToolUse", Matcher: "Bash|mcp__.*"},
		{Event: "SessionStart"}},
	UserFile:    CodexUserHooks,
	ProjectFile: func(dir string) (string, error) { return projectFile(dir, ".codex", "hooks.json") },
}

// CodexUserHooks is the user's Codex hooks file: $CODEX_HOME/hooks.json,
// by default ~/.codex/hooks.json.
func CodexUserHooks() (string, error) {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "hooks.json"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory: set HOME or CODEX_HOME, or use --project DIR")
	}
	return filepath.Join(home, ".codex", "hooks.json"), nil
}

func (codexAgent) Answer(h *Hook, b []byte) (Answer, error) {
	// tool_response, which may be megabytes and is not read, is neither
	// decoded nor copied (see decodeMembers).
	var in Input
	if _, ok := decodeMembers(b, &in); !ok {
		if err := json.Unmarshal(b, &in); err != nil {
			return Answer{}, fmt.Errorf("the hook input is not a JSON object: %v", err)
		}
	}
	call := Call{Run: in.SessionID, ID: in.ToolUseID, Tool: in.ToolName}
	switch in.HookEventName {
	case "SessionStart":
		return codexAnswer(hookOutput{HookEventName: "SessionStart", AdditionalContext: expand.Instructions})
	case "PreToolUse":
		if in.SessionID == "" || in.ToolUseID == "" {
			return Answer{}, errors.New("the hook input lacks session_id or tool_use_id")
		}
		return codexPre(h, call, in.ToolInput)
	case "PostToolUse":
		if paths := expand.Unexpanded(in.ToolInput); len(paths) > 0 {
			return codexAnswer(hookOutput{HookEventName: "PostToolUse", AdditionalContext: unexpandedNote(paths)})
		}
		return Answer{Reason: "Codex hands a PostToolUse hook its own cut of the output: nothing to retain (see --wrap-shell)"}, nil
	}
	return Answer{Reason: fmt.Sprintf("a %q hook input: only SessionStart, PreToolUse and PostToolUse are answered", in.HookEventName)}, nil
}

// codexPre answers PreToolUse: an MCP tool's references are expanded;
// the shell's only as the user opted in. Any rewrite comes with "allow",
// which Codex requires for it.
func codexPre(h *Hook, call Call, input json.RawMessage) (Answer, error) {
	if len(input) == 0 {
		return Answer{Reason: "no tool_input"}, nil
	}
	mcp := strings.HasPrefix(call.Tool, "mcp__")
	shell := call.Tool == "Bash"
	if !mcp && !(shell && (h.opts.ExpandShell || h.opts.WrapShell)) {
		return Answer{Reason: fmt.Sprintf("tool %q: nothing to do (the shell's input is rewritten only with --expand-shell or --wrap-shell)", call.Tool)}, nil
	}
	doc := []byte(input)
	var summary string
	if mcp || h.opts.ExpandShell {
		in, err := h.Expand(call, input, expand.InputOptions{Objects: mcp})
		if retain.CodeOf(err) == retain.CodeExpandRefused {
			return codexAnswer(hookOutput{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: refusalText(err)})
		}
		if err != nil {
			return Answer{}, err
		}
		doc, summary = in.Doc, in.Summary()
	}
	if shell && h.opts.WrapShell {
		wrapped, err := h.wrapShell(call, doc)
		if err != nil {
			return Answer{}, err
		}
		doc = wrapped
	}
	if string(doc) == string(input) {
		return Answer{Reason: "nothing to rewrite: run as it is"}, nil
	}
	return codexAnswer(hookOutput{HookEventName: "PreToolUse", PermissionDecision: "allow", UpdatedInput: doc, AdditionalContext: summary})
}

// wrapShell rewrites a shell call's command to run through retval exec
// in the session's run, under the call's id, so that its whole output is
// retained and the model sees the stub. A command that already runs
// retval is left as it is.
func (h *Hook) wrapShell(call Call, input []byte) ([]byte, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(input, &args); err != nil {
		return nil, fmt.Errorf("the shell's tool_input is not an object: %v", err)
	}
	var command string
	if err := json.Unmarshal(args["command"], &command); err != nil {
		return nil, errors.New(`the shell's tool_input has no string "command"`)
	}
	if first, _, _ := strings.Cut(strings.TrimSpace(command), " "); first == "retval" || first == h.opts.Exe || strings.TrimSpace(command) == "" {
		return input, nil
	}
	if h.opts.Exe == "" {
		return nil, errors.New("cannot tell where this retval is, to run the command through it")
	}
	where := " --store " + retain.ShellQuote(h.opts.RunsDir)
	if !retain.IsObjectStore(h.opts.RunsDir) {
		dir, err := filepath.Abs(h.opts.RunsDir)
		if err != nil {
			return nil, err
		}
		where = " --runs-dir " + retain.ShellQuote(dir)
	}
	wrapped := retain.ShellQuote(h.opts.Exe) + " exec" + where + " --run " + retain.ShellQuote(call.Run) +
		" --call " + retain.ShellQuote(call.ID) + " --tool " + retain.ShellQuote(call.Tool) + " -- bash -c " + retain.ShellQuote(command)
	b, err := json.Marshal(wrapped)
	if err != nil {
		return nil, err
	}
	args["command"] = b
	return json.Marshal(args)
}

func codexAnswer(o hookOutput) (Answer, error) { return claudeAnswer(o, nil) }
