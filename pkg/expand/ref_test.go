package expand

import (
	"reflect"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

func TestParseRef(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	ptr := func(s string) Pointer { p, _ := ParsePointer(s); return p }
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{`{"$ref": "c1"}`, Ref{Kind: RefWhole, ID: "c1"}},
		{` {"bytes": [0, 10], "$ref": "c1"} `, Ref{Kind: RefBytes, ID: "c1", Start: 0, End: 10}},
		{`{"$ref": "c1", "lines": [3, 4]}`, Ref{Kind: RefLines, ID: "c1", Start: 3, End: 4}},
		{`{"$ref": "c1", "lines": [-0, 4]}`, Ref{Kind: RefLines, ID: "c1", Start: 0, End: 4}},
		{`{"$ref": "c1", "pointer": "/a~1b"}`, Ref{Kind: RefPointer, ID: "c1", Pointer: ptr("/a~1b"), As: AsLexeme}},
		{`{"$ref": "c1", "pointer": "", "as": "string"}`, Ref{Kind: RefPointer, ID: "c1", As: AsString}},
		{`{"$ref": "c1", "pointer": "/0", "as": "value"}`, Ref{Kind: RefPointer, ID: "c1", Pointer: ptr("/0"), As: AsValue}},
		{`{"$ref": "c1", "sha256": "` + strings.ToUpper(sha) + `"}`, Ref{Kind: RefWhole, ID: "c1", SHA256: sha}},
		{`{"$list_results": 2}`, Ref{Kind: RefList, Page: 2}},
		// The range forms of the command line, as strings.
		{`{"$ref": "c1", "lines": "670"}`, Ref{Kind: RefLines, ID: "c1", Start: 670, End: 670}},
		{`{"$ref": "c1", "lines": "670-"}`, Ref{Kind: RefLines, ID: "c1", Start: 670, End: peek.ToEnd}},
		{`{"$ref": "c1", "lines": "-50"}`, Ref{Kind: RefLines, ID: "c1", Tail: 50}},
		{`{"$ref": "c1", "lines": "3-4"}`, Ref{Kind: RefLines, ID: "c1", Start: 3, End: 4}},
		{`{"$ref": "c1", "bytes": "-4096"}`, Ref{Kind: RefBytes, ID: "c1", Tail: 4096}},
		{`{"$ref": "c1", "bytes": "100-"}`, Ref{Kind: RefBytes, ID: "c1", Start: 100, End: peek.ToEnd}},
		{`{"$ref": "c1", "bytes": "0-9"}`, Ref{Kind: RefBytes, ID: "c1", Start: 0, End: 9}},
	} {
		got, err := ParseRef([]byte(tc.in))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRefErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		code retain.Code
		msg  string
	}{
		{`[]`, retain.CodeBadReference, "must be a JSON object"},
		{`"c1"`, retain.CodeBadReference, "must be a JSON object"},
		{`{}`, retain.CodeBadReference, `no "$ref"`},
		{`{"$ref": ""}`, retain.CodeBadReference, `"$ref" is empty`},
		{`{"$ref": 1}`, retain.CodeBadReference, `"$ref" must be a string, not 1`},
		{`{"$ref": "c1", "lines": [1, 2], "bytes": [0, 1]}`, retain.CodeBadReference, "at most one of bytes, lines, pointer and outline"},
		{`{"$ref": "c1", "lines": [1, 2], "pointer": ""}`, retain.CodeBadReference, "names the one line whose document it applies to, as in [1, 1]"},
		{`{"$ref": "c1", "lines": [1, 1], "pointer": "", "bytes": [0, 1]}`, retain.CodeBadReference, "at most one of bytes, lines, pointer and outline"},
		{`{"$ref": "c1", "after": 3, "pointer": ""}`, retain.CodeBadReference, "\"after\" pages through an outline only"},
		{`{"$ref": "c1", "outline": "", "as": "string"}`, retain.CodeBadReference, "\"as\" applies to a pointer selection only"},
		{`{"$ref": "c1", "outline": "", "after": -1}`, retain.CodeBadReference, "positions count from 0"},
		{`{"$ref": "c1", "outline": "x"}`, retain.CodeBadPointer, "must be empty"},
		{`{"$ref": "c1", "lines": [1]}`, retain.CodeBadReference, `"lines" must be an array of two integers`},
		{`{"$ref": "c1", "lines": [1, 2, 3]}`, retain.CodeBadReference, `"lines" must be an array of two integers`},
		{`{"$ref": "c1", "lines": [1.5, 2]}`, retain.CodeBadReference, `"lines" must be an array of two integers`},
		{`{"$ref": "c1", "bytes": ["1", 2]}`, retain.CodeBadReference, `"bytes" must be an array of two integers`},
		{`{"$ref": "c1", "bytes": [1e2, 200]}`, retain.CodeBadReference, `"bytes" must be an array of two integers`},
		{`{"$ref": "c1", "bytes": [0, 99999999999999999999]}`, retain.CodeBadReference, `"bytes" must be an array of two integers`},
		{`{"$ref": "c1", "bytes": "9"}`, retain.CodeBadReference, `"bytes": "9" is not a range: want [0, 4096] or a string as on the command line ("4096-", "-4096")`},
		{`{"$ref": "c1", "lines": "-0"}`, retain.CodeBadReference, `"lines": "-0" is not a range`},
		{`{"$ref": "c1", "lines": "1-x"}`, retain.CodeBadReference, `"lines": "1-x" is not a range`},
		{`{"$ref": "c1", "as": "string"}`, retain.CodeBadReference, `"as" applies to a pointer selection only`},
		{`{"$ref": "c1", "pointer": "/a", "as": "text"}`, retain.CodeBadReference, `"as": "text": want "lexeme" or "string"`},
		{`{"$ref": "c1", "pointer": "a"}`, retain.CodeBadPointer, `must be empty (the whole document) or start with "/"`},
		{`{"$ref": "c1", "pointer": "/~2"}`, retain.CodeBadPointer, `"~" must be followed by 0 or 1`},
		{`{"$ref": "c1", "sha256": "abc"}`, retain.CodeBadReference, `is not 64 hex digits`},
		{`{"$ref": "c1", "Lines": [1, 2]}`, retain.CodeBadReference, `unknown key "Lines"`},
		{`{"$ref": "c1", "$ref": "c2"}`, retain.CodeBadReference, `key "$ref" occurs more than once`},
		{`{"$ref": "c1"} {}`, retain.CodeBadReference, `trailing data`},
		{`{"$ref": "c1"`, retain.CodeBadReference, `not valid JSON`},
		{`{"$list_results": 0, "$ref": "c1"}`, retain.CodeBadReference, `$list_results takes no other keys`},
		{`{"$list_results": -1}`, retain.CodeBadReference, `a page starts at a value counted from 0`},
		{`{"$list_results": "0"}`, retain.CodeBadReference, `must be where the page starts`},
	} {
		_, err := ParseRef([]byte(tc.in))
		if retain.CodeOf(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v (%s); want %s containing %q", tc.in, err, retain.CodeOf(err), tc.code, tc.msg)
		}
	}
}

// Flags and JSON make the same Ref through the same checks.
func TestRefFieldsMatchJSON(t *testing.T) {
	id, p, as := "c1", "/a/0", "string"
	f := RefFields{ID: &id, Pointer: &p, As: &as}
	got, err := f.Ref()
	want := mustRef(t, `{"$ref": "c1", "pointer": "/a/0", "as": "string"}`)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v, %v; want %+v", got, err, want)
	}
	f = RefFields{ID: &id, Bytes: &peek.RangeArg{First: 1, Last: 2}, Lines: &peek.RangeArg{First: 1, Last: 2}}
	if _, err := f.Ref(); retain.CodeOf(err) != retain.CodeBadReference {
		t.Fatalf("bytes and lines: %v", err)
	}
}

func TestParseBatch(t *testing.T) {
	calls, err := ParseBatch(strings.NewReader(`[{"$ref": "a"}, {"$ref": "b", "x": 1}, {"$list_results": 0}]`))
	if err != nil || len(calls) != 3 || calls[0].Ref.ID != "a" || calls[0].Err != nil ||
		retain.CodeOf(calls[1].Err) != retain.CodeBadReference || calls[2].Ref.Kind != RefList {
		t.Fatalf("%+v, %v", calls, err)
	}
	for _, in := range []string{``, `{"$ref": "a"}`, `[{"$ref": "a"}`, `[] []`, `[1,]`} {
		if _, err := ParseBatch(strings.NewReader(in)); retain.CodeOf(err) != retain.CodeBadReference {
			t.Errorf("%q: %v", in, err)
		}
	}
	if calls, err := ParseBatch(strings.NewReader(` [ ] `)); err != nil || len(calls) != 0 {
		t.Errorf("empty batch: %v, %v", calls, err)
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{
		`{"$ref": "c1"}`, `{"$ref": "c1", "bytes": [0, 10]}`, `{"$ref": "c\"1", "lines": [1, 2], "sha256": "` + strings.Repeat("0", 64) + `"}`,
		`{"$ref": "c1", "pointer": "/a~0~1\u00e9", "as": "string"}`, `{"$list_results": 3}`, `{"$ref": "\ud800"}`,
		`{"$ref": "c1", "outline": "/a", "after": 4}`, `{"$ref": "c1", "lines": [3, 3], "pointer": "/a"}`, `{"$ref": "c1", "lines": [2, 2], "outline": ""}`,
		`{"$ref": "c1", "lines": "-50"}`, `{"$ref": "c1", "bytes": "7-"}`, `{"$ref": "c1", "lines": "9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseRef(in)
		if err != nil {
			if c := retain.CodeOf(err); c != retain.CodeBadReference && c != retain.CodeBadPointer {
				t.Fatalf("%q: code %s", in, c)
			}
			return
		}
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ParseRef(b)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("%q → %s → %+v, %v; want %+v", in, b, r2, err, r)
		}
	})
}
