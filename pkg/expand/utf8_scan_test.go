package expand

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// A Raw resolver (one reference to a byte stream) answers the bytes the
// value holds; only a lone surrogate, for which no bytes exist, fails.
func TestRawLookups(t *testing.T) {
	rs := newStore(t, latin1Values)
	rs.Raw = true
	ans, err := rs.Lookups(lookups(t, `{"$ref": "cafe"}`, `{"$ref": "page", "lines": [5, 5]}`, `{"$ref": "lone", "pointer": "/s", "as": "string"}`), Budget{}, &Spent{})
	if err != nil {
		t.Fatal(err)
	}
	if ans[0].Err != nil || string(ans[0].Text) != "caf\xe9\n" {
		t.Fatalf("%q, %v", ans[0].Text, ans[0].Err)
	}
	if ans[1].Err != nil || string(ans[1].Text) != strings.SplitAfter(latin1Page, "\n")[4] {
		t.Fatalf("%q, %v", ans[1].Text, ans[1].Err)
	}
	var e *NotUTF8Error
	if !errors.As(ans[2].Err, &e) || e.Escape != `\ud800` || e.Offset != 8 || e.Value != "lone" {
		t.Fatalf("%v: %+v", ans[2].Err, e)
	}
	// Rendered as JSON, a raw answer that is not UTF-8 is the not_utf8
	// error it is there, never a text with U+FFFD in it.
	b, err := json.Marshal(ans[0])
	if err != nil || string(b) != `{"ok":false,"error":{"code":"not_utf8","message":"the text is not valid UTF-8 at its byte 3 (0xe9), and a JSON string cannot carry it; select bytes that leave it out"}}` {
		t.Fatalf("%s, %v", b, err)
	}
	// Not raw: the typed error carries the value's offset.
	rs.Raw = false
	ans, _ = rs.Lookups(lookups(t, `{"$ref": "page", "lines": [5, 5]}`), Budget{}, &Spent{})
	if !errors.As(ans[0].Err, &e) || e.Value != "page" || e.Offset != int64(firstBad(latin1Page)) || e.Byte != 0xe9 || retain.CodeOf(ans[0].Err) != retain.CodeNotUTF8 {
		t.Fatalf("%v: %+v", ans[0].Err, e)
	}
}

// The scanner, fed valid UTF-8 in pieces cut everywhere, finds nothing.
func TestUTF8ScanPieces(t *testing.T) {
	v := strings.Repeat("x", 1<<16-2) + "😀é" + strings.Repeat("y", 10)
	for _, s := range []string{v[1<<16-8 : 1<<16+8], "aé😀z", "\xe2\x82\xac", "€"} {
		for n := 1; n <= len(s); n++ {
			u := newUTF8Scan("v", 0)
			for i := 0; i < len(s); i += n {
				u.Write([]byte(s[i:min(i+n, len(s))]))
			}
			if err := u.err(); err != nil {
				t.Fatalf("%q in pieces of %d: %v", s, n, err)
			}
		}
	}
}

// The scanner finds the first bad byte wherever the pieces are cut.
func TestUTF8ScanOffsets(t *testing.T) {
	for _, tc := range []struct {
		s   string
		bad int64
	}{
		{"caf\xe9", 3}, {"\xff", 0}, {"ab\xe2\x82", 2}, {"ab\xe2\x82x", 2}, {"é\x80", 2},
		{"😀\xf0\x9f\x98", 4}, {"\xed\xa0\x80", 0}, {"ok", -1}, {"", -1}, {"a€b😀", -1},
	} {
		for n := 1; n <= max(1, len(tc.s)); n++ {
			u := newUTF8Scan("v", 100)
			for i := 0; i < len(tc.s); i += n {
				u.Write([]byte(tc.s[i:min(i+n, len(tc.s))]))
			}
			err := u.err()
			switch {
			case tc.bad < 0 && err != nil:
				t.Errorf("%q/%d: %v", tc.s, n, err)
			case tc.bad >= 0 && (retain.CodeOf(err) != retain.CodeNotUTF8 || !strings.Contains(err.Error(), "at byte "+itoa(100+int(tc.bad))+" ")):
				t.Errorf("%q/%d: %v; want byte %d", tc.s, n, err, 100+tc.bad)
			}
		}
	}
}
