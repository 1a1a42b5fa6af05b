package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/expand"
)

// codexPreInput is a Codex PreToolUse input (Claude Code's format).
func codexPreInput(t *testing.T, tool string, input any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "sess", "turn_id": "t1", "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_use_id": "call_9", "tool_input": input, "permission_mode": "default"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runCodex(t *testing.T, in string, o Options) preAnswer {
	t.Helper()
	agent, _ := Lookup("codex")
	ans, err := Run(agent, strings.NewReader(in), o)
	if err != nil {
		t.Fatal(err)
	}
	var a preAnswer
	if len(ans.Output) > 0 {
		if err := json.Unmarshal(ans.Output, &a); err != nil {
			t.Fatalf("%v: %s", err, ans.Output)
		}
	}
	return a
}

// Codex takes a rewritten input only with "allow": an MCP tool's
// references are expanded with it; the shell's only with the user's
// opt-in; a failing reference denies.
func TestCodexPreToolUse(t *testing.T) {
	o := storeOf(t)
	a := runCodex(t, codexPreInput(t, "mcp__fs__write_file", map[string]any{"path": "/x", "content": expand.Prefix + `{"$ref": "v1", "lines": [3, 4]}`}), o).HookSpecificOutput
	if a.PermissionDecision == nil || *a.PermissionDecision != "allow" || string(a.UpdatedInput) != `{"path": "/x", "content": "3\n4\n"}` && string(a.UpdatedInput) != `{"content":"3\n4\n","path":"/x"}` {
		t.Errorf("mcp: %+v %s", a, a.UpdatedInput)
	}
	if !strings.HasPrefix(a.AdditionalContext, "[retval expanded /content: 4 bytes") {
		t.Errorf("mcp summary %q", a.AdditionalContext)
	}
	shell := codexPreInput(t, "Bash", map[string]any{"command": expand.Prefix + `{"$concat": ["printf %s ", {"$ref": "v1", "lines": [7, 7]}]}`})
	if a := runCodex(t, shell, o).HookSpecificOutput; a.PermissionDecision != nil || len(a.UpdatedInput) > 0 {
		t.Errorf("shell without the opt-in was rewritten: %+v", a)
	}
	o.ExpandShell = true
	a = runCodex(t, shell, o).HookSpecificOutput
	if a.PermissionDecision == nil || *a.PermissionDecision != "allow" || string(a.UpdatedInput) != `{"command":"printf %s 7\n"}` {
		t.Errorf("shell with --expand-shell: %+v %s", a, a.UpdatedInput)
	}
	bad := codexPreInput(t, "mcp__fs__write_file", map[string]any{"content": expand.Prefix + `{"$ref": "nope"}`})
	if a := runCodex(t, bad, o).HookSpecificOutput; a.PermissionDecision == nil || *a.PermissionDecision != "deny" ||
		!strings.Contains(a.PermissionDecisionReason, `at "/content"`) || !strings.Contains(a.PermissionDecisionReason, "(unknown_reference)") {
		t.Errorf("bad reference: %+v", a)
	}
}

// --wrap-shell runs the shell's command through retval exec in the
// session's run, under the call's id; a retval command is left alone.
func TestCodexWrapShell(t *testing.T) {
	o := storeOf(t)
	o.WrapShell, o.Exe = true, "/opt/retval dir/retval"
	a := runCodex(t, codexPreInput(t, "Bash", map[string]any{"command": "seq 1 100000 | grep 7", "timeout_ms": 1000}), o).HookSpecificOutput
	var in struct {
		Command   string `json:"command"`
		TimeoutMS int    `json:"timeout_ms"`
	}
	json.Unmarshal(a.UpdatedInput, &in)
	want := "'/opt/retval dir/retval' exec --runs-dir " + o.RunsDir + " --run sess --call call_9 --tool Bash -- bash -c 'seq 1 100000 | grep 7'"
	if a.PermissionDecision == nil || *a.PermissionDecision != "allow" || in.Command != want || in.TimeoutMS != 1000 {
		t.Errorf("wrapped %q (%+v), want %q", in.Command, a, want)
	}
	if a := runCodex(t, codexPreInput(t, "Bash", map[string]any{"command": "retval peek --run sess x --lines 1-9"}), o).HookSpecificOutput; len(a.UpdatedInput) > 0 {
		t.Errorf("a retval command was wrapped: %s", a.UpdatedInput)
	}
}

// A hook fed malformed input passes the call through and says why.
func TestCodexMalformed(t *testing.T) {
	agent, _ := Lookup("codex")
	for _, in := range []string{"garbage", `{"hook_event_name": "PreToolUse"}`, `{"hook_event_name": "PreToolUse", "session_id": "s", "tool_use_id": "c", "tool_name": "mcp__x__y", "tool_input": "not an object"}`} {
		ans, err := Run(agent, strings.NewReader(in), storeOf(t))
		if len(ans.Output) > 0 {
			t.Errorf("%s: answered %s (%v)", in, ans.Output, err)
		}
	}
}
