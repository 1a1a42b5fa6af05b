package expand

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

var expandValues = map[string]string{
	"crlf":   crlf,
	"nl":     "a\nb\n",
	"utf":    "aé😀z",
	"json":   testValues["json"],
	"dup":    `{"a": 1, "a": 2}`,
	"text":   "not json\n",
	"quote":  "say \"hi\"\t\\ \u2028 \x01 end",
	"bad":    "ok \xff\xfe ok",
	"refish": `{"$ref": "secret", "$concat": ["--run", "x"], "cmd": "$(rm -rf /)"}`,
	"secret": "SECRET BYTES",
	"str":    `{"s": "a\u00e9\n\"b\"", "n": [1.0, 2e1]}`,
}

func newExpander(t testing.TB, values map[string]string) *Expander {
	rs := newStore(t, values)
	return &Expander{Store: rs.Store, Run: rs.Run, MaxBytes: 16 << 20}
}

func expandString(t testing.TB, x *Expander, tmpl string, summary bool) (string, *Result) {
	t.Helper()
	r, err := x.Expand([]byte(tmpl), summary)
	if err != nil {
		t.Fatalf("%s: %v", tmpl, err)
	}
	out := string(r.Bytes())
	if int64(len(out)) != r.Len() {
		t.Fatalf("Len %d, Bytes %d", r.Len(), len(out))
	}
	if !json.Valid([]byte(out)) {
		t.Fatalf("%s: output is not JSON: %s", tmpl, out)
	}
	return out, r
}

func TestExpand(t *testing.T) {
	x := newExpander(t, expandValues)
	for _, tc := range []struct{ tmpl, want string }{
		// Untouched bytes stay as they are: whitespace, order, numbers, escapes.
		{"{ \"z\" : 1.00000000000000000001 ,\n\t\"a\":[ \"\\u00e9\\/\" , -0, 1E400 ] }\n", "{ \"z\" : 1.00000000000000000001 ,\n\t\"a\":[ \"\\u00e9\\/\" , -0, 1E400 ] }\n"},
		{` {"a": {"$ref": "crlf", "lines": [2, 3]}} `, ` {"a": "two\r\nthree\r\n"} `},
		{`{"$ref": "crlf"}`, `"one\r\ntwo\r\nthree\r\nfour"`},
		{`[{"$ref": "#nl"}, {"$ref": "nl", "lines": [2, 2]}]`, `["a\nb\n", "b\n"]`},
		{`{"a": {"$ref": "utf", "bytes": [1, 7]}}`, `{"a": "é😀"}`},
		{`{"q": {"$ref": "quote"}}`, `{"q": "say \"hi\"\t\\ \u2028 \u0001 end"}`},
		// Pointers: lexeme (the default) as a string, "as": "string" as its
		// text, "as": "value" spliced with its bytes.
		{`{"a": {"$ref": "json", "pointer": "/a/0"}}`, `{"a": "1.00000000000000000001"}`},
		{`{"a": {"$ref": "json", "pointer": "/a/0", "as": "value"}}`, `{"a": 1.00000000000000000001}`},
		{`{"a": {"$ref": "json", "pointer": "/big", "as": "value"}}`, `{"a": 123456789012345678901234567890}`},
		{`{"a": {"$ref": "json", "pointer": "", "as": "value"}}`, `{"a": {"a": [1.00000000000000000001, "x\ny\u00e9"], "big": 123456789012345678901234567890, "neg": -0, "inf": 1e400}}`},
		{`{"a": {"$ref": "str", "pointer": "/s", "as": "value"}}`, `{"a": "a\u00e9\n\"b\""}`},
		{`{"a": {"$ref": "str", "pointer": "/s", "as": "string"}}`, `{"a": "aé\n\"b\""}`},
		{`{"a": {"$ref": "str", "pointer": "/s"}}`, `{"a": "\"a\\u00e9\\n\\\"b\\\"\""}`},
		// $concat joins text and references in order.
		{`{"c": {"$concat": [{"$ref": "crlf", "lines": [1, 1]}, "new\u00e9\n", {"$ref": "crlf", "lines": [3, 4]}]}}`, `{"c": "one\r\nnewé\nthree\r\nfour"}`},
		{`{"c": {"$concat": []}}`, `{"c": ""}`},
		{`{"c": {"$concat": ["\ud83d\ude00", {"$ref": "str", "pointer": "/s", "as": "string"}, {"$ref": "str", "pointer": "/n/0"}]}}`, `{"c": "😀aé\n\"b\"1.0"}`},
		// $literal is X, byte for byte, however ref-like.
		{`{"l": {"$literal": {"$ref": "secret", "x": [1.50]}}}`, `{"l": {"$ref": "secret", "x": [1.50]}}`},
		{`{"l": {"$literal": {"$concat": ["a"]}}}`, `{"l": {"$concat": ["a"]}}`},
		// Objects that are not nodes are data.
		{`{"$expanded": {"bytes": 1}, "$refs": "x", "ref": {"$reff": 1}}`, `{"$expanded": {"bytes": 1}, "$refs": "x", "ref": {"$reff": 1}}`},
	} {
		got, _ := expandString(t, x, tc.tmpl, false)
		if got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.tmpl, got, tc.want)
		}
	}
}

// TestExpandNoAuthority: text inside a selected value is data. A value
// whose text is a template is never expanded again, whether it is inserted
// as a string, as text in a $concat or spliced as a JSON value.
func TestExpandNoAuthority(t *testing.T) {
	x := newExpander(t, expandValues)
	for _, tmpl := range []string{
		`{"a": {"$ref": "refish"}}`,
		`{"a": {"$concat": ["x", {"$ref": "refish"}]}}`,
		`{"a": {"$ref": "refish", "pointer": "", "as": "value"}}`,
		`{"a": {"$ref": "refish", "pointer": "/$concat", "as": "value"}}`,
		`{"a": {"$ref": "refish", "pointer": "/$ref", "as": "string"}}`,
	} {
		got, _ := expandString(t, x, tmpl, false)
		if strings.Contains(got, "SECRET") {
			t.Errorf("%s: text of a value was expanded: %s", tmpl, got)
		}
	}
	got, _ := expandString(t, x, `{"a": {"$ref": "refish", "pointer": "", "as": "value"}}`, false)
	if want := `{"a": ` + expandValues["refish"] + `}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func refusal(t *testing.T, err error) []Failure {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) || retain.CodeOf(err) != retain.CodeExpandRefused {
		t.Fatalf("want a refusal (expand_refused), got %v (%s)", err, retain.CodeOf(err))
	}
	return r.Failures
}

func TestExpandAllOrNothing(t *testing.T) {
	x := newExpander(t, expandValues)
	tmpl := `{"ok": {"$ref": "nl"},
	"a": {"$ref": "nope"},
	"b": {"$concat": ["x", {"$ref": "crlf", "lines": [4, 9]}, 7, {"$ref": "nope", "lines": [1, 1]}]},
	"c": [{"$ref": "text", "pointer": ""}, {"$ref": "dup", "pointer": "/a"}, {"$ref": "utf", "bytes": [2, 3]}],
	"d": {"$ref": "nl", "sha256": "` + strings.Repeat("0", 64) + `"},
	"e": {"$ref": "json", "pointer": "/a", "as": "string"},
	"f": {"$ref": "json", "pointer": "/zz"},
	"g": {"$list_results": 0}}`
	_, err := x.Expand([]byte(tmpl), true)
	got := refusal(t, err)
	want := []struct {
		path string
		code retain.Code
	}{
		{"/a", retain.CodeUnknownReference},
		{"/b/$concat/1", retain.CodeInvalidRange},
		{"/b/$concat/2", retain.CodeBadReference},
		{"/b/$concat/3", retain.CodeUnknownReference},
		{"/c/0", retain.CodeNotJSON},
		{"/c/1", retain.CodeAmbiguousJSON},
		{"/c/2", retain.CodeInvalidRange},
		{"/d", retain.CodeDigestMismatch},
		{"/e", retain.CodeNotString},
		{"/f", retain.CodeBadPointer},
		{"/g", retain.CodeBadReference},
	}
	if len(got) != len(want) {
		t.Fatalf("%d failures, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Path != w.path || got[i].Code != w.code || got[i].Message == "" {
			t.Errorf("failure %d: %+v, want %s (%s)", i, got[i], w.path, w.code)
		}
	}
	// The same message as resolve gives for the same reference.
	if !strings.Contains(got[1].Message, "line range 4-9 ends past the end: the value has lines 1-4; ask for lines 4-4") {
		t.Errorf("message %q", got[1].Message)
	}
	b, _ := json.Marshal(got[0])
	if !strings.HasPrefix(string(b), `{"path":"/a","code":"unknown_reference","message":"no value \"nope\" in run \"r\"`) {
		t.Errorf("JSON failure: %s", b)
	}
}

func TestExpandUnknownRun(t *testing.T) {
	x := newExpander(t, expandValues)
	x.Run = "other"
	got := refusal(t, func() error { _, err := x.Expand([]byte(`[{"$ref": "nl"}, {"$ref": "crlf"}]`), false); return err }())
	if len(got) != 2 || got[0].Code != retain.CodeUnknownReference || got[1].Path != "/1" {
		t.Errorf("%+v", got)
	}
	// A template without references needs no run.
	out, _ := expandString(t, x, `{"a": {"$literal": {"$ref": "nl"}}}`, false)
	if out != `{"a": {"$ref": "nl"}}` {
		t.Errorf("got %s", out)
	}
}

func TestExpandCap(t *testing.T) {
	x := newExpander(t, expandValues)
	// nl is 4 bytes, crlf 21, "new" 3: 4 + (21 + 3) + 4 = 32.
	tmpl := `{"a": {"$ref": "nl"}, "l": {"$literal": "not counted"}, "b": {"$concat": [{"$ref": "crlf"}, "new"]}, "c": {"$ref": "nl"}}`
	x.MaxBytes = 32
	expandString(t, x, tmpl, false)
	x.MaxBytes = 31
	_, err := x.Expand([]byte(tmpl), false)
	got := refusal(t, err)
	want := "the expanded content passes the 31-byte bound of one expansion at this node (32 bytes in all); expand in smaller steps, or raise --max-expand-bytes"
	if len(got) != 1 || got[0].Path != "/c" || got[0].Code != retain.CodeTooLarge || got[0].Message != want {
		t.Errorf("%+v", got)
	}
	x.MaxBytes = 0
	expandString(t, x, tmpl, false)
}

// TestExpandCapDecoded: the length of an "as": "string" selection is bounded
// before it is known; where the bounds cannot decide, it is decoded.
func TestExpandCapDecoded(t *testing.T) {
	// "\u00e9" ×100 is a 600-byte body decoding to 200 bytes.
	body := strings.Repeat(`\u00e9`, 100)
	x := newExpander(t, map[string]string{"s": `{"s": "` + body + `"}`})
	tmpl := `{"a": {"$ref": "s", "pointer": "/s", "as": "string"}}`
	for _, tc := range []struct {
		limit int64
		ok    bool
		msg   string
	}{
		{2000, true, ""}, // at or above the upper bound (1800): not decoded first
		{1000, true, ""}, // between the bounds: decoded to decide
		{200, true, ""},  // exactly
		{199, false, "(200 bytes in all)"},
		{99, false, "(at least 100 bytes in all)"}, // below the lower bound
	} {
		x.MaxBytes = tc.limit
		r, err := x.Expand([]byte(tmpl), true)
		if tc.ok {
			if err != nil {
				t.Errorf("limit %d: %v", tc.limit, err)
			} else if r.Expansions[0].Bytes != 200 {
				t.Errorf("limit %d: %d bytes", tc.limit, r.Expansions[0].Bytes)
			}
			continue
		}
		got := refusal(t, err)
		if len(got) != 1 || got[0].Code != retain.CodeTooLarge || !strings.Contains(got[0].Message, tc.msg) {
			t.Errorf("limit %d: %+v", tc.limit, got)
		}
	}
}

func TestExpandSummary(t *testing.T) {
	x := newExpander(t, expandValues)
	tmpl := "{\"a\": {\"$ref\": \"nl\"},\n \"b\": {\"$concat\": [\"x\\n\", {\"$ref\": \"crlf\", \"lines\": [1, 1]}]}, \"c\": {\"$literal\": {\"$ref\": \"nl\"}}, \"d\": [{\"$ref\": \"json\", \"pointer\": \"/a/0\", \"as\": \"value\"}]}"
	out, r := expandString(t, x, tmpl, true)
	want := "{\"a\": {\"$expanded\": {\"bytes\": 4, \"sha256\": \"" + digest("a\nb\n") + "\"}},\n" +
		" \"b\": {\"$expanded\": {\"bytes\": 7, \"sha256\": \"" + digest("x\none\r\n") + "\"}}, \"c\": {\"$ref\": \"nl\"}, " +
		"\"d\": [{\"$expanded\": {\"bytes\": 22, \"sha256\": \"" + digest("1.00000000000000000001") + "\"}}]}"
	if string(r.Summary) != want {
		t.Errorf("summary\n got %s\nwant %s", r.Summary, want)
	}
	if !json.Valid(r.Summary) {
		t.Error("summary is not JSON")
	}
	// A whole-value reference's digest is the value's own.
	d, err := x.Store.Descriptor("r", "nl")
	if err != nil || r.Expansions[0].SHA256 != d.SHA256 || r.Expansions[0].Path != "/a" {
		t.Errorf("expansion %+v, descriptor %v %v", r.Expansions[0], d, err)
	}
	if len(r.Expansions) != 3 {
		t.Errorf("expansions %+v", r.Expansions)
	}
	if !strings.Contains(out, `"b": "x\none\r\n"`) {
		t.Errorf("output %s", out)
	}
	// Without a summary, nothing is hashed.
	_, r = expandString(t, x, tmpl, false)
	if r.Summary != nil || r.Expansions[0].SHA256 != "" || r.Expansions[0].Bytes != 4 {
		t.Errorf("no summary asked: %+v", r)
	}
}

// TestExpandNoNodes: a document without nodes comes out byte-identical.
func TestExpandNoNodes(t *testing.T) {
	x := newExpander(t, expandValues)
	for _, doc := range []string{"1", " \"a\" \n", "{\"a\" :\t[1 , {\"b\":null}], \"$x\": {}}\r\n", "[\"\\ud800\", \"\xff\"]"} {
		got, r := expandString(t, x, doc, true)
		if got != doc || string(r.Summary) != doc {
			t.Errorf("%q came out as %q (summary %q)", doc, got, r.Summary)
		}
	}
}

// TestLocateLines: the batch locator finds the same spans as Select, on
// values with and without an index and a final newline.
func TestLocateLines(t *testing.T) {
	var big strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&big, "line %d %s\n", i+1, strings.Repeat("x", i%50))
	}
	values := map[string]string{
		"big":    big.String(),
		"bignl":  big.String() + "tail without newline",
		"small":  "a\nbb\n\nccc\r\nd",
		"one":    "x",
		"blanks": "\n\n\n",
	}
	x := newExpander(t, values)
	rng := rand.New(rand.NewPCG(1, 2))
	for id := range values {
		v, err := x.Store.OpenValue("r", id)
		if err != nil {
			t.Fatal(err)
		}
		if id == "big" && v.Index() == nil {
			t.Fatal("the big value has no index: the test would not cover index jumps")
		}
		n := v.Desc.Lines
		var refs []lineRef
		var want []*Selection
		for k := range 300 {
			a := 1 + rng.Int64N(n)
			b := a + rng.Int64N(min(n-a+1, 2000))
			if k%7 == 0 {
				b = a
			}
			r := Ref{Kind: RefLines, ID: id, Start: a, End: b}
			if !batchable(v, r) {
				t.Fatalf("%s %d-%d not batchable", id, a, b)
			}
			s, err := Select(v, r)
			if err != nil {
				t.Fatal(err)
			}
			refs = append(refs, lineRef{node: k, ref: r})
			want = append(want, s)
		}
		p := &Plan{sels: make([][]*Selection, len(refs))}
		for i := range p.sels {
			p.sels[i] = make([]*Selection, 1)
		}
		if err := p.locateLines(v, refs); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			g := p.sels[i][0]
			if g.Start != w.Start || g.End != w.End {
				t.Errorf("%s lines %d-%d: got %d-%d, Select %d-%d", id, w.Ref.Start, w.Ref.End, g.Start, g.End, w.Start, w.End)
			}
			if start, end, _, _ := peek.LineSpan(v, w.Ref.Start, w.Ref.End); start != g.Start || end != g.End {
				t.Errorf("%s: peek.LineSpan disagrees", id)
			}
		}
		v.Close()
	}
	// Ranges Select refuses are not batched, so they fail as Select says.
	v, _ := x.Store.OpenValue("r", "small")
	defer v.Close()
	for _, r := range []Ref{{Kind: RefLines, Start: 0, End: 1}, {Kind: RefLines, Start: 2, End: 1}, {Kind: RefLines, Start: 5, End: 6}, {Kind: RefLines, Start: 6, End: 6}, {Kind: RefLines, Start: 1, End: 1, SHA256: strings.Repeat("a", 64)}} {
		if batchable(v, r) {
			t.Errorf("%+v is batchable", r)
		}
	}
}

// TestExpandLargeOutput: a value far larger than a chunk of the output
// buffer, rebuilt from many ranges, comes out exactly.
func TestExpandLargeOutput(t *testing.T) {
	var v strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&v, "%d\t\"é\"\n", i)
	}
	x := newExpander(t, map[string]string{"v": v.String()})
	var tmpl bytes.Buffer
	tmpl.WriteString(`{"content": {"$concat": [`)
	for i := 0; i < 60000; i += 997 {
		if i > 0 {
			tmpl.WriteString(", ")
		}
		fmt.Fprintf(&tmpl, `{"$ref": "v", "lines": [%d, %d]}`, i+1, min(i+997, 60000))
	}
	tmpl.WriteString("]}}")
	out, r := expandString(t, x, tmpl.String(), true)
	var doc struct{ Content string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Content != v.String() {
		t.Fatalf("content differs (%v)", err)
	}
	if r.Expansions[0].SHA256 != digest(v.String()) || r.Expansions[0].Bytes != int64(v.Len()) {
		t.Errorf("expansion %+v", r.Expansions[0])
	}
	var w bytes.Buffer
	if n, err := r.WriteTo(&w); err != nil || n != r.Len() || w.String() != out {
		t.Errorf("WriteTo: %d %v", n, err)
	}
}

// TestPlan: the two steps Expand takes, for a harness that checks a
// template before running anything.
func TestPlan(t *testing.T) {
	x := newExpander(t, expandValues)
	tm, err := ParseTemplate([]byte(`{"a": {"$ref": "nl"}, "b": {"$concat": [{"$ref": "crlf", "lines": [1, 2]}, "!"]}, "c": {"$literal": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := x.Plan(tm)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Size() != 4+10+1 {
		t.Errorf("Size %d", p.Size())
	}
	var b bytes.Buffer
	n, err := p.WriteTo(&b)
	if err != nil || n != int64(b.Len()) || b.String() != `{"a": "a\nb\n", "b": "one\r\ntwo\r\n!", "c": 1}` {
		t.Errorf("WriteTo: %d %v %s", n, err, b.String())
	}
	if e := p.Expansions(); len(e) != 2 || e[1].Path != "/b" || e[1].Bytes != 11 || e[1].SHA256 != "" {
		t.Errorf("expansions %+v", e)
	}
	// A decoded string's length is not known before writing.
	tm, _ = ParseTemplate([]byte(`[{"$ref": "str", "pointer": "/s", "as": "string"}]`))
	p2, err := x.Plan(tm)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if p2.Size() != -1 {
		t.Errorf("Size %d", p2.Size())
	}
}
