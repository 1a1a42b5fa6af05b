package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func opencodeInputOf(t *testing.T, tool, call string, output any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"input": map[string]any{"tool": tool, "sessionID": "ses_1", "callID": call}, "output": output})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type opencodeOut struct {
	Output  *string          `json:"output"`
	Content []map[string]any `json:"content"`
}

func decodeOpencode(t *testing.T, ans Answer) opencodeOut {
	t.Helper()
	var o opencodeOut
	if err := json.Unmarshal(ans.Output, &o); err != nil {
		t.Fatalf("answer %q: %v", ans.Output, err)
	}
	return o
}

// A built-in tool's big output becomes the stub; when opencode cut it,
// the value is the file it saved, and the shell's metadata block stays
// after the stub.
func TestOpencodeBuiltin(t *testing.T) {
	dir := t.TempDir()
	whole := numbers(20000)
	saved := filepath.Join(t.TempDir(), "tool_1")
	os.WriteFile(saved, []byte(whole), 0o600)
	trailer := "\n\n<shell_metadata>\nexit code 0\n</shell_metadata>"
	ans, err := Opencode(strings.NewReader(opencodeInputOf(t, "bash", "call_1", map[string]any{
		"title": "seq", "output": "...cut..." + trailer, "metadata": map[string]any{"outputPath": saved, "exit": 0}})), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	o := decodeOpencode(t, ans)
	if o.Output == nil || !strings.HasPrefix(*o.Output, "[retained #call_1] 108894 bytes, 20000 lines, sha256:"+sha(whole)) || !strings.HasSuffix(*o.Output, "  # read more, or: --query TEXT instead of --lines\n"+trailer) {
		t.Errorf("output %v", o.Output)
	}
	if got, d := stored(t, dir, "ses_1", "call_1"); got != whole || d.Tool != "bash" {
		t.Errorf("stored %d bytes, tool %q", len(got), d.Tool)
	}
	// Not cut: the output itself, without the metadata block.
	medium := numbers(5000)
	ans, err = Opencode(strings.NewReader(opencodeInputOf(t, "bash", "call_2", map[string]any{"output": medium + trailer, "metadata": map[string]any{}})), Options{RunsDir: dir})
	if err != nil || len(ans.Output) == 0 {
		t.Fatalf("%q %v", ans.Reason, err)
	}
	if got, _ := stored(t, dir, "ses_1", "call_2"); got != medium {
		t.Errorf("stored %q…", got[:40])
	}
	// Small: no answer.
	ans, err = Opencode(strings.NewReader(opencodeInputOf(t, "read", "call_3", map[string]any{"output": "hi\n"})), Options{RunsDir: dir})
	if err != nil || len(ans.Output) > 0 || !strings.Contains(ans.Reason, "within the threshold") {
		t.Errorf("small: %q %q %v", ans.Output, ans.Reason, err)
	}
}

// An MCP result, by the proxy's rule: each big text block (or embedded
// text resource) becomes its own value's stub, a resource keeping its uri;
// every other block stays where it was.
func TestOpencodeMCP(t *testing.T) {
	dir := t.TempDir()
	a, b := strings.Repeat("a\n", 15000), strings.Repeat("b\n", 15000)
	image := map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}
	blob := map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x", "blob": "AAAA"}}
	ans, err := Opencode(strings.NewReader(opencodeInputOf(t, "fs_read", "call_7", map[string]any{
		"content": []any{image, map[string]any{"type": "text", "text": a}, blob,
			map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///b", "text": b}}},
		"structuredContent": map[string]any{"content": a + b}})), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	o := decodeOpencode(t, ans)
	if o.Output != nil || len(o.Content) != 4 {
		t.Fatalf("answer %s", ans.Output)
	}
	if o.Content[0]["type"] != "image" || o.Content[2]["type"] != "resource" || o.Content[3]["type"] != "resource" {
		t.Errorf("the other blocks moved: %v", o.Content)
	}
	stub, _ := o.Content[1]["text"].(string)
	if !strings.HasPrefix(stub, "[retained #call_7] 30000 bytes, 15000 lines, sha256:"+sha(a)) {
		t.Errorf("stub %q", stub)
	}
	res, _ := o.Content[3]["resource"].(map[string]any)
	if s, _ := res["text"].(string); res["uri"] != "file:///b" || !strings.HasPrefix(s, "[retained #call_7-2] 30000 bytes") ||
		!strings.HasSuffix(s, "[the value is the text of resource file:///b]\n") {
		t.Errorf("resource %v", res)
	}
	if got, _ := stored(t, dir, "ses_1", "call_7"); got != a {
		t.Errorf("stored %d bytes", len(got))
	}
	if got, _ := stored(t, dir, "ses_1", "call_7-2"); got != b {
		t.Errorf("stored %d bytes", len(got))
	}
}

// What the hook does not answer leaves opencode's output as it is.
func TestOpencodePass(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"not JSON", "{oops", "not a JSON object"},
		{"no ids", `{"input":{"tool":"bash"},"output":{"output":"x"}}`, "lacks sessionID or callID"},
		{"output not a string", opencodeInputOf(t, "bash", "c", map[string]any{"output": 5}), "not a JSON object"},
		{"no text", opencodeInputOf(t, "m", "c", map[string]any{"content": []any{nil, 3}}), "no text"},
		{"neither", opencodeInputOf(t, "m", "c", map[string]any{}), "neither output nor content"},
		{"relative saved path", opencodeInputOf(t, "bash", "c", map[string]any{"output": "x", "metadata": map[string]any{"outputPath": "rel"}}), "not absolute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ans, err := Opencode(strings.NewReader(c.in), Options{RunsDir: t.TempDir()})
			said := ans.Reason
			if err != nil {
				said = err.Error()
			}
			if len(ans.Output) > 0 || !strings.Contains(said, c.want) {
				t.Errorf("answered %q, said %q; want %q", ans.Output, said, c.want)
			}
		})
	}
}
