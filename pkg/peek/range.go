package peek

import (
	"strconv"
	"strings"

	"github.com/retval/retval/pkg/retain"
)

// RangeArg is a line or byte range as people type it (SPEC §4): "A-B"; for
// lines also "N" (line N alone); "N-" (from N to the end, within the
// caps); "-N" (the last N, as tail -n N and tail -c N count). Parse it with
// ParseLines or ParseBytes, then resolve it against a value with LinesOf
// or ByteSpan.
type RangeArg struct {
	// First and Last: lines First..Last (inclusive) or bytes [First, Last).
	// Last is ToEnd for "N-". Both are 0 when Tail is set.
	First, Last int64
	// Tail > 0 is "-N": the last Tail lines or bytes.
	Tail int64
}

// Between is the range A-B.
func Between(a, b int64) RangeArg { return RangeArg{First: a, Last: b} }

// Closed reports whether r names both its ends ("A-B", or "N" for lines).
func (r RangeArg) Closed() bool { return r.Tail == 0 && r.Last != ToEnd }

// String is r as typed, in its shortest form for lines ("7", "7-", "-50",
// "1-40") and for bytes ("-4096", "100-", "0-100"). A range with a
// negative end can only have been written as a reference's array, and
// "-1-5" would read as something else: it is shown as that array,
// "[-1, 5]".
func (r RangeArg) String() string {
	switch {
	case r.Tail == 0 && (r.First < 0 || r.Last < 0):
		return "[" + strconv.FormatInt(r.First, 10) + ", " + strconv.FormatInt(r.Last, 10) + "]"
	case r.Tail > 0:
		return "-" + strconv.FormatInt(r.Tail, 10)
	case r.Last == ToEnd:
		return strconv.FormatInt(r.First, 10) + "-"
	}
	return strconv.FormatInt(r.First, 10) + "-" + strconv.FormatInt(r.Last, 10)
}

// LineString is r as typed for lines: a range of one line is "N".
func (r RangeArg) LineString() string {
	if r.Tail == 0 && r.First == r.Last && r.First >= 0 {
		return strconv.FormatInt(r.First, 10)
	}
	return r.String()
}

const (
	linesForms = "A-B (1-40), N (line N alone), N- (from line N to the end) or -N (the last N lines)"
	bytesForms = "A-B (bytes A up to, not including, B: 0-4096), N- (from byte N to the end) or -N (the last N bytes)"
)

// LinesForms and BytesForms describe what ParseLines and ParseBytes accept.
const (
	LinesForms = linesForms
	BytesForms = bytesForms
)

// ParseLines reads a line range: "A-B", "N", "N-" or "-N", each number a
// plain decimal (no sign, no leading zeros). Lines count from 1; checking
// the numbers against a value is left to the read.
func ParseLines(s string) (RangeArg, error) {
	r, ok := parseRange(s, true)
	if !ok {
		return RangeArg{}, retain.Errorf(retain.CodeUsage, "invalid line range %q: want %s", s, linesForms)
	}
	return r, nil
}

// ParseBytes reads a byte range: "A-B" (half-open), "N-" or "-N".
func ParseBytes(s string) (RangeArg, error) {
	r, ok := parseRange(s, false)
	if !ok {
		return RangeArg{}, retain.Errorf(retain.CodeUsage, "invalid byte range %q: want %s", s, bytesForms)
	}
	return r, nil
}

func parseRange(s string, lines bool) (RangeArg, bool) {
	a, b, dash := strings.Cut(s, "-")
	switch {
	case !dash && lines:
		n, ok := number(a)
		return RangeArg{First: n, Last: n}, ok
	case !dash:
		return RangeArg{}, false
	case a == "":
		n, ok := number(b)
		return RangeArg{Tail: n}, ok && n > 0
	case b == "":
		n, ok := number(a)
		return RangeArg{First: n, Last: ToEnd}, ok
	}
	x, ok1 := number(a)
	y, ok2 := number(b)
	return RangeArg{First: x, Last: y}, ok1 && ok2
}

// number reads a plain non-negative decimal: digits only, no leading zero.
func number(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// CheckLines checks r against a value of n lines, naming it in its
// shortest form, "A-B" for a closed range ("line range 0-", "line range
// 5-5", "line range -5"): lines count from 1, a range is not reversed, and
// it starts within the value. An empty value has no lines, so every range
// of it fails, "-N" too (as tail -n N of nothing, it would name nothing).
// A range that ends past the end passes: peek cuts it, resolve and expand
// refuse it themselves.
func (r RangeArg) CheckLines(n int64) error { return r.CheckLinesAs(n, r.String()) }

// CheckLinesAs is CheckLines naming the range as the caller was given it
// ("1001", "0-").
func (r RangeArg) CheckLinesAs(n int64, given string) error {
	typed := "line range " + given
	switch {
	case r.Tail == 0 && (r.First < 1 || r.Last < r.First):
		return retain.Errorf(retain.CodeInvalidRange, "%s: lines count from 1 and the range must not be reversed", typed)
	case n == 0:
		return retain.Errorf(retain.CodeInvalidRange, "%s: the value is empty, it has no lines", typed)
	case r.Tail == 0 && r.First > n:
		return retain.Errorf(retain.CodeInvalidRange, "%s starts past the end: the value has lines 1-%d", typed, n)
	}
	return nil
}

// LinesOf is the line range r names in a value of n lines, first..last:
// "-N" is the last N lines (all of them when there are fewer); "N-" keeps
// Last = ToEnd, which a peek cuts at its caps and at the end of the value.
// An empty value has no last lines: "-N" then names "1-"; CheckLines
// refuses every range of an empty value, naming it as typed.
func (r RangeArg) LinesOf(n int64) (first, last int64) {
	if r.Tail > 0 {
		if n == 0 {
			return 1, ToEnd
		}
		return max(1, n-r.Tail+1), n
	}
	return r.First, r.Last
}

// ByteSpan is the half-open byte range r names in v: "N-" ends at the end
// of the value; "-N" starts N bytes before it (at 0 when the value is
// shorter), moved forward to the next UTF-8 boundary when it would split a
// sequence, so it is at most N bytes. The range is checked as CheckBytes
// checks one (invalid_range).
func ByteSpan(v *retain.Value, r RangeArg) (start, end int64, err error) {
	return byteSpan(sourceOf(v), r)
}

func byteSpan(src source, r RangeArg) (start, end int64, err error) {
	start, end = r.First, r.Last
	switch {
	case r.Tail > 0:
		end = src.Size()
		if start, err = boundaryAtOrAfter(src, max(0, end-r.Tail), end); err != nil {
			return 0, 0, err
		}
	case r.Last == ToEnd:
		end = src.Size()
	}
	return start, end, checkBytesNamed(src, start, end, "byte range "+r.String())
}
