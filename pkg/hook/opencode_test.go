package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
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

// opencodeEvent is the plugin's input for event in session "sess" (the
// run storeOf fills): output is the hook's output object.
func opencodeEvent(t *testing.T, event, tool string, input, output map[string]any) string {
	t.Helper()
	in := map[string]any{"tool": tool, "sessionID": "sess", "callID": "call_9"}
	for k, v := range input {
		in[k] = v
	}
	b, err := json.Marshal(map[string]any{"event": event, "input": in, "output": output})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type opencodeBeforeOut struct {
	Args    map[string]any `json:"args"`
	Summary string         `json:"summary"`
	Refused string         `json:"refused"`
}

// tool.execute.before: a string argument that begins with $expand:, and a
// bare node object in any tool's arguments (opencode checks them against
// the tool's schema only after the hook), are answered expanded with the
// bytes and digest of each field, and the read log counts them.
func TestOpencodeBeforeExpands(t *testing.T) {
	o := storeOf(t)
	args := map[string]any{"filePath": "/tmp/x.go",
		"content": expand.Prefix + `{"$concat": ["// new\n", {"$ref": "v1", "lines": [2100, 2102]}]}`,
		"other":   map[string]any{"$ref": "v1", "lines": []int{1, 2}},
		"note":    "mentions $expand: later, untouched"}
	ans, err := Opencode(strings.NewReader(opencodeEvent(t, "tool.execute.before", "write", nil, map[string]any{"args": args})), o)
	if err != nil {
		t.Fatal(err)
	}
	var a opencodeBeforeOut
	if err := json.Unmarshal(ans.Output, &a); err != nil {
		t.Fatalf("%v: %s", err, ans.Output)
	}
	want := "// new\n2100\n2101\n2102\n"
	if a.Args["content"] != want || a.Args["other"] != "1\n2\n" || a.Args["filePath"] != "/tmp/x.go" || a.Args["note"] != args["note"] || a.Refused != "" {
		t.Fatalf("answer %s", ans.Output)
	}
	if w := "[retval expanded /content: 22 bytes, sha256:" + sha(want) + "; /other: 4 bytes, sha256:" + sha("1\n2\n") + "]"; a.Summary != w {
		t.Errorf("summary %q, want %q", a.Summary, w)
	}
	var refs []retain.Read
	retain.Open(o.RunsDir).ScanReads("sess", func(r *retain.Read) {
		if r.Op == retain.OpReference {
			refs = append(refs, *r)
		}
	})
	if len(refs) != 1 || refs[0].Via != "hook opencode" || refs[0].Tool != "write" || refs[0].Size != int64(len(want)+4) {
		t.Errorf("read log %+v", refs)
	}
}

// A reference that fails refuses the call, naming each failure; so does
// a $expand: string that cannot be expanded at all (no store). Arguments
// without references get no answer.
func TestOpencodeBeforeRefuses(t *testing.T) {
	o := storeOf(t)
	bad := map[string]any{"filePath": "/tmp/x", "content": expand.Prefix + `{"$concat": ["a", {"$ref": "v1", "lines": [20000, 20001]}, {"$ref": "nope"}]}`}
	ans, err := Opencode(strings.NewReader(opencodeEvent(t, "tool.execute.before", "write", nil, map[string]any{"args": bad})), o)
	if err != nil {
		t.Fatal(err)
	}
	var a opencodeBeforeOut
	json.Unmarshal(ans.Output, &a)
	for _, w := range []string{`at "/content/$concat/1"`, "(invalid_range)", `at "/content/$concat/2"`, "(unknown_reference)", "nothing ran"} {
		if !strings.Contains(a.Refused, w) || a.Args != nil {
			t.Errorf("refusal %q lacks %q", a.Refused, w)
		}
	}
	ans, err = Opencode(strings.NewReader(opencodeEvent(t, "tool.execute.before", "write", nil, map[string]any{"args": bad})), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a = opencodeBeforeOut{}
	json.Unmarshal(ans.Output, &a)
	if !strings.Contains(a.Refused, "no store") {
		t.Errorf("without a store: %s", ans.Output)
	}
	for _, args := range []map[string]any{
		{"command": "echo $HOME '$expand: not at the start'"},
		{"schema": map[string]any{"$ref": "#/definitions/x"}},
		{},
	} {
		ans, err := Opencode(strings.NewReader(opencodeEvent(t, "tool.execute.before", "bash", nil, map[string]any{"args": args})), o)
		if err != nil || len(ans.Output) > 0 {
			t.Errorf("%v: answered %s (%v)", args, ans.Output, err)
		}
	}
}

// tool.execute.after flags an argument that still begins with $expand:
// (the call ran with the reference as written), beside the stub or alone;
// the system event teaches the form.
func TestOpencodeUnexpandedAndSystem(t *testing.T) {
	o := storeOf(t)
	args := map[string]any{"filePath": "/x", "content": expand.Prefix + `{"$ref":"v1"}`}
	ans, err := Opencode(strings.NewReader(opencodeEvent(t, "tool.execute.after", "write", map[string]any{"args": args},
		map[string]any{"output": "Wrote file successfully.", "metadata": map[string]any{}})), o)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Output *string `json:"output"`
		Note   string  `json:"note"`
		System string  `json:"system"`
	}
	json.Unmarshal(ans.Output, &a)
	if a.Output != nil || !strings.Contains(a.Note, `"/content" still beginning with $expand:`) {
		t.Errorf("after: %s", ans.Output)
	}
	big := numbers(20000)
	ans, err = Opencode(strings.NewReader(opencodeEvent(t, "", "bash", map[string]any{"args": map[string]any{"command": expand.Prefix + "{}"}},
		map[string]any{"output": big, "metadata": map[string]any{}})), o)
	if err != nil {
		t.Fatal(err)
	}
	a.Note = ""
	json.Unmarshal(ans.Output, &a)
	if a.Output == nil || !strings.HasPrefix(*a.Output, "[retained #call_9]") || !strings.Contains(a.Note, `"/command"`) {
		t.Errorf("after, retained: %.300s", ans.Output)
	}
	ans, err = Opencode(strings.NewReader(`{"event":"system"}`), o)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(ans.Output, &a)
	if a.System != expand.Instructions {
		t.Errorf("system: %s", ans.Output)
	}
}
