package peek

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/retain"
)

// numbered returns n lines "line K\n".
func numbered(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.Bytes()
}

func TestLinesRender(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes of 2-byte sequences
	cases := []struct {
		name        string
		value       string
		first, last int64
		caps        Caps
		want        string
	}{
		{"gutter", "a\nb\nc\n", 1, ToEnd, DefaultCaps, "1: a\n2: b\n3: c\n"},
		{"range", "a\nb\nc\n", 2, 3, DefaultCaps, "2: b\n3: c\n"},
		{"last past the end is cut and says so", "a\nb\nc\n", 2, 99, DefaultCaps, "2: b\n3: c\n[lines 2-3 of 3; the value ends at line 3]\n"},
		{"last just past the end", "a\nb\nc", 3, 4, DefaultCaps, "3: c\n[lines 3-3 of 3; the value ends at line 3]\n"},
		{"last at the end is exact", "a\nb\nc\n", 2, 3, DefaultCaps, "2: b\n3: c\n"},
		{"past the end, cut by the line cap first", string(numbered(10)), 2, 99, Caps{Lines: 3}, "2: line 2\n3: line 3\n4: line 4\n[lines 2-4 of 10; next: --lines 5-7]\n"},
		{"past the end, the last page", string(numbered(10)), 8, 99, Caps{Lines: 3}, "8: line 8\n9: line 9\n10: line 10\n[lines 8-10 of 10; the value ends at line 10]\n"},
		{"past the end, a cut line", "x\n" + long, 2, 5, Caps{Bytes: 150},
			"2: " + strings.Repeat("é", 11) + "\n[lines 2-2 of 2, line 2 cut; rest of line 2: --bytes 24-602; the value ends at line 2]\n"},
		{"past the end with no caps", string(numbered(3)), 2, 9, NoCaps, "2: line 2\n3: line 3\n[lines 2-3 of 3; the value ends at line 3]\n"},
		{"no final newline stays so", "a\nb", 1, ToEnd, DefaultCaps, "1: a\n2: b"},
		{"crlf shown as stored", "a\r\nb\r\n", 1, 2, DefaultCaps, "1: a\r\n2: b\r\n"},
		{"empty lines", "\n\nx\n", 1, ToEnd, DefaultCaps, "1: \n2: \n3: x\n"},
		{"line cap", string(numbered(10)), 1, ToEnd, Caps{Lines: 3}, "1: line 1\n2: line 2\n3: line 3\n[lines 1-3 of 10; next: --lines 4-6]\n"},
		{"line cap in range", string(numbered(10)), 2, 5, Caps{Lines: 3}, "2: line 2\n3: line 3\n4: line 4\n[lines 2-4 of 10; next: --lines 5-7]\n"},
		{"a full page names the next", string(numbered(10)), 2, 4, Caps{Lines: 3}, "2: line 2\n3: line 3\n4: line 4\n[lines 2-4 of 10; next: --lines 5-7]\n"},
		{"a short explicit range is exact", string(numbered(10)), 2, 3, Caps{Lines: 3}, "2: line 2\n3: line 3\n"},
		{"line cap at the end of the value", string(numbered(4)), 1, ToEnd, Caps{Lines: 4}, "1: line 1\n2: line 2\n3: line 3\n4: line 4\n"},
		{"byte cap", string(numbered(100)), 1, ToEnd, Caps{Bytes: 130},
			"1: line 1\n2: line 2\n3: line 3\n[lines 1-3 of 100; next: --lines 4-100]\n"},
		{"byte cap with a line cap", string(numbered(100)), 1, ToEnd, Caps{Lines: 10, Bytes: 130},
			"1: line 1\n2: line 2\n3: line 3\n[lines 1-3 of 100; next: --lines 4-13]\n"},
		{"byte cap, explicit range", string(numbered(100)), 5, 6, Caps{Bytes: 130}, "5: line 5\n6: line 6\n"},
		{"long line cut on a UTF-8 boundary", "x\n" + long + "\ny\n", 2, 3, Caps{Bytes: 150},
			"2: " + strings.Repeat("é", 25) + "\n[lines 2-2 of 3, line 2 cut; rest of line 2: --bytes 52-602; next: --lines 3-3]\n"},
		{"long last line without newline", long, 1, 1, Caps{Bytes: 120},
			"1: " + strings.Repeat("é", 10) + "\n[lines 1-1 of 1, line 1 cut; rest of line 1: --bytes 20-600]\n"},
		{"invalid UTF-8 cut anywhere", strings.Repeat("\xff", 300) + "\n", 1, ToEnd, Caps{Bytes: 120},
			"1: " + strings.Repeat("\xff", 21) + "\n[lines 1-1 of 1, line 1 cut; rest of line 1: --bytes 21-300]\n"},
		{"empty value", "", 1, ToEnd, DefaultCaps, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, stride := range []int64{0, 1, 2, 512} {
				p, err := lines(newMem([]byte(tc.value), stride), tc.first, tc.last, tc.caps)
				if err != nil {
					t.Fatal(err)
				}
				if got := string(p.Render()); got != tc.want {
					t.Errorf("stride %d:\ngot  %q\nwant %q", stride, got, tc.want)
				}
				if tc.caps.Bytes > 0 && int64(len(p.Render())) > tc.caps.Bytes {
					t.Errorf("stride %d: %d bytes rendered, cap %d", stride, len(p.Render()), tc.caps.Bytes)
				}
			}
		})
	}
}

func TestLinesErrors(t *testing.T) {
	v := newMem(numbered(3), 0)
	for _, tc := range []struct {
		first, last int64
		caps        Caps
		code        retain.Code
		msg         string
	}{
		{4, 5, DefaultCaps, retain.CodeInvalidRange, "line range 4-5 starts past the end: the value has lines 1-3"},
		{0, 5, DefaultCaps, retain.CodeInvalidRange, "lines count from 1"},
		{3, 2, DefaultCaps, retain.CodeInvalidRange, "must not be reversed"},
		{1, ToEnd, Caps{Lines: 1, Bytes: 20}, retain.CodeUsage, "too small"},
	} {
		_, err := lines(v, tc.first, tc.last, tc.caps)
		if retain.CodeOf(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("lines %d-%d: got %v, want %s %q", tc.first, tc.last, err, tc.code, tc.msg)
		}
	}
	if _, err := lines(newMem(nil, 0), 1, 1, DefaultCaps); retain.CodeOf(err) != retain.CodeInvalidRange {
		t.Errorf("explicit line of an empty value: %v", err)
	}
}

// TestPastTheEnd: a range that starts past the end of the value fails
// with invalid_range naming the valid range, for lines and bytes alike.
func TestPastTheEnd(t *testing.T) {
	v := newMem([]byte("héllo\nworld\n"), 0) // 13 bytes, 2 lines
	for _, tc := range []struct {
		err  error
		want string
	}{
		{checkLines(3, 9, 2), "line range 3-9 starts past the end: the value has lines 1-2"},
		{checkLines(3, ToEnd, 2), "line range 3- starts past the end: the value has lines 1-2"},
		{checkLines(1, 1, 0), "line range 1-1: the value is empty, it has no lines"},
		{checkBytes(v, 20, 30), "byte range 20-30 starts past the end: the value has bytes 0-13 (13 bytes); ask for a range within them"},
		{checkBytes(v, 13, 14), "byte range 13-14 ends past the end: the value has bytes 0-13 (13 bytes); ask for bytes 13-13"},
		{checkBytes(v, 4, 99), "byte range 4-99 ends past the end: the value has bytes 0-13 (13 bytes); ask for bytes 4-13"},
		{checkBytes(newMem([]byte("x"), 0), 0, 2), "byte range 0-2 ends past the end: the value has bytes 0-1 (1 byte); ask for bytes 0-1"},
	} {
		if retain.CodeOf(tc.err) != retain.CodeInvalidRange || tc.err.Error() != tc.want {
			t.Errorf("got %v, want invalid_range %q", tc.err, tc.want)
		}
	}
	for _, c := range []Caps{DefaultCaps, NoCaps} {
		if _, err := lines(v, 3, 4, c); retain.CodeOf(err) != retain.CodeInvalidRange {
			t.Errorf("lines 3-4 of 2, caps %+v: %v", c, err)
		}
		if err := writeLines(new(bytes.Buffer), v, 3, 4, c); retain.CodeOf(err) != retain.CodeInvalidRange {
			t.Errorf("write lines 3-4 of 2, caps %+v: %v", c, err)
		}
		if err := writeBytes(new(bytes.Buffer), v, 0, 14, c); retain.CodeOf(err) != retain.CodeInvalidRange {
			t.Errorf("write bytes 0-14 of 13, caps %+v: %v", c, err)
		}
	}
}

func TestQueryRender(t *testing.T) {
	v := []byte("alpha\nbeta\nGamma alpha\ndelta\nepsilon\nalphabet\nzeta\n")
	cases := []struct {
		name string
		o    QueryOptions
		caps Caps
		want string
	}{
		{"substring", QueryOptions{Query: "alpha"}, DefaultCaps, "1: alpha\n3: Gamma alpha\n6: alphabet\n[3 matches; shown 1-3]\n"},
		{"no match", QueryOptions{Query: "omega"}, DefaultCaps, "[0 matches]\n"},
		{"ignore case", QueryOptions{Query: "GAMMA", IgnoreCase: true}, DefaultCaps, "3: Gamma alpha\n[1 match; shown 1-1]\n"},
		{"case matters by default", QueryOptions{Query: "gamma"}, DefaultCaps, "[0 matches]\n"},
		{"regex anchors are the line's", QueryOptions{Query: "^alpha", Regex: true}, DefaultCaps, "1: alpha\n6: alphabet\n[2 matches; shown 1-2]\n"},
		{"regex end anchor", QueryOptions{Query: `a\z`, Regex: true}, DefaultCaps, "1: alpha\n2: beta\n3: Gamma alpha\n4: delta\n7: zeta\n[5 matches; shown 1-5]\n"},
		{"regex never spans lines", QueryOptions{Query: `beta\sGamma`, Regex: true}, DefaultCaps, "[0 matches]\n"},
		{"negated class never takes the newline", QueryOptions{Query: `a[^x]b`, Regex: true}, DefaultCaps, "[0 matches]\n"},
		{"dot-all dot never takes the newline", QueryOptions{Query: `(?s)a.b`, Regex: true}, DefaultCaps, "[0 matches]\n"},
		{"context", QueryOptions{Query: "delta", Context: 1}, DefaultCaps, "3: Gamma alpha\n4: delta\n5: epsilon\n[1 match; shown 1-1]\n"},
		{"context groups and separators", QueryOptions{Query: "^(beta|zeta)$", Regex: true, Context: 1}, DefaultCaps,
			"1: alpha\n2: beta\n3: Gamma alpha\n--\n6: alphabet\n7: zeta\n[2 matches; shown 1-2]\n"},
		{"match inside context", QueryOptions{Query: "alpha", Context: 1}, DefaultCaps,
			"1: alpha\n2: beta\n3: Gamma alpha\n4: delta\n5: epsilon\n6: alphabet\n7: zeta\n[3 matches; shown 1-3]\n"},
		{"paging", QueryOptions{Query: "alpha"}, Caps{Lines: 2}, "1: alpha\n3: Gamma alpha\n[3 matches; shown 1-2; next: --after-line 3]\n"},
		{"second page", QueryOptions{Query: "alpha", AfterLine: 3}, Caps{Lines: 2}, "6: alphabet\n[3 matches; shown 3-3]\n"},
		{"after the last", QueryOptions{Query: "alpha", AfterLine: 6}, Caps{Lines: 2}, "[3 matches; none after line 6]\n"},
		{"after past the end", QueryOptions{Query: "alpha", AfterLine: 100}, DefaultCaps, "[3 matches; none after line 100]\n"},
		{"context that does not fit is dropped for the first match", QueryOptions{Query: "delta", Context: 2}, Caps{Lines: 2}, "4: delta\n[1 match; shown 1-1]\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, stride := range []int64{0, 1, 3} {
				p, err := query(newMem(v, stride), tc.o, tc.caps)
				if err != nil {
					t.Fatal(err)
				}
				if got := string(p.Render()); got != tc.want {
					t.Errorf("stride %d:\ngot  %q\nwant %q", stride, got, tc.want)
				}
			}
		})
	}
}

// TestQueryLongLineWindow: a matching line longer than the cap is shown
// around its first match, however deep in the line, with the window's
// offsets and the --bytes range of the whole line.
func TestQueryLongLineWindow(t *testing.T) {
	v := []byte("short\n" + strings.Repeat("ab", 500) + "NEEDLE" + strings.Repeat("€", 100) + "\nNEEDLE again\n")
	for _, o := range []QueryOptions{{Query: "NEEDLE"}, {Query: "NEE+DLE", Regex: true}, {Query: "needle", IgnoreCase: true}} {
		p, err := query(newMem(v, 0), o, Caps{Bytes: 300})
		if err != nil {
			t.Fatal(err)
		}
		got := string(p.Render())
		// The room is 133 bytes: 63 before the match, 63 after it (21 €).
		want := "2: b" + strings.Repeat("ab", 31) + "NEEDLE" + strings.Repeat("€", 21) + "\n" +
			"[2 matches; shown 1-1, line 2 too long: showing bytes 943-1075 around the match at byte 1006; whole line: --bytes 6-1312; next: --after-line 2]\n"
		if got != want {
			t.Errorf("%+v:\ngot  %q\nwant %q", o, got, want)
		}
		if len(got) > 300 {
			t.Errorf("%d bytes, cap 300", len(got))
		}
	}
	// Near the start or the end of the line, the window uses the room on
	// the other side; a match longer than the room is shown from its start.
	end := []byte(strings.Repeat("x", 1000) + "END\n")
	p, err := query(newMem(end, 0), QueryOptions{Query: "END"}, Caps{Bytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Lines[0].Window; w == nil || w.End != 1003 || w.Match != 1000 || string(p.Lines[0].Text) != strings.Repeat("x", 1003-int(w.Start)-3)+"END" || 1003-w.Start < 100 {
		t.Errorf("a match at the end of the line: %q %+v", p.Render(), w)
	}
	start := []byte("START" + strings.Repeat("x", 1000) + "\n")
	p, err = query(newMem(start, 0), QueryOptions{Query: "START"}, Caps{Bytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Lines[0].Window; w == nil || w.Start != 0 || w.Match != 0 || !strings.HasPrefix(string(p.Lines[0].Text), "STARTxx") || w.End < 100 {
		t.Errorf("a match at the start of the line: %q %+v", p.Render(), w)
	}
	p, err = query(newMem(start, 0), QueryOptions{Query: "Sx*", Regex: true}, Caps{Bytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Lines[0].Window; w == nil || w.Start != 0 || w.Match != 0 {
		t.Errorf("a match longer than the window: %q %+v", p.Render(), w)
	}
	// Escaped, the window counts the escaped bytes and is cut between
	// sequences.
	esc := []byte(strings.Repeat("\x1b\u202e", 400) + "NEEDLE" + strings.Repeat("\u009b", 400) + "\n")
	p, err = query(newMem(esc, 0), QueryOptions{Query: "NEEDLE"}, Caps{Bytes: 300, Escape: true})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Render()
	if len(r) > 300 || !bytes.Contains(r, []byte(`\x1b\u202eNEEDLE\u009b`)) || !safetext.Clean(r) {
		t.Errorf("escaped window: %d bytes: %q", len(r), r)
	}
}

func TestQueryErrors(t *testing.T) {
	v := newMem([]byte("a\n"), 0)
	for _, o := range []QueryOptions{
		{Query: ""},
		{Query: "a\nb"},
		{Query: "(", Regex: true},
		{Query: "a", Context: -1},
		{Query: "a", AfterLine: -1},
	} {
		if _, err := query(v, o, DefaultCaps); retain.CodeOf(err) != retain.CodeUsage {
			t.Errorf("%+v: got %v, want a usage error", o, err)
		}
	}
	// Case folding is of runes: a query that is not UTF-8 is refused as
	// such, not as a --regex the caller did not give.
	o := QueryOptions{Query: "a\xffb", IgnoreCase: true}
	if _, err := query(v, o, DefaultCaps); retain.CodeOf(err) != retain.CodeUsage || strings.Contains(err.Error(), "--regex") {
		t.Errorf("%+v: got %v, want a usage error about the query", o, err)
	}
}

func TestBytesRender(t *testing.T) {
	v := []byte("héllo wörld\n" + strings.Repeat("x", 500))
	cases := []struct {
		start, end int64
		caps       Caps
		want       string
	}{
		{0, 6, DefaultCaps, "héllo"},
		{0, 0, DefaultCaps, ""},
		{3, 13, DefaultCaps, "llo wörld"},
		{3, 14, DefaultCaps, "llo wörld\n"},
		{0, 514, Caps{Bytes: 100}, "héllo wörld\n" + strings.Repeat("x", 39) + "\n[bytes 0-53 of 514; next: --bytes 53-514]\n"},
		{7, 514, Caps{Bytes: 100}, "wörld\n" + strings.Repeat("x", 46) + "\n[bytes 7-60 of 514; next: --bytes 60-514]\n"},
	}
	for _, tc := range cases {
		p, err := bytesPage(newMem(v, 0), tc.start, tc.end, tc.caps)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(p.Render()); got != tc.want {
			t.Errorf("%d-%d:\ngot  %q\nwant %q", tc.start, tc.end, got, tc.want)
		}
	}
	// A cut never splits a sequence.
	e := []byte(strings.Repeat("€", 100))
	p, err := bytesPage(newMem(e, 0), 0, 300, Caps{Bytes: 90})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Data)%3 != 0 || p.Next.First != int64(len(p.Data)) {
		t.Errorf("cut at %d: %s", len(p.Data), p.Trailer())
	}
	for _, r := range [][2]int64{{2, 6}, {0, 2}, {6, 5}, {0, 515}} {
		if _, err := bytesPage(newMem(v, 0), r[0], r[1], DefaultCaps); retain.CodeOf(err) != retain.CodeInvalidRange {
			t.Errorf("%v: got %v, want invalid_range", r, err)
		}
	}
}

func TestCapsFor(t *testing.T) {
	l := retain.DefaultLimits()
	cases := []struct {
		threshold, peekBytes int64
		explicit             bool
		want                 int64
		usage                bool
	}{
		{20 << 10, 16 << 10, false, 16 << 10, false},
		{8 << 10, 16 << 10, false, 8<<10 - 1, false}, // a lowered threshold lowers the cap
		{8 << 10, 16 << 10, true, 0, true},           // an explicit cap at or above it is refused
		{16 << 10, 16 << 10, true, 0, true},
		{16 << 10, 16<<10 - 1, true, 16<<10 - 1, false},
		{0, 16 << 10, true, 16 << 10, false}, // threshold 0: no bound
		{0, 0, true, retain.Unlimited, false},
		{20 << 10, 0, true, 0, true},
		{20 << 10, 0, false, 20<<10 - 1, false},
		// The cap is at least one byte below the threshold, never 0 (no
		// cap): a threshold of 1 leaves no room for any output.
		{1, 16 << 10, false, 0, true},
		{1, 0, false, 0, true},
		{1, 1, true, 0, true},
		{2, 16 << 10, false, 1, false},
		{3, 0, false, 2, false},
		{100, 16 << 10, false, 99, false},
	}
	for _, tc := range cases {
		l.Threshold, l.PeekBytes = retain.Setting(tc.threshold), retain.Setting(tc.peekBytes)
		c, err := CapsFor(l, tc.explicit)
		if tc.usage {
			if retain.CodeOf(err) != retain.CodeUsage {
				t.Errorf("%+v: got %v, want a usage error", tc, err)
			}
			continue
		}
		if err != nil || c.Bytes != tc.want || c.Lines != l.PeekLines || c.Bytes == 0 {
			t.Errorf("%+v: got %+v, %v", tc, c, err)
		}
	}
}

func TestStripGutter(t *testing.T) {
	cases := []struct{ in, want string }{
		{"12: foo\n13: bar\n", "foo\nbar\n"},
		{"12: foo\n13: bar", "foo\nbar"},
		{"5: x", "x"},
		{"7: a\r\n8: b\r\n", "a\r\nb\r\n"},
		{"3: a\n4:\n5: b\n", "a\n\nb\n"},   // a gutter whose space was trimmed
		{"3: a\n4: \n5: b\n", "a\n\nb\n"},  // an empty line as peek shows it
		{"3: a\n\n5: b\n", "a\n\nb\n"},     // an empty line takes its number
		{"10: 1: x\n11: 2: y\n", "x\ny\n"}, // stacked gutters
		{"10: 4: x\n11: 9: y\n", "4: x\n9: y\n"},
		{"404: not found\n500: oops\n", "404: not found\n500: oops\n"}, // not consecutive
		{"2024-05-01 start\n2024-05-02 stop\n", "2024-05-01 start\n2024-05-02 stop\n"},
		{"10:30 standup\n", "10:30 standup\n"},
		{"1: a\nb\n", "1: a\nb\n"}, // one line without a gutter
		{"01: a\n02: b\n", "01: a\n02: b\n"},
		{"0: a\n", "0: a\n"},
		{"", ""},
		{"\n\n", "\n\n"},
		{"plain text\n", "plain text\n"},
		{"12:foo\n", "12:foo\n"},
		{"99999999999999999999: x\n", "99999999999999999999: x\n"}, // too many digits
	}
	for _, tc := range cases {
		if got := StripGutter(tc.in); got != tc.want {
			t.Errorf("StripGutter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestStripGutterRoundTrip: a page's lines, stripped, are the value's bytes.
func TestStripGutterRoundTrip(t *testing.T) {
	v := []byte("func main() {\n\tfmt.Println(\"1: x\")\n\n}\r\nlast")
	p, err := lines(newMem(v, 0), 1, ToEnd, DefaultCaps)
	if err != nil {
		t.Fatal(err)
	}
	if got := StripGutter(string(p.Render())); got != string(v) {
		t.Errorf("got %q, want %q", got, v)
	}
}

// TestSeekBounded: a page at the end of a large value reads about as much
// as one at its start, through the index; without one it scans.
func TestSeekBounded(t *testing.T) {
	v := bigLog(200_000) // ~10 MiB
	n := int64(len(refSplit(v)))
	for _, tc := range []struct {
		first int64
	}{{1}, {n / 2}, {n - 399}} {
		with := newMem(v, 512)
		p, err := lines(with, tc.first, tc.first+399, DefaultCaps)
		if err != nil {
			t.Fatal(err)
		}
		if with.read > 4*int64(scanChunk) {
			t.Errorf("line %d with an index: read %d bytes", tc.first, with.read)
		}
		without := newMem(v, 0)
		q, err := lines(without, tc.first, tc.first+399, DefaultCaps)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.Render(), q.Render()) {
			t.Errorf("line %d: output differs with and without the index", tc.first)
		}
	}
}

// bigLog is a deterministic log of n lines, mixed ASCII and multi-byte.
func bigLog(n int) []byte {
	var b bytes.Buffer
	words := []string{"GET", "POST", "résumé", "日本語", "ошибка", "ok", "timeout", "🙂"}
	x := uint32(1)
	for i := 1; i <= n; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		fmt.Fprintf(&b, "%06d level=%d msg=%s user=%d", i, x%5, words[x%uint32(len(words))], x%9973)
		for k := range x % 7 {
			b.WriteString(" " + words[(x>>k)%uint32(len(words))])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestZeroCaps: the zero Caps are the defaults (400 lines, 16 KiB), a
// field left 0 takes its default, and only retain.Unlimited lifts a cap.
func TestZeroCaps(t *testing.T) {
	_, v := retainValue(t, append(numbered(1000), strings.Repeat("x", 40<<10)+"\n"...))
	render := func(p page, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return string(p.Render())
	}
	for _, tc := range []struct {
		name string
		c    Caps
		want string // the continuation line
	}{
		{"zero", Caps{}, "[lines 1-400 of 1001; next: --lines 401-800]"},
		{"defaults", DefaultCaps, "[lines 1-400 of 1001; next: --lines 401-800]"},
		{"lines only", Caps{Lines: 3}, "[lines 1-3 of 1001; next: --lines 4-6]"},
		{"no caps", NoCaps, ""},
	} {
		p, err := Lines(v, 1, ToEnd, tc.c)
		got := render(p, err)
		if p.Trailer() != tc.want {
			t.Errorf("%s: trailer %q, want %q", tc.name, p.Trailer(), tc.want)
		}
		if tc.c.Bytes >= 0 && len(got) > 16<<10 {
			t.Errorf("%s: %d bytes, over the default cap", tc.name, len(got))
		}
	}
	// No line cap: the default byte cap still holds.
	p, err := Lines(v, 1, ToEnd, Caps{Lines: retain.Unlimited})
	if got := render(p, err); len(got) > 16<<10 || p.Next == nil || p.Next.Last != 1001 {
		t.Errorf("no line cap: %d bytes, trailer %q", len(got), p.Trailer())
	}
	// The long last line: cut at 16 KiB unless the byte cap is lifted.
	for _, c := range []Caps{{}, {Lines: 5}} {
		got := render(Lines(v, 1001, 1001, c))
		if len(got) > 16<<10 || !strings.Contains(got, "line 1001 cut") {
			t.Errorf("caps %+v: %d bytes: %.80q", c, len(got), got)
		}
		got = render(Bytes(v, 0, v.Size(), c))
		if len(got) > 16<<10 || !strings.Contains(got, "; next: --bytes ") {
			t.Errorf("bytes, caps %+v: %d bytes", c, len(got))
		}
		got = render(Query(v, QueryOptions{Query: "x"}, c))
		if len(got) > 16<<10 {
			t.Errorf("query, caps %+v: %d bytes", c, len(got))
		}
	}
	if got := render(Lines(v, 1001, 1001, Caps{Bytes: retain.Unlimited})); len(got) != 6+40<<10+1 {
		t.Errorf("no byte cap: %d bytes, want the whole line", len(got))
	}
}
