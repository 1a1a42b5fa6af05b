package expand

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// rfcDoc is the example document of RFC 6901 §5.
const rfcDoc = `{
      "foo": ["bar", "baz"],
      "": 0,
      "a/b": 1,
      "c%d": 2,
      "e^f": 3,
      "g|h": 4,
      "i\\j": 5,
      "k\"l": 6,
      " ": 7,
      "m~n": 8
   }
`

func find(t testing.TB, doc, ptr string, chunk int) (string, Span, error) {
	t.Helper()
	p, err := ParsePointer(ptr)
	if err != nil {
		return "", Span{}, err
	}
	sp, err := findPointer(strings.NewReader(doc), int64(len(doc)), p, chunk)
	if err != nil {
		return "", sp, err
	}
	return doc[sp.Start:sp.End], sp, nil
}

// chunks are the read sizes every table runs with: tiny ones put each
// token across a chunk boundary.
var chunks = []int{1, 2, 3, 5, 7, 64, chunkSize}

func TestPointerRFC6901(t *testing.T) {
	for _, tc := range []struct{ ptr, want string }{
		{"", strings.TrimSpace(rfcDoc)},
		{"/foo", `["bar", "baz"]`},
		{"/foo/0", `"bar"`},
		{"/", "0"},
		{"/a~1b", "1"},
		{"/c%d", "2"},
		{"/e^f", "3"},
		{"/g|h", "4"},
		{"/i\\j", "5"},
		{"/k\"l", "6"},
		{"/ ", "7"},
		{"/m~0n", "8"},
	} {
		for _, chunk := range chunks {
			got, _, err := find(t, rfcDoc, tc.ptr, chunk)
			if err != nil || got != tc.want {
				t.Errorf("pointer %q (chunk %d) = %q, %v; want %q", tc.ptr, chunk, got, err, tc.want)
			}
		}
	}
}

func TestPointerLexemes(t *testing.T) {
	doc := "\r\n\t {\"n\": [1.00000000000000000001, 123456789012345678901234567890, -0, 1e400, -1.5E-07, 0],\n" +
		" \"s\": \"a\\\"b\\\\\", \"o\": { \"x\" : [ ] , \"y\" :{}} , \"t\": true, \"f\": false, \"z\": null,\n" +
		" \"a\\u0062\": \"ab-escaped\", \"\\ud83d\\ude00\": \"smile\", \"é\": \"e-acute\", \"\\u00e9\\/\": \"escaped e-acute and slash\"}\n\n"
	for _, tc := range []struct {
		ptr, want string
		kind      Kind
	}{
		{"/n/0", "1.00000000000000000001", KindNumber},
		{"/n/1", "123456789012345678901234567890", KindNumber},
		{"/n/2", "-0", KindNumber},
		{"/n/3", "1e400", KindNumber},
		{"/n/4", "-1.5E-07", KindNumber},
		{"/n/5", "0", KindNumber},
		{"/s", `"a\"b\\"`, KindString},
		{"/o", `{ "x" : [ ] , "y" :{}}`, KindObject},
		{"/o/x", `[ ]`, KindArray},
		{"/o/y", `{}`, KindObject},
		{"/t", "true", KindBool},
		{"/f", "false", KindBool},
		{"/z", "null", KindNull},
		{"/ab", `"ab-escaped"`, KindString},
		{"/😀", `"smile"`, KindString},
		{"/é", `"e-acute"`, KindString},
		{"/é~1", `"escaped e-acute and slash"`, KindString},
		{"", strings.TrimSpace(doc), KindObject},
	} {
		for _, chunk := range chunks {
			got, sp, err := find(t, doc, tc.ptr, chunk)
			if err != nil || got != tc.want || sp.Kind != tc.kind {
				t.Errorf("pointer %q (chunk %d) = %q %v, %v; want %q %v", tc.ptr, chunk, got, sp.Kind, err, tc.want, tc.kind)
			}
		}
	}
}

func TestPointerErrors(t *testing.T) {
	for _, tc := range []struct {
		doc, ptr string
		code     retain.Code
		msg      string
	}{
		{`{"a": 1}`, "a", retain.CodeBadPointer, `must be empty (the whole document) or start with "/"`},
		// What Git Bash makes of "/a" for a Windows program: the way out is said.
		{`{"a": 1}`, "C:/Program Files/Git/a", retain.CodeBadPointer, `is a Windows path: Git Bash turns an argument that starts with "/" into one when it runs a Windows program; run the command as MSYS_NO_PATHCONV=1 retval`},
		{`{"a": 1}`, `c:\a`, retain.CodeBadPointer, `MSYS_NO_PATHCONV=1`},
		{`{"a": 1}`, "/a~2", retain.CodeBadPointer, `"~" must be followed by 0 or 1`},
		{`{"a": 1}`, "/a~", retain.CodeBadPointer, `"~" must be followed by 0 or 1`},
		{`{"a": 1}`, "/b", retain.CodeBadPointer, `the object at the top level has no member "b"`},
		{`{"a": {"b": 1}}`, "/a/c", retain.CodeBadPointer, `the object at "/a" has no member "c"`},
		{`{"a": 1}`, "/a/b", retain.CodeBadPointer, `the value at "/a" is a number, which has no member "b"`},
		{`"s"`, "/0", retain.CodeBadPointer, `is a string, which has no member "0"`},
		{`[1, 2]`, "/-", retain.CodeBadPointer, `names the element after the last one`},
		{`[1, 2]`, "/01", retain.CodeBadPointer, `has a leading zero; write 1`},
		{`[1, 2]`, "/00", retain.CodeBadPointer, `has a leading zero; write 0`},
		{`[1, 2]`, "/2", retain.CodeBadPointer, `the array at the top level has 2 elements, so index 2 is past its end`},
		{`[]`, "/0", retain.CodeBadPointer, `has 0 elements`},
		{`[1]`, "/99999999999999999999999", retain.CodeBadPointer, `has 1 element, so`},
		{`[1, 2]`, "/x", retain.CodeBadPointer, `"x" is not an index`},
		{`[1, 2]`, "/", retain.CodeBadPointer, `"" is not an index`},
		{`[1, 2]`, "/+1", retain.CodeBadPointer, `is not an index`},
		{`{"a": 1, "b": 2, "a": 3}`, "/a", retain.CodeAmbiguousJSON, `member "a" occurs more than once in the object at the top level (values at bytes 6 and 22)`},
		{`{"a": 1, "a\u0000": 2, "\u0061": 3}`, "/a", retain.CodeAmbiguousJSON, `occurs more than once`},
		{`{"x": {"a": [1], "a": [2]}}`, "/x/a/0", retain.CodeAmbiguousJSON, `in the object at "/x"`},
		{`{"x": [{"a": 1}], "y": 0, "x": 2}`, "/x/0/a", retain.CodeAmbiguousJSON, `member "x" occurs more than once`},
		{``, "", retain.CodeNotJSON, `the document is empty`},
		{`   `, "", retain.CodeNotJSON, `unexpected end`},
		{`{"a": 1`, "/a", retain.CodeNotJSON, `unexpected end`},
		{`{"a": [1}`, "", retain.CodeNotJSON, `closes a container it did not open`},
		{`{"a": 1,}`, "/b", retain.CodeNotJSON, `found '}' where one of "\""`},
		{`{"a" 1}`, "/a", retain.CodeNotJSON, `found '1' where one of ":"`},
		{`{"a": tru}`, "/a", retain.CodeNotJSON, `not a number, true, false or null`},
		{`{"a": 01}`, "/a", retain.CodeNotJSON, `not a number`},
		{`[1 2]`, "/1", retain.CodeNotJSON, `found '2'`},
		{`{"a": "x`, "/a", retain.CodeNotJSON, `unterminated string`},
		{"{\"a\x01\": 1}", "/a\x01", retain.CodeNotJSON, `control character`},
		{`{"a": @}`, "/a", retain.CodeNotJSON, `unexpected '@'`},
	} {
		for _, chunk := range chunks {
			_, _, err := find(t, tc.doc, tc.ptr, chunk)
			if retain.CodeOf(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("doc %q pointer %q (chunk %d): %v (%s); want %s containing %q", tc.doc, tc.ptr, chunk, err, retain.CodeOf(err), tc.code, tc.msg)
			}
		}
	}
}

// Skipped strings end at a quote preceded by an even run of backslashes,
// wherever the chunk boundaries fall.
func TestPointerBackslashRuns(t *testing.T) {
	for n := 0; n < 9; n++ {
		for _, quoteInside := range []bool{false, true} {
			body := strings.Repeat(`\\`, n)
			if quoteInside {
				body += `\"]`
			}
			doc := fmt.Sprintf(`[{"k": ["%s", "%s"]}, "after"]`, body, body)
			for chunk := 1; chunk < 12; chunk++ {
				got, _, err := find(t, doc, "/1", chunk)
				if err != nil || got != `"after"` {
					t.Fatalf("doc %s chunk %d: %q, %v", doc, chunk, got, err)
				}
			}
		}
	}
}

func TestPointerDeepNesting(t *testing.T) {
	const depth = 200000
	doc := strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
	// Skipped whole, and walked level by level.
	got, _, err := find(t, doc, "", chunkSize)
	if err != nil || len(got) != len(doc) {
		t.Fatalf("root of deep document: %d bytes, %v", len(got), err)
	}
	got, _, err = find(t, doc, strings.Repeat("/0", depth), chunkSize)
	if err != nil || got != "1" {
		t.Fatalf("deepest element: %q, %v", got, err)
	}
	got, _, err = find(t, doc, "/0/0", chunkSize)
	if err != nil || len(got) != len(doc)-4 {
		t.Fatalf("/0/0: %d bytes, %v", len(got), err)
	}
	objs := strings.Repeat(`{"a":`, depth) + "2" + strings.Repeat("}", depth)
	got, _, err = find(t, objs, strings.Repeat("/a", depth), chunkSize)
	if err != nil || got != "2" {
		t.Fatalf("deepest member: %q, %v", got, err)
	}
	// Past the bound, an error rather than unbounded memory.
	tooDeep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, _, err := find(t, tooDeep, "", chunkSize); retain.CodeOf(err) != retain.CodeNotJSON || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("too deep: %v", err)
	}
}

func TestParsePointerRoundTrip(t *testing.T) {
	for _, s := range []string{"", "/", "//", "/a~0b~1c", "/~01", "/ü/ 0"} {
		p, err := ParsePointer(s)
		if err != nil || p.prefix(len(p.toks)) != s || p.String() != s {
			t.Errorf("%q: %q, %v", s, p.prefix(len(p.toks)), err)
		}
	}
	p, _ := ParsePointer("/~01")
	if !reflect.DeepEqual(p.Tokens(), []string{"~1"}) {
		t.Errorf("~01 decodes to %q, want ~1 (RFC 6901: ~1 is replaced before ~0)", p.Tokens())
	}
}

// node is an ordered JSON tree, built with encoding/json's tokenizer: the
// reference the streaming resolver is checked against.
type node struct {
	kind   Kind
	keys   []string
	vals   []*node
	scalar any
}

func parseTree(dec *json.Decoder) (*node, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case json.Delim:
		n := &node{kind: KindArray}
		if v == '{' {
			n.kind = KindObject
		}
		for dec.More() {
			if n.kind == KindObject {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			c, err := parseTree(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, c)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: KindString, scalar: v}, nil
	case json.Number:
		return &node{kind: KindNumber, scalar: string(v)}, nil
	case bool:
		return &node{kind: KindBool, scalar: v}, nil
	default:
		return &node{kind: KindNull}, nil
	}
}

func tree(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return parseTree(dec)
}

// refFind is RFC 6901 over the tree: the first member of each name is
// followed; then a looked-up name that occurs twice anywhere on the path
// makes the pointer ambiguous.
func refFind(root *node, toks []string) (*node, retain.Code) {
	cur := root
	dup := false
	for _, tok := range toks {
		switch cur.kind {
		case KindObject:
			var next *node
			for i, k := range cur.keys {
				if k == tok {
					if next != nil {
						dup = true
						break
					}
					next = cur.vals[i]
				}
			}
			if next == nil {
				return nil, retain.CodeBadPointer
			}
			cur = next
		case KindArray:
			if tok == "-" || tok == "" || strings.TrimLeft(tok, "0123456789") != "" || len(tok) > 1 && tok[0] == '0' {
				return nil, retain.CodeBadPointer
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(cur.vals) {
				return nil, retain.CodeBadPointer
			}
			cur = cur.vals[i]
		default:
			return nil, retain.CodeBadPointer
		}
	}
	if dup {
		return nil, retain.CodeAmbiguousJSON
	}
	return cur, ""
}

func FuzzFindPointer(f *testing.F) {
	f.Add([]byte(rfcDoc), "/foo/1", uint8(3))
	f.Add([]byte(`{"a\u0062": [1, {"c": "d\"}"}], "x": -0.5e+3}`), "/ab/1/c", uint8(1))
	f.Add([]byte(`{"a": 1, "a": 2}`), "/a", uint8(0))
	f.Add([]byte(`[[[["\\\\\""]]]]`), "/0/0/0/0", uint8(2))
	f.Add([]byte(`{"\ud800": 1, "\udc00\ud800": 2}`), "/\ufffd", uint8(5))
	f.Add([]byte("{\"\xff\": 1}"), "/\ufffd", uint8(5))
	f.Fuzz(func(t *testing.T, doc []byte, ptr string, chunk uint8) {
		p, err := ParsePointer(ptr)
		if err != nil {
			return
		}
		sp, err := findPointer(bytes.NewReader(doc), int64(len(doc)), p, 1+int(chunk))
		if err == nil && (sp.Start < 0 || sp.Start > sp.End || sp.End > int64(len(doc))) {
			t.Fatalf("span %v outside a document of %d bytes", sp, len(doc))
		}
		if !json.Valid(doc) {
			return // only safety is promised; the descriptor's json field guards the rest
		}
		root, terr := tree(doc)
		if terr != nil {
			t.Fatalf("tree of a valid document: %v", terr)
		}
		want, code := refFind(root, p.Tokens())
		if code != "" {
			if retain.CodeOf(err) != code {
				t.Fatalf("pointer %q: got %v (%s), want %s", ptr, err, retain.CodeOf(err), code)
			}
			return
		}
		if err != nil {
			t.Fatalf("pointer %q: %v, want a value", ptr, err)
		}
		lex := doc[sp.Start:sp.End]
		if len(bytes.TrimSpace(lex)) != len(lex) || !json.Valid(lex) {
			t.Fatalf("pointer %q: lexeme %q is not exactly one value", ptr, lex)
		}
		got, err := tree(lex)
		if err != nil || !reflect.DeepEqual(got, want) || sp.Kind != want.kind {
			t.Fatalf("pointer %q: lexeme %q (%v), want %#v", ptr, lex, sp.Kind, want)
		}
		if want.kind == KindString {
			text, err := jsonstr.AppendDecoded(nil, lex[1:len(lex)-1])
			if err != nil || string(text) != want.scalar.(string) {
				t.Fatalf("pointer %q: decoded %q, %v; want %q", ptr, text, err, want.scalar)
			}
		}
	})
}

// failingReader fails every read past its first good bytes.
type failingReader struct {
	doc  []byte
	good int64
}

var errDisk = retain.Errorf(retain.CodeCorrupt, "block does not match its digest")

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.good {
		return 0, errDisk
	}
	return copy(p, f.doc[off:]), nil
}

// A read error is returned as it is (corrupt, I/O), never as not_json.
func TestPointerReadError(t *testing.T) {
	doc := []byte(`{"a": "` + strings.Repeat("x", 100) + `", "b": [1, 2, 3], "c": {"d": "e"}}`)
	p, _ := ParsePointer("/c/d")
	for good := int64(0); good < int64(len(doc)); good += 7 {
		_, err := findPointer(failingReader{doc, good}, int64(len(doc)), p, 16)
		if err != errDisk {
			t.Fatalf("good %d: %v", good, err)
		}
	}
}
