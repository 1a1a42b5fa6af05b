package expand

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// newStore returns a store whose run "r" holds the given values.
func newStore(t testing.TB, values map[string]string) *Resolver {
	t.Helper()
	s := retain.Open(t.TempDir())
	lim := retain.DefaultLimits()
	lim.Threshold, lim.MaxValueSize, lim.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
	for id, v := range values {
		if _, err := s.Retain(strings.NewReader(v), io.Discard, retain.RetainOptions{Run: "r", Call: id, Limits: lim, Policy: retain.PolicyLegacy}); err != nil {
			t.Fatal(err)
		}
	}
	return &Resolver{Store: s, Run: "r"}
}

func mustRef(t testing.TB, js string) Ref {
	t.Helper()
	r, err := ParseRef([]byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return r
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

const crlf = "one\r\ntwo\r\nthree\r\nfour" // no final newline

var testValues = map[string]string{
	"crlf": crlf,
	"nl":   "a\nb\n",
	"utf":  "aé😀z",
	"json": "  {\"a\": [1.00000000000000000001, \"x\\ny\\u00e9\"], \"big\": 123456789012345678901234567890, \"neg\": -0, \"inf\": 1e400}\n",
	"dup":  `{"a": 1, "a": 2}`,
	"text": "not json\n",
	"long": `{"s": "` + strings.Repeat("x", 9000) + `", "e": "` + strings.Repeat(`\n`, 9000) + `"}`,
}

func TestSelect(t *testing.T) {
	rs := newStore(t, testValues)
	for _, tc := range []struct{ ref, want string }{
		{`{"$ref": "crlf"}`, crlf},
		{`{"$ref": "#crlf"}`, crlf},
		{`{"$ref": "crlf", "lines": [1, 1]}`, "one\r\n"},
		{`{"$ref": "crlf", "lines": [2, 3]}`, "two\r\nthree\r\n"},
		{`{"$ref": "crlf", "lines": [4, 4]}`, "four"},
		{`{"$ref": "crlf", "lines": [3, 4]}`, "three\r\nfour"},
		{`{"$ref": "nl", "lines": [2, 2]}`, "b\n"},
		{`{"$ref": "crlf", "bytes": [3, 5]}`, "\r\n"},
		{`{"$ref": "crlf", "bytes": [0, 0]}`, ""},
		{`{"$ref": "utf", "bytes": [1, 3]}`, "é"},
		{`{"$ref": "utf", "bytes": [3, 7]}`, "😀"},
		{`{"$ref": "json", "pointer": ""}`, strings.TrimSpace(testValues["json"])},
		{`{"$ref": "json", "pointer": "/a/0"}`, "1.00000000000000000001"},
		{`{"$ref": "json", "pointer": "/a/1"}`, `"x\ny\u00e9"`},
		{`{"$ref": "json", "pointer": "/a/1", "as": "string"}`, "x\nyé"},
		{`{"$ref": "json", "pointer": "/a/1", "as": "lexeme"}`, `"x\ny\u00e9"`},
		{`{"$ref": "json", "pointer": "/big"}`, "123456789012345678901234567890"},
		{`{"$ref": "json", "pointer": "/neg"}`, "-0"},
		{`{"$ref": "json", "pointer": "/inf"}`, "1e400"},
		{`{"$ref": "nl", "sha256": "` + digest("a\nb\n") + `"}`, "a\nb\n"},
		{`{"$ref": "nl", "sha256": "` + strings.ToUpper(digest("a\nb\n")) + `", "lines": [1, 1]}`, "a\n"},
		// The forms people type.
		{`{"$ref": "crlf", "lines": "2"}`, "two\r\n"},
		{`{"$ref": "crlf", "lines": "3-"}`, "three\r\nfour"},
		{`{"$ref": "crlf", "lines": "-1"}`, "four"},
		{`{"$ref": "crlf", "lines": "-9"}`, crlf},
		{`{"$ref": "utf", "bytes": "-5"}`, "😀z"},
		{`{"$ref": "utf", "bytes": "-4"}`, "z"}, // -4 would split 😀
		{`{"$ref": "utf", "bytes": "3-"}`, "😀z"},
	} {
		s, err := rs.Open(mustRef(t, tc.ref))
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		got, err := s.Text(8192)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
		var sb strings.Builder
		if n, err := s.WriteTo(&sb); err != nil || sb.String() != tc.want || n != int64(len(tc.want)) {
			t.Errorf("%s WriteTo = %q (%d), %v; want %q", tc.ref, sb.String(), n, err, tc.want)
		}
		s.Close()
	}
}

func TestSelectErrors(t *testing.T) {
	rs := newStore(t, testValues)
	for _, tc := range []struct {
		ref  string
		code retain.Code
		msg  string
	}{
		{`{"$ref": "nope"}`, retain.CodeUnknownReference, `no value "nope" in run "r"`},
		{`{"$ref": "crlf", "lines": [4, 5]}`, retain.CodeInvalidRange, "line range 4-5 ends past the end: the value has lines 1-4; ask for lines 4-4"},
		{`{"$ref": "crlf", "lines": [5, 5]}`, retain.CodeInvalidRange, "line range 5-5 starts past the end: the value has lines 1-4"},
		{`{"$ref": "crlf", "lines": [0, 1]}`, retain.CodeInvalidRange, "lines count from 1"},
		{`{"$ref": "crlf", "lines": [3, 2]}`, retain.CodeInvalidRange, "must not be reversed"},
		{`{"$ref": "utf", "bytes": [2, 3]}`, retain.CodeInvalidRange, "offset 2 splits a UTF-8 sequence; the nearest boundaries are 1 and 3"},
		{`{"$ref": "utf", "bytes": [1, 5]}`, retain.CodeInvalidRange, "offset 5 splits a UTF-8 sequence; the nearest boundaries are 3 and 7"},
		{`{"$ref": "utf", "bytes": [3, 2]}`, retain.CodeInvalidRange, "start is after end"},
		{`{"$ref": "utf", "bytes": [0, 99]}`, retain.CodeInvalidRange, "byte range 0-99 ends past the end: the value has bytes 0-8 (8 bytes); ask for bytes 0-8"},
		{`{"$ref": "utf", "bytes": [9, 12]}`, retain.CodeInvalidRange, "byte range 9-12 starts past the end: the value has bytes 0-8 (8 bytes)"},
		{`{"$ref": "utf", "bytes": [-1, 2]}`, retain.CodeInvalidRange, "must be ≥ 0"},
		{`{"$ref": "text", "pointer": ""}`, retain.CodeNotJSON, `value "text" is not one valid JSON document`},
		{`{"$ref": "dup", "pointer": "/a"}`, retain.CodeAmbiguousJSON, `member "a" occurs more than once`},
		{`{"$ref": "json", "pointer": "/a", "as": "string"}`, retain.CodeNotString, `pointer "/a" selects an array, not a string`},
		{`{"$ref": "json", "pointer": "/a/2"}`, retain.CodeBadPointer, `has 2 elements`},
		{`{"$ref": "nl", "sha256": "` + digest("other") + `"}`, retain.CodeDigestMismatch, `has sha256 ` + digest("a\nb\n")},
		{`{"$ref": "long", "pointer": "/s"}`, retain.CodeTooLarge, "the selection is 9002 bytes, over the 8192-byte bound of one lookup"},
		{`{"$ref": "long", "pointer": "/s", "as": "string"}`, retain.CodeTooLarge, "a string of over 8192 bytes"},
		{`{"$ref": "long", "pointer": "/e", "as": "string"}`, retain.CodeTooLarge, "a string of over 8192 bytes"},
		{`{"$ref": "long"}`, retain.CodeTooLarge, "over the 8192-byte bound"},
	} {
		s, err := rs.Open(mustRef(t, tc.ref))
		if err == nil {
			_, err = s.Text(8192)
			s.Close()
		}
		if retain.CodeOf(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v (%s); want %s containing %q", tc.ref, err, retain.CodeOf(err), tc.code, tc.msg)
		}
	}
}

// An escaped string's text may be far shorter than its lexeme: the bound
// applies to the text.
func TestSelectDecodedBound(t *testing.T) {
	rs := newStore(t, map[string]string{"j": `["` + strings.Repeat(`\u0041`, 8000) + `"]`})
	s, err := rs.Open(mustRef(t, `{"$ref": "j", "pointer": "/0", "as": "string"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Text(8192)
	if err != nil || string(got) != strings.Repeat("A", 8000) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}
