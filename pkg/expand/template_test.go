package expand

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

func TestParseTemplateValidity(t *testing.T) {
	for _, doc := range []string{
		``, ` `, `{`, `}`, `[1,]`, `[1 2]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{1:2}`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `-01`, `1.5e3`, `-0.0E-7`, `0`, `-0`,
		`tru`, `true`, `truex`, `nul`, `null `, ` false`, `"a`, `"\x"`, `"\u12"`, `"\u12g4"`, `"\uD83D\uDE00"`,
		"\"a\tb\"", "\"a\x7fb\"", "\"\xff\xfe\"", `"\/"`, `[]`, `{}`, `[[[]]]`, `{"a":{"b":[1,{"c":null}]}}`,
		`1 2`, `{} {}`, "[1]\n", "\ufeff1", `[1,2`, `{"a":1`, `"\`, `{"a" 1}`, `[1:2]`,
		`{"$ref": "x"}`, `{"$ref": }`, `{"$concat": [1, "a"}`, `nulltrue`, `[-]`, `[1e5, -0.5e-3, 123456789012345678901234567890]`,
	} {
		_, err := ParseTemplate([]byte(doc))
		if (err == nil) != json.Valid([]byte(doc)) {
			t.Errorf("%q: ParseTemplate error %v, json.Valid %v", doc, err, json.Valid([]byte(doc)))
		}
		if err != nil && retain.CodeOf(err) != retain.CodeUsage {
			t.Errorf("%q: code %s, want usage", doc, retain.CodeOf(err))
		}
	}
}

func TestParseTemplateDepth(t *testing.T) {
	for _, n := range []int{MaxTemplateDepth, MaxTemplateDepth + 1} {
		doc := strings.Repeat("[", n) + strings.Repeat("]", n)
		_, err := ParseTemplate([]byte(doc))
		if (err == nil) != json.Valid([]byte(doc)) || (err == nil) != (n <= MaxTemplateDepth) {
			t.Errorf("depth %d: error %v, json.Valid %v", n, err, json.Valid([]byte(doc)))
		}
	}
}

func TestParseTemplateSyntaxMessage(t *testing.T) {
	_, err := ParseTemplate([]byte("{\"a\": 1,\n  \"b\": tru}"))
	want := `the template is not valid JSON: not true, a number, a string, an object or an array at byte 16 (line 2, column 8); send one JSON document, the tool call's arguments`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestParseTemplateNodes(t *testing.T) {
	doc := `{"a": [1, {"$ref": "x"}], "b~/c": {"$concat": ["t\u00e9\n", {"$ref": "y", "lines": [1, 2]}]},
	 "d": {"$literal": {"$ref": "z", "bogus": 1}}, "e": {"\u0024ref": "w", "pointer": "/p", "as": "value"},
	 "f": {"$expanded": {"bytes": 1}, "ref": "no"}, "g": [{"$ref": {"$ref": "inner"}, "lines": 1}], "h": {"$literal": 1.50}}`
	tm, err := ParseTemplate([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		path  string
		kind  NodeKind
		parts []string // part paths
		text  string   // the first text part
	}
	wants := []want{
		{"/a/1", NodeRef, []string{"/a/1"}, ""},
		{"/b~0~1c", NodeConcat, []string{"/b~0~1c/$concat/0", "/b~0~1c/$concat/1"}, "té\n"},
		{"/d", NodeLiteral, nil, ""},
		{"/e", NodeRef, []string{"/e"}, ""},
		{"/h", NodeLiteral, nil, ""},
	}
	if len(tm.Nodes) != len(wants) {
		t.Fatalf("%d nodes, want %d: %+v", len(tm.Nodes), len(wants), tm.Nodes)
	}
	for i, w := range wants {
		n := tm.Nodes[i]
		if n.Path != w.path || n.Kind != w.kind || len(n.Parts) != len(w.parts) {
			t.Errorf("node %d: %+v, want %+v", i, n, w)
			continue
		}
		for j, p := range n.Parts {
			if p.Path != w.parts[j] {
				t.Errorf("node %d part %d: path %q, want %q", i, j, p.Path, w.parts[j])
			}
		}
		if w.text != "" && string(n.Parts[0].Text) != w.text {
			t.Errorf("node %d: text %q, want %q", i, n.Parts[0].Text, w.text)
		}
	}
	if got := doc[tm.Nodes[2].LitStart:tm.Nodes[2].LitEnd]; got != `{"$ref": "z", "bogus": 1}` {
		t.Errorf("literal X %q", got)
	}
	if got := doc[tm.Nodes[4].LitStart:tm.Nodes[4].LitEnd]; got != `1.50` {
		t.Errorf("literal X %q", got)
	}
	if r := tm.Nodes[3].Parts[0].Ref; r.ID != "w" || r.As != AsValue || r.Pointer.String() != "/p" {
		t.Errorf("escaped $ref: %+v", r)
	}
	// "/g/0" is a malformed reference; what it holds is not walked.
	if len(tm.Failures) != 1 || tm.Failures[0].Path != "/g/0" || tm.Failures[0].Code != retain.CodeBadReference {
		t.Errorf("failures: %+v", tm.Failures)
	}
}

func TestParseTemplateFailures(t *testing.T) {
	for _, tc := range []struct {
		doc, path string
		code      retain.Code
		msg       string
	}{
		{`{"x": {"$ref": "a", "foo": 1}}`, "/x", retain.CodeBadReference, `unknown key "foo" in the reference`},
		{`{"x": {"$ref": "a", "lines": [1, 2], "bytes": [0, 1]}}`, "/x", retain.CodeBadReference, "at most one of bytes, lines, pointer and outline"},
		{`{"x": {"$ref": "a", "lines": [1]}}`, "/x", retain.CodeBadReference, `"lines" must be an array of two integers`},
		{`{"x": {"$ref": 7}}`, "/x", retain.CodeBadReference, `"$ref" must be a string`},
		{`{"x": {"$ref": "a", "pointer": "a"}}`, "/x", retain.CodeBadPointer, `must be empty`},
		{`{"x": {"$ref": "a", "as": "value"}}`, "/x", retain.CodeBadReference, `"as" applies to a pointer selection only`},
		{`{"x": {"$ref": "a", "pointer": "", "as": "text"}}`, "/x", retain.CodeBadReference, `"as": "text"`},
		{`{"x": {"$list_results": 0}}`, "/x", retain.CodeBadReference, `"$list_results" is not allowed in a template`},
		{`[{"$concat": "a"}]`, "/0", retain.CodeBadReference, `"$concat" takes an array of strings and references, not a string`},
		{`[{"$concat": {"$ref": "a"}}]`, "/0", retain.CodeBadReference, `not an object`},
		{`{"c": {"$concat": ["a", 1]}}`, "/c/$concat/1", retain.CodeBadReference, `a $concat part must be a string or a {"$ref": ...} object, not a number`},
		{`{"c": {"$concat": [null]}}`, "/c/$concat/0", retain.CodeBadReference, `not a null`},
		{`{"c": {"$concat": [["a"]]}}`, "/c/$concat/0", retain.CodeBadReference, `not an array`},
		{`{"c": {"$concat": [{"$concat": []}]}}`, "/c/$concat/0", retain.CodeBadReference, `never a $concat or $literal`},
		{`{"c": {"$concat": [{"$ref": "a", "pointer": "", "as": "value"}]}}`, "/c/$concat/0", retain.CodeBadReference, `cannot be one`},
		{`{"c": {"$concat": [{"$list_results": 1}]}}`, "/c/$concat/0", retain.CodeBadReference, `not allowed in a template`},
		{`{"c": {"$concat": ["a"], "sep": ","}}`, "/c", retain.CodeBadReference, `"$concat" takes no other keys, and this node has "sep"`},
		{`{"c": {"x": 1, "$literal": 2}}`, "/c", retain.CodeBadReference, `"$literal" takes no other keys, and this node has "x"`},
		{`{"c": {"$literal": 1, "$literal": 2}}`, "/c", retain.CodeBadReference, `key "$literal" occurs more than once`},
		{`{"c": {"$ref": "a", "$literal": 2}}`, "/c", retain.CodeBadReference, `an object is one node`},
		{`{"c": {"$concat": [], "$literal": 2}}`, "/c", retain.CodeBadReference, `an object is one node`},
		{`{"c": {"$ref": "a", "$ref": "b"}}`, "/c", retain.CodeBadReference, `key "$ref" occurs more than once`},
		{`{"$ref": "a", "x": [1]}`, "", retain.CodeBadReference, `unknown key "x"`},
	} {
		tm, err := ParseTemplate([]byte(tc.doc))
		if err != nil {
			t.Errorf("%s: %v", tc.doc, err)
			continue
		}
		if len(tm.Failures) != 1 {
			t.Errorf("%s: failures %+v", tc.doc, tm.Failures)
			continue
		}
		f := tm.Failures[0]
		if f.Path != tc.path || f.Code != tc.code || !strings.Contains(f.Message, tc.msg) {
			t.Errorf("%s: got %q %s %q\nwant %q %s %q", tc.doc, f.Path, f.Code, f.Message, tc.path, tc.code, tc.msg)
		}
		if len(tm.Nodes) != 0 {
			t.Errorf("%s: a malformed node was kept: %+v", tc.doc, tm.Nodes)
		}
	}
}

func TestRefusalMessage(t *testing.T) {
	one := &Refusal{Failures: []Failure{{Path: "/a", Code: retain.CodeUnknownReference, Message: "no value"}}}
	if got, want := one.Error(), `nothing was expanded: 1 failure, at "/a" (unknown_reference); correct every failing node and send the whole template again`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	var many Refusal
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e"} {
		many.Failures = append(many.Failures, Failure{Path: p, Code: retain.CodeInvalidRange})
	}
	if d, _ := json.Marshal(one.ErrorDetails()); string(d) != `{"failures":[{"path":"/a","code":"unknown_reference","message":"no value"}]}` {
		t.Errorf("details %s", d)
	}
	if got, want := many.Error(), `nothing was expanded: 5 failures, at "/a" (invalid_range), "/b" (invalid_range), "/c" (invalid_range) and 2 more; correct every failing node and send the whole template again`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
