// Package peek reads slices of retained values the way a person reads a
// file: line ranges with a read_file gutter, searches and byte ranges. It
// reads through pkg/retain, so every byte it returns has been checked.
//
// A Go harness calls Lines, Query or Bytes with an open *retain.Value and
// the Caps of CapsFor (the zero Caps are the defaults), and gets a page:
// the structured result, which its Render method turns into the text the
// CLI prints. WriteLines, WriteQuery and WriteBytes write that text
// instead, streaming it when there is no byte cap. StripGutter undoes the
// gutter on text a model pasted back from a page.
package peek

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/retain"
)

// scanChunk is how much is read at a time when scanning for lines (a
// variable so that tests can make chunk boundaries fall everywhere).
var scanChunk = 64 << 10

// source is what peek reads: a *retain.Value, or in tests a wrapper that
// counts what is read or supplies its own index.
type source interface {
	io.ReaderAt
	Size() int64
	Lines() int64
	Index() *retain.Index
}

// valueSource adapts a *retain.Value.
type valueSource struct{ *retain.Value }

func (s valueSource) Lines() int64 { return s.Desc.Lines }

func sourceOf(v *retain.Value) source { return valueSource{v} }

// readFull reads len(p) bytes at off, or fewer at the end of src.
func readFull(src source, p []byte, off int64) (int, error) {
	n, err := src.ReadAt(p, off)
	if err == io.EOF && off+int64(n) == src.Size() {
		err = nil
	}
	return n, err
}

// splitsAt reports whether offset rel of w falls inside a valid multi-byte
// UTF-8 sequence, looking only at the nearest lead byte before it. Invalid
// bytes count as sequences of one byte, so any offset next to them is a
// boundary. w must hold the bytes around rel (utf8.UTFMax-1 before, UTFMax
// after) where the value has them.
func splitsAt(w []byte, rel int) bool {
	if rel <= 0 || rel >= len(w) {
		return false
	}
	for k := rel - 1; k >= 0 && k >= rel-(utf8.UTFMax-1); k-- {
		if w[k]&0xC0 == 0x80 {
			continue
		}
		r, size := utf8.DecodeRune(w[k:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		return k+size > rel
	}
	return false
}

// splitsRune reports whether offset o of src falls inside a valid multi-byte
// UTF-8 sequence.
func splitsRune(src source, o int64) (bool, error) {
	if o <= 0 || o >= src.Size() {
		return false, nil
	}
	lo := max(0, o-(utf8.UTFMax-1))
	hi := min(src.Size(), o+utf8.UTFMax)
	var w [2*utf8.UTFMax - 1]byte
	n, err := readFull(src, w[:hi-lo], lo)
	if err != nil {
		return false, err
	}
	return splitsAt(w[:n], int(o-lo)), nil
}

// boundaryAtOrBefore returns the largest offset in (floor, o] that does not
// split a UTF-8 sequence, or floor when there is none.
func boundaryAtOrBefore(src source, o, floor int64) (int64, error) {
	for ; o > floor; o-- {
		split, err := splitsRune(src, o)
		if err != nil {
			return 0, err
		}
		if !split {
			return o, nil
		}
	}
	return floor, nil
}

// CheckBytes checks a half-open byte range [start, end) of v: in bounds,
// start ≤ end, and neither end inside a UTF-8 sequence. The error is
// invalid_range and names the offending offset and the nearest valid ones.
func CheckBytes(v *retain.Value, start, end int64) error {
	return checkBytes(sourceOf(v), start, end)
}

func checkBytes(src source, start, end int64) error {
	return checkBytesNamed(src, start, end, fmt.Sprintf("byte range %d-%d", start, end))
}

// checkBytesNamed is checkBytes, naming the range in its errors as typed
// ("byte range 2-", "byte range -4096").
func checkBytesNamed(src source, start, end int64, typed string) error {
	size := src.Size()
	switch {
	case start < 0 || end < 0:
		return retain.Errorf(retain.CodeInvalidRange, "%s: offsets must be ≥ 0", typed)
	case start > size:
		return retain.Errorf(retain.CodeInvalidRange, "%s starts past the end: the value has bytes 0-%d (%s); ask for a range within them", typed, size, plural(size, "byte"))
	case start > end:
		return retain.Errorf(retain.CodeInvalidRange, "%s: start is after end", typed)
	case end > size:
		return retain.Errorf(retain.CodeInvalidRange, "%s ends past the end: the value has bytes 0-%d (%s); ask for bytes %d-%d", typed, size, plural(size, "byte"), start, size)
	}
	for _, o := range []int64{start, end} {
		split, err := splitsRune(src, o)
		if err != nil {
			return err
		}
		if split {
			below, above := o, o
			for below > 0 {
				if s, err := splitsRune(src, below); err != nil || !s {
					break
				}
				below--
			}
			for above < size {
				if s, err := splitsRune(src, above); err != nil || !s {
					break
				}
				above++
			}
			return retain.Errorf(retain.CodeInvalidRange, "%s: offset %d splits a UTF-8 sequence; the nearest boundaries are %d and %d", typed, o, below, above)
		}
	}
	return nil
}

// checkLines checks a line range against a value of n lines: one that
// starts past the end fails, naming the valid range (one that ends past it
// is cut by peek; resolve and expand refuse it themselves).
func checkLines(first, last, n int64) error {
	if first < 1 || last < first {
		return retain.Errorf(retain.CodeInvalidRange, "line range %d-%d: lines count from 1 and the range must not be reversed", first, last)
	}
	switch {
	case first > n && n == 0:
		return retain.Errorf(retain.CodeInvalidRange, "%s: the value is empty, it has no lines", lineRange(first, last))
	case first > n:
		return retain.Errorf(retain.CodeInvalidRange, "%s starts past the end: the value has lines 1-%d", lineRange(first, last), n)
	}
	return nil
}

// lineRange names a line range in a message: "line range 5-9", or "line
// range 5-" for one to the end (SPEC §4's "N-").
func lineRange(first, last int64) string {
	if last == ToEnd {
		return "line range " + strconv.FormatInt(first, 10) + "-"
	}
	return "line range " + strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10)
}

// plural is "1 byte", "2 bytes"; "1 match", "2 matches".
func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	if strings.HasSuffix(unit, "ch") {
		return strconv.FormatInt(n, 10) + " " + unit + "es"
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// LineSpan returns the byte span [start, end) of lines first..last
// (1-based, inclusive), the newline ending last included, and the last line
// actually covered: a last past the end is cut to the value's last line. A
// first line past the end is invalid_range. It seeks through the value's
// line index where it has one and scans from there.
func LineSpan(v *retain.Value, first, last int64) (start, end, gotLast int64, err error) {
	return lineSpan(sourceOf(v), first, last)
}

func lineSpan(src source, first, last int64) (start, end, gotLast int64, err error) {
	n := src.Lines()
	if err := checkLines(first, last, n); err != nil {
		return 0, 0, 0, err
	}
	last = min(last, n)
	sc := newLineScanner(src)
	if start, err = sc.seek(first); err != nil {
		return 0, 0, 0, err
	}
	if end, err = sc.skipLines(last - first + 1); err != nil {
		return 0, 0, 0, err
	}
	return start, end, last, nil
}

// lineScanner moves forward through a value line by line. At rest, off is
// the start of line (or the end of the value).
type lineScanner struct {
	src  source
	line int64
	off  int64
	buf  []byte // scratch for skipping

	win    []byte // buffered bytes at winOff, for reading lines
	winOff int64
	winBuf []byte
}

func newLineScanner(src source) *lineScanner { return &lineScanner{src: src, line: 1} }

// LineOffsets returns the offset at which each line of want starts (want
// ascending; a line past the end gives the value's size) in one forward
// pass of the scanner every peek uses, jumping through the value's line
// index over gaps: expand locates a template's many line ranges with it.
func LineOffsets(v *retain.Value, want []int64) ([]int64, error) {
	sc := newLineScanner(sourceOf(v))
	out := make([]int64, len(want))
	for i, line := range want {
		off, err := sc.seek(line)
		if err != nil {
			return nil, err
		}
		out[i] = off
	}
	return out, nil
}

// seek moves to the start of line (which must not be behind the scanner),
// jumping through the index when that is further along, and returns its
// offset. A line past the end stops at the end of the value.
func (s *lineScanner) seek(line int64) (int64, error) {
	if ix := s.src.Index(); ix != nil {
		if at, off := ix.LineStart(line); at > s.line {
			s.line, s.off = at, off
		}
	}
	return s.skipLines(line - s.line)
}

// seekOffset moves to the start of the line holding offset o (which must
// not be behind the scanner) and returns that line's number.
func (s *lineScanner) seekOffset(o int64) (int64, error) {
	if ix := s.src.Index(); ix != nil {
		i := searchStarts(ix.Starts, o)
		if at := 1 + int64(i)*ix.Stride; at > s.line {
			s.line, s.off = at, ix.Starts[i]
		}
	}
	s.ensureBuf()
	// Only the newlines strictly before o matter: the line holding o
	// starts after the last of them.
	for pos := s.off; pos < o; {
		n, err := readFull(s.src, s.buf[:min(int64(len(s.buf)), o-pos)], pos)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			break
		}
		p := s.buf[:n]
		if c := int64(bytes.Count(p, nl)); c > 0 {
			s.line += c
			s.off = pos + int64(bytes.LastIndexByte(p, '\n')+1)
		}
		pos += int64(n)
	}
	return s.line, nil
}

// searchStarts returns the index of the last entry of starts ≤ o.
func searchStarts(starts []int64, o int64) int {
	lo, hi := 0, len(starts)
	for lo+1 < hi {
		m := (lo + hi) / 2
		if starts[m] <= o {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

var nl = []byte{'\n'}

func (s *lineScanner) ensureBuf() {
	if s.buf == nil {
		s.buf = make([]byte, max(1, min(int64(scanChunk), s.src.Size()))) // see window
	}
}

// skipLines moves past k newlines (or to the end of the value) and returns
// the offset it stopped at.
func (s *lineScanner) skipLines(k int64) (int64, error) {
	s.ensureBuf()
	for k > 0 && s.off < s.src.Size() {
		n, err := readFull(s.src, s.buf[:min(int64(len(s.buf)), s.src.Size()-s.off)], s.off)
		if err != nil {
			return 0, err
		}
		p := s.buf[:n]
		if c := int64(bytes.Count(p, nl)); c < k {
			k -= c
			s.line += c
			s.off += int64(n)
			continue
		}
		for pos := 0; ; {
			j := bytes.IndexByte(p[pos:], '\n')
			pos += j + 1
			s.line++
			if k--; k == 0 {
				s.off += int64(pos)
				return s.off, nil
			}
		}
	}
	return s.off, nil
}

// ParseRange reads "A-B" (both required, non-negative integers).
func ParseRange(s string) (a, b int64, err error) {
	if _, err := fmt.Sscanf(s, "%d-%d", &a, &b); err != nil || fmt.Sprintf("%d-%d", a, b) != s || a < 0 || b < 0 {
		return 0, 0, retain.Errorf(retain.CodeUsage, "invalid range %q: want A-B, e.g. 1-40", s)
	}
	return a, b, nil
}

// fit returns the largest offset to in [from, limit] that does not split a
// UTF-8 sequence and with bytes [from, to) taking at most room bytes as
// shown (escaped, under c.Escape). from must be a boundary, and limit too
// when it is not the end of a line or of the value.
func fit(src source, from, limit, room int64, c capped) (int64, error) {
	if !c.Escape {
		return boundaryAtOrBefore(src, min(from+max(room, 0), limit), from)
	}
	if room <= 0 || from >= limit {
		return from, nil
	}
	// Shown, a byte is at least one byte: room bytes of the value are
	// enough, and UTFMax-1 more to decode the sequence that straddles.
	buf := make([]byte, min(limit-from, room)+utf8.UTFMax-1)
	n, err := readFull(src, buf[:min(int64(len(buf)), src.Size()-from)], from)
	if err != nil {
		return 0, err
	}
	buf = buf[:n]
	span := int(min(limit-from, int64(n)))
	i, used := 0, int64(0)
	for i < span {
		_, size := utf8.DecodeRune(buf[i:])
		if i+size > span {
			break // it straddles limit
		}
		w := int64(safetext.Len(buf[i : i+size]))
		if used+w > room {
			break
		}
		used += w
		i += size
	}
	return from + int64(i), nil
}

// fitBack returns the smallest offset from in [floor, to] that does not
// split a UTF-8 sequence and with bytes [from, to) taking at most room
// bytes as shown. to must be a boundary.
func fitBack(src source, floor, to, room int64, c capped) (int64, error) {
	lo := max(floor, to-max(room, 0))
	lo, err := boundaryAtOrAfter(src, lo, to)
	if err != nil || !c.Escape {
		return lo, err
	}
	buf := make([]byte, to-lo)
	if _, err := readFull(src, buf, lo); err != nil {
		return 0, err
	}
	total := int64(safetext.Len(buf))
	i := 0
	for total > room && i < len(buf) {
		_, size := utf8.DecodeRune(buf[i:])
		total -= int64(safetext.Len(buf[i : i+size]))
		i += size
	}
	return lo + int64(i), nil
}

// boundaryAtOrAfter returns the smallest offset in [o, ceil) that does not
// split a UTF-8 sequence, or ceil when there is none.
func boundaryAtOrAfter(src source, o, ceil int64) (int64, error) {
	for ; o < ceil; o++ {
		split, err := splitsRune(src, o)
		if err != nil {
			return 0, err
		}
		if !split {
			return o, nil
		}
	}
	return ceil, nil
}
