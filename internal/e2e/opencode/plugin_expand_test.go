package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
	"github.com/retval/retval/pkg/expand"
)

// retainedNumbers has the plugin retain the lines 1-20000 (a bash result)
// as value call_seq of session ses_x in home's default store, and returns
// them.
func retainedNumbers(t *testing.T, home, retval string) string {
	t.Helper()
	seq := string(e2etest.SeqOutput(20000))
	got := callHook(t, home, retval, map[string]any{"tool": "bash", "sessionID": "ses_x", "callID": "call_seq"},
		map[string]any{"output": seq, "metadata": map[string]any{}})
	if s, _ := got["output"].(string); !strings.HasPrefix(s, "[retained #call_seq]") {
		t.Fatalf("the numbers were not retained: %.200q", s)
	}
	return seq
}

// The plugin with the real retval, hook after hook in one process: the
// before hook puts the expanded text in place of the arguments' members
// (the object opencode runs the tool with); the after hook appends the
// bytes and SHA-256 of what was expanded and keeps the arguments as the
// model wrote them in the result's metadata; the history transform puts
// them back, from memory and, in a new process (a resumed session), from
// the metadata; the system prompt gets the form.
func TestPluginExpands(t *testing.T) {
	home := t.TempDir()
	retval := builtRetval(t)
	retainedNumbers(t, home, retval)
	content := expand.Prefix + `{"$concat":["// new\n",{"$ref":"call_seq","lines":[2100,2102]}]}`
	written := map[string]any{"filePath": "/p/x.go", "content": content, "meta": map[string]any{"$ref": "call_seq", "lines": []int{5, 5}}}
	call := map[string]any{"tool": "write", "sessionID": "ses_x", "callID": "call_w"}
	want := "// new\n2100\n2101\n2102\n"
	summary := "[retval expanded /content: 22 bytes, sha256:" + e2etest.SHA([]byte(want)) + "; /meta: 2 bytes, sha256:" + e2etest.SHA([]byte("5\n")) + "]"
	// What opencode holds of the call once it ran: the expanded arguments.
	ranPart := func(metadata map[string]any) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"info": map[string]any{"role": "assistant"}, "parts": []any{
			map[string]any{"type": "text", "text": "hi"},
			map[string]any{"type": "tool", "callID": "call_w", "tool": "write", "state": map[string]any{"status": "completed",
				"input": map[string]any{"filePath": "/p/x.go", "content": want, "meta": "5\n"}, "output": "Wrote file successfully.", "metadata": metadata}},
			map[string]any{"type": "tool", "callID": "call_other", "tool": "bash", "state": map[string]any{"status": "completed",
				"input": map[string]any{"command": "ls"}, "output": "x", "metadata": map[string]any{}}},
		}}}}
	}
	r := runSteps(t, home, retval,
		step{"experimental.chat.system.transform", map[string]any{"sessionID": "ses_x"}, map[string]any{"system": []any{"You are a coder."}}},
		step{"tool.execute.before", call, map[string]any{"args": written}},
		step{"tool.execute.after", call, map[string]any{"title": "x.go", "output": "Wrote file successfully.", "metadata": map[string]any{"exists": false}}},
		step{"experimental.chat.messages.transform", map[string]any{}, ranPart(map[string]any{})},
	)
	if sys, _ := r[0].Output["system"].([]any); len(sys) != 2 || sys[1] != expand.Instructions {
		t.Errorf("the system prompt: %.300v", r[0].Output["system"])
	}
	if r[1].Threw != nil || r[1].Args["content"] != want || r[1].Args["meta"] != "5\n" || r[1].Args["filePath"] != "/p/x.go" {
		t.Fatalf("the arguments the tool runs with: %v (threw %v)", r[1].Args, r[1].Threw)
	}
	after := r[2].Output
	if after["output"] != "Wrote file successfully.\n\n"+summary {
		t.Errorf("the result: %q, want the summary %q after it", after["output"], summary)
	}
	meta, _ := after["metadata"].(map[string]any)
	kept, _ := meta["retval"].(map[string]any)
	if b, _ := json.Marshal(kept["input"]); meta["exists"] != false || string(b) != mustJSON(t, written) {
		t.Errorf("the metadata: %v", meta)
	}
	checkRestored(t, r[3].Output, content)

	// A new process (opencode resumed: --continue) knows the call only
	// from the metadata opencode stored.
	r = runSteps(t, home, retval, step{"experimental.chat.messages.transform", map[string]any{}, ranPart(meta)})
	checkRestored(t, r[0].Output, content)
}

// checkRestored asserts that messages (the transform's output) hold call_w
// as the model wrote it and the other call as it ran.
func checkRestored(t *testing.T, messages map[string]any, content string) {
	t.Helper()
	msgs, _ := messages["messages"].([]any)
	parts, _ := msgs[0].(map[string]any)["parts"].([]any)
	state, _ := parts[1].(map[string]any)["state"].(map[string]any)
	input, _ := state["input"].(map[string]any)
	if input["content"] != content || state["output"] != "Wrote file successfully." {
		t.Errorf("the history holds %.200v", state)
	}
	other, _ := parts[2].(map[string]any)["state"].(map[string]any)
	if in, _ := other["input"].(map[string]any); in["command"] != "ls" {
		t.Errorf("another call changed: %v", other)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A failing reference refuses the call: the hook throws, naming each
// failure, and the arguments are as the model wrote them. With retval
// missing, or answering nothing (off, or older than the plugin), a call
// with a $expand: argument is refused too, and any other call runs
// untouched.
func TestPluginRefuses(t *testing.T) {
	home := t.TempDir()
	retval := builtRetval(t)
	retainedNumbers(t, home, retval)
	bad := map[string]any{"filePath": "/p/bad.go", "content": expand.Prefix + `{"$concat":["x",{"$ref":"call_seq","lines":[30000,30001]},{"$ref":"call_nope"}]}`}
	call := map[string]any{"tool": "write", "sessionID": "ses_x", "callID": "call_bad"}
	r := runSteps(t, home, retval, step{"tool.execute.before", call, map[string]any{"args": bad}})[0]
	if r.Threw == nil {
		t.Fatalf("the bad call was not refused: %v", r.Args)
	}
	for _, w := range []string{`at "/content/$concat/1"`, "(invalid_range)", `at "/content/$concat/2"`, "(unknown_reference)"} {
		if !strings.Contains(*r.Threw, w) {
			t.Errorf("the refusal %q does not say %q", *r.Threw, w)
		}
	}

	dir := t.TempDir()
	silent := filepath.Join(dir, "silent")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := map[string]any{"command": "echo $HOME", "schema": map[string]any{"$ref": "#/x"}}
	for name, bin := range map[string]string{"missing": filepath.Join(dir, "no-retval"), "answering nothing": silent} {
		res := runSteps(t, home, bin,
			step{"tool.execute.before", call, map[string]any{"args": bad}},
			step{"tool.execute.before", call, map[string]any{"args": plain}},
		)
		if res[0].Threw == nil || !strings.Contains(*res[0].Threw, "did not run") {
			t.Errorf("retval %s: a $expand: call ran: %v", name, res[0])
		}
		if res[1].Threw != nil || mustJSON(t, res[1].Args) != mustJSON(t, plain) {
			t.Errorf("retval %s: a call without references: %v", name, res[1])
		}
	}
}

// A call that ran with an argument still beginning with $expand: (no
// before hook expanded it) is flagged to the model after it.
func TestPluginFlagsUnexpanded(t *testing.T) {
	home := t.TempDir()
	retval := builtRetval(t)
	got := callHook(t, home, retval,
		map[string]any{"tool": "write", "sessionID": "ses_x", "callID": "call_u", "args": map[string]any{"filePath": "/p/u", "content": expand.Prefix + `{"$ref":"call_seq"}`}},
		map[string]any{"output": "Wrote file successfully.", "metadata": map[string]any{}})
	if s, _ := got["output"].(string); !strings.HasPrefix(s, "Wrote file successfully.\n\nretval: the tool received \"/content\" still beginning with $expand:") {
		t.Errorf("the result: %q", s)
	}
	mcp := callHook(t, home, retval,
		map[string]any{"tool": "fs_write_file", "sessionID": "ses_x", "callID": "call_v", "args": map[string]any{"content": expand.Prefix + `{"$ref":"call_seq"}`}},
		map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
	if c, _ := mcp["content"].([]any); len(c) != 2 || !strings.Contains(c[1].(map[string]any)["text"].(string), "still beginning with $expand:") {
		t.Errorf("the MCP result: %v", mcp["content"])
	}
}
