package mcpresult

import (
	"encoding/json"
	"strings"
	"testing"
)

// recorder is a Keep that keeps every text over a threshold of its own,
// recording what it kept.
type recorder struct {
	kept map[string]string // suffix -> text
}

func (r *recorder) keep(text, suffix, tool, note string) (string, bool) {
	if len(text) <= 100 {
		return "", false // within the threshold: shown as it is
	}
	if r.kept == nil {
		r.kept = map[string]string{}
	}
	r.kept[suffix] = text
	return "STUB" + suffix + "\n" + note, true
}

func rewrite(t *testing.T, result string) (map[string]json.RawMessage, []map[string]json.RawMessage, *recorder) {
	t.Helper()
	r := &recorder{}
	out := Rewrite(json.RawMessage(result), 100, "tool", r.keep)
	if out == nil {
		return nil, nil, r
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var blocks []map[string]json.RawMessage
	json.Unmarshal(m["content"], &blocks)
	return m, blocks, r
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

var big = strings.Repeat("x", 150)

// structuredContent's members that are not the retained text reach the
// model as a text block (they used to be dropped with it).
func TestStructuredContentRemainder(t *testing.T) {
	for _, tc := range []struct{ sc, want string }{
		{`{"text": "` + big + `", "exit_code": 3}`, `{"exit_code":3}`},
		{`{"content": "` + big + `", "other": 1}`, `{"other":1}`},
		{`{"content": "` + big + `"}`, ""}, // only the copy: nothing more
		{`"` + big + `"`, ""},
		{`{"lines": 3000}`, `{"lines": 3000}`}, // no copy: all of it
		{`[1, 2]`, `[1, 2]`},
	} {
		m, blocks, _ := rewrite(t, `{"content": [{"type": "text", "text": "`+big+`"}], "structuredContent": `+tc.sc+`, "isError": true}`)
		if _, ok := m["structuredContent"]; ok || string(m["isError"]) != "true" {
			t.Errorf("%s: result %v", tc.sc, m)
		}
		var got []string
		for _, b := range blocks[1:] {
			got = append(got, str(b["text"]))
		}
		if want := []string{tc.want}; tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != want[0]) {
			t.Errorf("%s: blocks after the stub %q, want %q", tc.sc, got, tc.want)
		}
	}
}

// Only the big block becomes a stub; small blocks stay as they are; a
// resource keeps its uri, mimeType and annotations; a text block its
// annotations.
func TestBlocks(t *testing.T) {
	res := `{"content": [
		{"type": "text", "text": "small one"},
		{"type": "text", "text": "` + big + `", "annotations": {"audience": ["assistant"]}},
		{"type": "image", "data": "UE5H", "mimeType": "image/png"},
		{"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "` + big + `y"}, "annotations": {"priority": 1}},
		{"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}}
	]}`
	_, blocks, r := rewrite(t, res)
	if len(blocks) != 5 {
		t.Fatalf("%d blocks", len(blocks))
	}
	if str(blocks[0]["text"]) != "small one" || str(blocks[1]["text"]) != "STUB\n" || string(blocks[1]["annotations"]) != `{"audience":["assistant"]}` {
		t.Errorf("text blocks %s %s", blocks[0], blocks[1])
	}
	if str(blocks[2]["data"]) != "UE5H" {
		t.Errorf("image %s", blocks[2])
	}
	var rs map[string]json.RawMessage
	json.Unmarshal(blocks[3]["resource"], &rs)
	if str(rs["uri"]) != "file:///a.txt" || str(rs["mimeType"]) != "text/plain" || str(rs["text"]) != "STUB-2\n[the value is the text of resource file:///a.txt (text/plain)]\n" || string(blocks[3]["annotations"]) != `{"priority":1}` {
		t.Errorf("resource %s: %s", blocks[3], rs)
	}
	if r.kept[""] != big || r.kept["-2"] != big+"y" || len(r.kept) != 2 {
		t.Errorf("kept %v", r.kept)
	}
}

// Small blocks that are big together are joined into one value, and the
// stub says so.
func TestJoined(t *testing.T) {
	half := strings.Repeat("z", 60)
	_, blocks, r := rewrite(t, `{"content": [{"type": "text", "text": "`+half+`"}, {"type": "image", "data": "x"}, {"type": "text", "text": "`+half+`"}]}`)
	if len(blocks) != 2 || str(blocks[0]["text"]) != "STUB\n[the value is the result's 2 text blocks joined by newlines]\n" || r.kept[""] != half+"\n"+half {
		t.Errorf("blocks %s, kept %v", blocks, r.kept)
	}
	// Small altogether: unchanged.
	if m, _, _ := rewrite(t, `{"content": [{"type": "text", "text": "ok"}], "structuredContent": {"a": 1}}`); m != nil {
		t.Errorf("a small result was rewritten: %v", m)
	}
}
