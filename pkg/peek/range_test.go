package peek

import (
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// The range forms people type: A-B, N, N- and -N for lines; A-B, N- and
// -N for bytes.
func TestParseRangeForms(t *testing.T) {
	for _, tc := range []struct {
		in          string
		lines, byts RangeArg
		linesOK     bool
		bytesOK     bool
	}{
		{"1-40", Between(1, 40), Between(1, 40), true, true},
		{"670", Between(670, 670), RangeArg{}, true, false},
		{"670-", RangeArg{First: 670, Last: ToEnd}, RangeArg{First: 670, Last: ToEnd}, true, true},
		{"-50", RangeArg{Tail: 50}, RangeArg{Tail: 50}, true, true},
		{"-0", RangeArg{}, RangeArg{}, false, false},
		{"-", RangeArg{}, RangeArg{}, false, false},
		{"", RangeArg{}, RangeArg{}, false, false},
		{"07", RangeArg{}, RangeArg{}, false, false},
		{"1--2", RangeArg{}, RangeArg{}, false, false},
		{"+5", RangeArg{}, RangeArg{}, false, false},
		{"1-2-3", RangeArg{}, RangeArg{}, false, false},
		{" 5", RangeArg{}, RangeArg{}, false, false},
	} {
		l, err := ParseLines(tc.in)
		if (err == nil) != tc.linesOK || err == nil && l != tc.lines {
			t.Errorf("ParseLines(%q) = %+v, %v", tc.in, l, err)
		}
		if err != nil && (retain.CodeOf(err) != retain.CodeUsage || !strings.Contains(err.Error(), "-N (the last N lines)")) {
			t.Errorf("ParseLines(%q): %v, want a usage error listing the forms", tc.in, err)
		}
		b, err := ParseBytes(tc.in)
		if (err == nil) != tc.bytesOK || err == nil && b != tc.byts {
			t.Errorf("ParseBytes(%q) = %+v, %v", tc.in, b, err)
		}
		if err == nil {
			if back, err := ParseBytes(b.String()); err != nil || back != b {
				t.Errorf("%q: String %q reads back as %+v, %v", tc.in, b.String(), back, err)
			}
		}
	}
}

func TestLinesOf(t *testing.T) {
	for _, tc := range []struct {
		r           RangeArg
		n           int64
		first, last int64
	}{
		{RangeArg{Tail: 50}, 10000, 9951, 10000},
		{RangeArg{Tail: 50}, 10, 1, 10},
		{RangeArg{Tail: 1}, 1, 1, 1},
		{RangeArg{Tail: 3}, 0, 1, ToEnd},
		{RangeArg{First: 7, Last: ToEnd}, 10, 7, ToEnd},
		{Between(7, 7), 10, 7, 7},
	} {
		if f, l := tc.r.LinesOf(tc.n); f != tc.first || l != tc.last {
			t.Errorf("%+v of %d lines = %d-%d, want %d-%d", tc.r, tc.n, f, l, tc.first, tc.last)
		}
	}
}

// -N bytes are the last N, never splitting a UTF-8 sequence; N- runs to
// the end; both are checked as any byte range is.
func TestByteSpan(t *testing.T) {
	src := newMem([]byte("abcé"), 0) // é is bytes 3-5
	for _, tc := range []struct {
		r          RangeArg
		start, end int64
		code       retain.Code
	}{
		{RangeArg{Tail: 2}, 3, 5, ""},
		{RangeArg{Tail: 1}, 5, 5, ""}, // the last byte alone would split é
		{RangeArg{Tail: 99}, 0, 5, ""},
		{RangeArg{First: 1, Last: ToEnd}, 1, 5, ""},
		{RangeArg{First: 5, Last: ToEnd}, 5, 5, ""},
		{RangeArg{First: 6, Last: ToEnd}, 0, 0, retain.CodeInvalidRange},
		{RangeArg{First: 4, Last: ToEnd}, 0, 0, retain.CodeInvalidRange}, // splits é
	} {
		s, e, err := byteSpan(src, tc.r)
		if retain.CodeOf(err) != tc.code || err == nil && (s != tc.start || e != tc.end) {
			t.Errorf("%+v: %d-%d, %v; want %d-%d, %q", tc.r, s, e, err, tc.start, tc.end, tc.code)
		}
	}
}

// A search within a line range counts, shows and continues within it.
func TestQueryWithinLines(t *testing.T) {
	src := newMem(numbered(30), 4)
	o := QueryOptions{Query: "line 1", FirstLine: 5, LastLine: 15}
	p, err := query(src, o, DefaultCaps)
	if err != nil {
		t.Fatal(err)
	}
	got := string(p.Render())
	want := "10: line 10\n11: line 11\n12: line 12\n13: line 13\n14: line 14\n15: line 15\n[6 matches in lines 5-15; shown 1-6]\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Context stays within the range; the stream agrees with the page.
	o = QueryOptions{Query: "line 5", Context: 2, FirstLine: 5, LastLine: ToEnd}
	p, err = query(src, o, Caps{Lines: 2})
	if err != nil {
		t.Fatal(err)
	}
	want = "5: line 5\n[1 match in lines 5-30; shown 1-1]\n"
	if got := string(p.Render()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var b strings.Builder
	if err := writeQuery(&b, src, o, Caps{Lines: 2, Bytes: retain.Unlimited}); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("stream\n%s\nwant\n%s", b.String(), want)
	}
	if _, err := query(src, QueryOptions{Query: "x", FirstLine: 31, LastLine: 40}, DefaultCaps); retain.CodeOf(err) != retain.CodeInvalidRange {
		t.Errorf("a range past the end: %v, want invalid_range", err)
	}
}
