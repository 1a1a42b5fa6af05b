package expand

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// latin1Page is an HTML page as a server in 2005 sent it: ISO-8859-1, so
// every accented letter is one byte that is not UTF-8.
var latin1Page = "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\">\n" +
	"<html lang=\"fr\">\n" +
	"<head>\n" +
	"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\n" +
	"<title>Caf\xe9 de la Gare \xab Chez Ren\xe9 \xbb</title>\n" +
	"</head>\n" +
	"<body>\n" +
	"<h1>Bienvenue au caf\xe9</h1>\n" +
	"<p>Ouvert du lundi au samedi, de 7h \xe0 19h.</p>\n" +
	"<p>Sp\xe9cialit\xe9s : cr\xeapes, g\xe2teaux, cr\xe8me br\xfbl\xe9e.</p>\n" +
	"<p>M\xfcnchner Wei\xdfbier en pression.</p>\n" +
	"<address>\xa9 2005 Caf\xe9 de la Gare &mdash; 12, place de la Libert\xe9</address>\n" +
	"</body>\n" +
	"</html>\n"

var latin1Values = map[string]string{
	"cafe": "caf\xe9\n",
	"page": latin1Page,
	"ok":   "plain\n",
	// A JSON document whose strings hold lone surrogate escapes. (One
	// that holds bytes that are not UTF-8 is not JSON: a pointer into it
	// is not_json.)
	"lone":  `{"s": "a\ud800b", "t": "\ud83d\ude00", "u": "x\udc00"}`,
	"rawin": "{\"s\": \"caf\xe9\"}",
}

// firstBad is the offset of the first byte of s that is not valid UTF-8.
func firstBad(s string) int {
	return strings.IndexFunc(s, func(r rune) bool { return r == '\uFFFD' })
}

func TestNotUTF8Lookups(t *testing.T) {
	rs := newStore(t, latin1Values)
	bad := firstBad(latin1Page)
	if bad < 0 {
		t.Fatal("the page is valid UTF-8")
	}
	big := Budget{LookupBytes: 1 << 20, StepBytes: 1 << 20}
	for _, tc := range []struct {
		ref string
		msg string // "" for an answer
	}{
		{`{"$ref": "cafe"}`, `value "cafe" is not valid UTF-8 at byte 3 (0xe9)`},
		{`{"$ref": "cafe", "lines": [1, 1]}`, `at byte 3 (0xe9)`},
		{`{"$ref": "cafe", "bytes": [0, 4]}`, `at byte 3 (0xe9)`},
		{`{"$ref": "cafe", "bytes": [0, 3]}`, ""},
		{`{"$ref": "page"}`, `value "page" is not valid UTF-8 at byte ` + itoa(bad) + ` (0xe9)`},
		{`{"$ref": "page", "lines": [5, 5]}`, `at byte ` + itoa(bad) + ` (0xe9)`},
		{`{"$ref": "page", "lines": [1, 4]}`, ""},
		{`{"$ref": "rawin", "bytes": [0, 10]}`, ""},
		{`{"$ref": "rawin", "bytes": [0, 11]}`, `value "rawin" is not valid UTF-8 at byte 10 (0xe9)`},
		{`{"$ref": "lone", "pointer": "/s", "as": "string"}`, `holds \ud800 at byte 8, a lone UTF-16 surrogate`},
		{`{"$ref": "lone", "pointer": "/u", "as": "string"}`, `holds \udc00 at byte`},
		{`{"$ref": "lone", "pointer": "/t", "as": "string"}`, ""},
		{`{"$ref": "lone", "pointer": "/s"}`, ""}, // the lexeme is the escape itself
	} {
		ans, err := rs.Lookups(lookups(t, tc.ref), big, &Spent{})
		if err != nil {
			t.Fatal(err)
		}
		a := ans[0]
		if tc.msg == "" {
			if a.Err != nil {
				t.Errorf("%s: %v", tc.ref, a.Err)
			}
			continue
		}
		if retain.CodeOf(a.Err) != retain.CodeNotUTF8 || !strings.Contains(a.Err.Error(), tc.msg) {
			t.Errorf("%s: %q, %v (%s); want not_utf8 containing %q", tc.ref, a.Text, a.Err, retain.CodeOf(a.Err), tc.msg)
		}
	}
	// The JSON result of a batch never holds a substituted character: a
	// failed lookup is an error result, and the bytes it reports are the
	// text's.
	ans, err := rs.Lookups(lookups(t, `{"$ref": "cafe"}`, `{"$ref": "ok"}`), big, &Spent{})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range ans {
		b, err := json.Marshal(a)
		if err != nil || bytes.Contains(b, []byte(`\ufffd`)) || bytes.ContainsRune(b, '\uFFFD') {
			t.Fatalf("answer %d: %s, %v", i, b, err)
		}
		var got struct {
			OK    bool
			Text  string
			Bytes int
			Error struct{ Code string }
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if i == 0 && (got.OK || got.Error.Code != "not_utf8") || i == 1 && (!got.OK || got.Bytes != len(got.Text)) {
			t.Fatalf("answer %d: %s", i, b)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// expandFails expands tmpl and wants it refused with exactly the failures
// want (path: message fragment), each not_utf8.
func expandFails(t *testing.T, x *Expander, tmpl string, summary bool, want map[string]string) {
	t.Helper()
	r, err := x.Expand([]byte(tmpl), summary)
	if err == nil {
		t.Fatalf("%s: expanded to %q, summary %s", tmpl, r.Bytes(), r.Summary)
	}
	got := refusal(t, err)
	if len(got) != len(want) {
		t.Fatalf("%s: %+v; want %d failures", tmpl, got, len(want))
	}
	for _, f := range got {
		frag, ok := want[f.Path]
		if !ok || f.Code != retain.CodeNotUTF8 || !strings.Contains(f.Message, frag) {
			t.Errorf("%s: failure %+v; want not_utf8 containing %q", tmpl, f, frag)
		}
	}
}

func TestNotUTF8Expand(t *testing.T) {
	x := newExpander(t, latin1Values)
	bad := itoa(firstBad(latin1Page))
	// A whole value, with and without a summary (which would vouch for
	// the stored size and digest of text that was not what it holds).
	expandFails(t, x, `{"content": {"$ref": "cafe"}}`, true, map[string]string{"/content": `value "cafe" is not valid UTF-8 at byte 3 (0xe9)`})
	expandFails(t, x, `{"content": {"$ref": "page"}}`, false, map[string]string{"/content": "at byte " + bad})
	// Rebuilding the page from all its lines: every line that holds a
	// Latin-1 letter is named, with the offset of its first one.
	var parts []string
	fails := map[string]string{}
	lines := strings.SplitAfter(latin1Page, "\n")
	off := 0
	for i, l := range lines[:len(lines)-1] {
		parts = append(parts, `{"$ref": "page", "lines": [`+itoa(i+1)+`, `+itoa(i+1)+`]}`)
		if k := firstBad(l); k >= 0 {
			fails["/content/$concat/"+itoa(i)] = "at byte " + itoa(off+k) + " "
		}
		off += len(l)
	}
	if len(fails) < 4 {
		t.Fatalf("only %d lines with Latin-1 letters", len(fails))
	}
	expandFails(t, x, `{"content": {"$concat": [`+strings.Join(parts, ", ")+`]}}`, true, fails)
	// A $concat of good and bad parts; a lexeme inserted as a value.
	expandFails(t, x, `{"a": {"$concat": ["x", {"$ref": "ok"}, {"$ref": "cafe", "bytes": [2, 4]}]}, "b": {"$ref": "ok"}}`, true,
		map[string]string{"/a/$concat/2": "at byte 3 (0xe9)"})
	// Decoded strings: a lone surrogate escape has no UTF-8 at all.
	expandFails(t, x, `[{"$ref": "lone", "pointer": "/u", "as": "string"}, {"$ref": "lone", "pointer": "/s", "as": "string"}, {"$ref": "lone", "pointer": "/t", "as": "string"}]`, true,
		map[string]string{"/0": `\udc00 at byte 46`, "/1": `\ud800 at byte 8`})
	// The model's own text in a $concat is held to the same rule.
	tmpl := `{"a": {"$concat": ["ok \ud800", {"$ref": "ok"}]}, "b": {"$concat": ["` + "caf\xe9" + `"]}}`
	expandFails(t, x, tmpl, false, map[string]string{
		"/a/$concat/0": `\ud800 at byte ` + itoa(strings.Index(tmpl, `\ud800`)) + ` of the template`,
		"/b/$concat/0": "at byte " + itoa(strings.Index(tmpl, "\xe9")) + " of the template (0xe9)"})
	// Refused for another node too, the refusal still names every one.
	_, err := x.Expand([]byte(`{"a": {"$ref": "nope"}, "b": {"$ref": "cafe"}, "c": {"$ref": "lone", "pointer": "/s", "as": "string"}}`), false)
	if f := refusal(t, err); len(f) != 3 || f[0].Code != retain.CodeUnknownReference || f[1].Path != "/b" || f[1].Code != retain.CodeNotUTF8 || f[2].Path != "/c" || f[2].Code != retain.CodeNotUTF8 {
		t.Errorf("%+v", f)
	}
	// What is valid still expands, byte for byte.
	out, _ := expandString(t, x, `{"a": {"$ref": "cafe", "bytes": [0, 3]}, "t": {"$ref": "lone", "pointer": "/t", "as": "string"}, "l": {"$ref": "lone", "pointer": "/s", "as": "value"}}`, true)
	if out != `{"a": "caf", "t": "😀", "l": "a\ud800b"}` {
		t.Fatalf("%s", out)
	}
}

// Valid UTF-8 cut by the edge of a read (a 64 KiB block, a 256 KiB chunk)
// is not taken for invalid bytes: the sequence is completed by the next.
func TestUTF8AcrossReads(t *testing.T) {
	var b strings.Builder
	for _, edge := range []int{1 << 16, 1 << 18, 3 << 16} {
		for b.Len() < edge-2 {
			b.WriteString("x")
		}
		b.WriteString("😀é") // 4 bytes from edge-2: two on each side
	}
	b.WriteString("\n")
	v := b.String()
	x := newExpander(t, map[string]string{"v": v})
	out, r := expandString(t, x, `{"$ref": "v"}`, true)
	var got string
	if err := json.Unmarshal([]byte(out), &got); err != nil || got != v {
		t.Fatalf("round trip: %v", err)
	}
	if r.Expansions[0].SHA256 != digest(v) {
		t.Fatal("digest")
	}
	rs := &Resolver{Store: x.Store, Run: x.Run}
	ans, err := rs.Lookups(lookups(t, `{"$ref": "v"}`), Budget{LookupBytes: retain.Unlimited, StepBytes: retain.Unlimited}, &Spent{})
	if err != nil || ans[0].Err != nil || string(ans[0].Text) != v {
		t.Fatal(err, ans[0].Err)
	}
}
