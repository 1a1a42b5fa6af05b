package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// preInput is a Claude Code PreToolUse hook input.
func preInput(t *testing.T, tool string, input any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "sess", "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_use_id": "toolu_9", "tool_input": input})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// preAnswer is a PreToolUse answer.
type preAnswer struct {
	HookSpecificOutput struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       *string         `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// storeOf makes the store of session "sess" holding value "v1" (lines
// 1-10000 of numbers) and returns hook options on it.
func storeOf(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	s := retain.Open(dir)
	if _, err := s.Retain(strings.NewReader(numbers(10000)), nilWriter{}, retain.RetainOptions{Run: "sess", Call: "v1"}); err != nil {
		t.Fatal(err)
	}
	return Options{RunsDir: dir}
}

type nilWriter struct{}

func (nilWriter) Write(p []byte) (int, error) { return len(p), nil }

// A Write whose content is "$expand:" of new lines and a range of a
// retained value gets updatedInput with the exact text, no permission
// decision (Claude Code's rules judge the expanded call) and the bytes and
// digest of what was expanded.
func TestPreToolUseExpandsWrite(t *testing.T) {
	o := storeOf(t)
	content := expand.Prefix + `{"$concat": ["// new\n", {"$ref": "v1", "lines": [2100, 2102]}]}`
	ans, err := ClaudeCode(strings.NewReader(preInput(t, "Write", map[string]any{"file_path": "/tmp/x.go", "content": content})), o)
	if err != nil {
		t.Fatal(err)
	}
	var a preAnswer
	if err := json.Unmarshal(ans.Output, &a); err != nil {
		t.Fatalf("%v: %s", err, ans.Output)
	}
	h := a.HookSpecificOutput
	want := "// new\n2100\n2101\n2102\n"
	var in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(h.UpdatedInput, &in); err != nil || in.Content != want || in.FilePath != "/tmp/x.go" {
		t.Fatalf("updatedInput %s (%v)", h.UpdatedInput, err)
	}
	if h.HookEventName != "PreToolUse" || h.PermissionDecision != nil {
		t.Errorf("event %q, decision %v: the hook must grant nothing", h.HookEventName, h.PermissionDecision)
	}
	if wantCtx := "[retval expanded /content: 22 bytes, sha256:" + sha(want) + "]"; h.AdditionalContext != wantCtx {
		t.Errorf("additionalContext %q, want %q", h.AdditionalContext, wantCtx)
	}
	// The read log counts what the reference saved.
	var refs []retain.Read
	retain.Open(o.RunsDir).ScanReads("sess", func(r *retain.Read) {
		if r.Op == retain.OpReference {
			refs = append(refs, *r)
		}
	})
	if len(refs) != 1 || refs[0].Via != "hook claude-code" || refs[0].Tool != "Write" || refs[0].Size != int64(len(want)) {
		t.Errorf("read log %+v", refs)
	}
}

// A reference that fails denies the call, naming every failure; a call
// without references, or a bare object in a built-in tool's input, gets
// no answer; an MCP tool's bare object is expanded.
func TestPreToolUseDeniesAndPasses(t *testing.T) {
	o := storeOf(t)
	bad := map[string]any{"file_path": "/tmp/x", "content": expand.Prefix + `{"$concat": ["a", {"$ref": "v1", "lines": [20000, 20001]}, {"$ref": "nope"}]}`}
	ans, err := ClaudeCode(strings.NewReader(preInput(t, "Write", bad)), o)
	if err != nil {
		t.Fatal(err)
	}
	var a preAnswer
	json.Unmarshal(ans.Output, &a)
	h := a.HookSpecificOutput
	if h.PermissionDecision == nil || *h.PermissionDecision != "deny" || len(h.UpdatedInput) > 0 ||
		!strings.Contains(h.PermissionDecisionReason, `at "/content/$concat/1"`) || !strings.Contains(h.PermissionDecisionReason, "(invalid_range)") ||
		!strings.Contains(h.PermissionDecisionReason, `at "/content/$concat/2"`) || !strings.Contains(h.PermissionDecisionReason, "(unknown_reference)") {
		t.Errorf("answer %s", ans.Output)
	}
	for _, c := range []struct {
		tool  string
		input any
	}{
		{"Bash", map[string]any{"command": "echo '$expand: not at the start'"}},
		{"Write", map[string]any{"file_path": "/x", "content": map[string]any{"$ref": "v1"}}},
	} {
		ans, err := ClaudeCode(strings.NewReader(preInput(t, c.tool, c.input)), o)
		if err != nil || len(ans.Output) > 0 {
			t.Errorf("%s %v: answered %s (%v)", c.tool, c.input, ans.Output, err)
		}
	}
	ans, err = ClaudeCode(strings.NewReader(preInput(t, "mcp__fs__write", map[string]any{"text": map[string]any{"$ref": "v1", "lines": []int{1, 2}}})), o)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(ans.Output, &a)
	if string(a.HookSpecificOutput.UpdatedInput) != `{"text":"1\n2\n"}` {
		t.Errorf("mcp: %s", ans.Output)
	}
}

// SessionStart teaches the form once; PostToolUse flags a call that ran
// with its references unexpanded.
func TestSessionStartAndUnexpanded(t *testing.T) {
	o := storeOf(t)
	ans, err := ClaudeCode(strings.NewReader(`{"session_id":"sess","hook_event_name":"SessionStart","source":"startup"}`), o)
	if err != nil {
		t.Fatal(err)
	}
	var a preAnswer
	json.Unmarshal(ans.Output, &a)
	if a.HookSpecificOutput.HookEventName != "SessionStart" || a.HookSpecificOutput.AdditionalContext != expand.Instructions {
		t.Errorf("SessionStart: %s", ans.Output)
	}
	post, _ := json.Marshal(map[string]any{"session_id": "sess", "hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "t",
		"tool_input": map[string]any{"file_path": "/x", "content": expand.Prefix + `{"$ref":"v1"}`}, "tool_response": map[string]any{"type": "create"}})
	ans, err = ClaudeCode(strings.NewReader(string(post)), o)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(ans.Output, &a)
	if !strings.Contains(a.HookSpecificOutput.AdditionalContext, `"/content" still beginning with $expand:`) {
		t.Errorf("PostToolUse: %s", ans.Output)
	}
}
