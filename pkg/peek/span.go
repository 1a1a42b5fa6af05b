// Package peek reads slices of retained values the way a person reads a
// file: line ranges with a read_file gutter, searches and byte ranges. It
// reads through pkg/retain, so every byte it returns has been checked.
package peek

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/retval/retval/pkg/retain"
)

// scanChunk is how much is read at a time when scanning for lines.
const scanChunk = 64 << 10

// splitsRune reports whether offset o of v falls inside a valid multi-byte
// UTF-8 sequence. Invalid bytes count as sequences of one byte, so any
// offset next to them is a boundary.
func splitsRune(v *retain.Value, o int64) (bool, error) {
	if o <= 0 || o >= v.Size() {
		return false, nil
	}
	lo := max(0, o-(utf8.UTFMax-1))
	hi := min(v.Size(), o+utf8.UTFMax)
	w, err := v.Bytes(lo, hi)
	if err != nil {
		return false, err
	}
	rel := int(o - lo)
	for k := rel - 1; k >= 0 && k >= rel-(utf8.UTFMax-1); k-- {
		if w[k]&0xC0 == 0x80 {
			continue
		}
		r, size := utf8.DecodeRune(w[k:])
		if r == utf8.RuneError && size <= 1 {
			return false, nil
		}
		return k+size > rel, nil
	}
	return false, nil
}

// CheckBytes checks a half-open byte range [start, end) of v: in bounds,
// start ≤ end, and neither end inside a UTF-8 sequence. The error is
// invalid_range and names the offending offset and the nearest valid ones.
func CheckBytes(v *retain.Value, start, end int64) error {
	size := v.Size()
	switch {
	case start < 0 || end < 0:
		return retain.Errorf(retain.CodeInvalidRange, "byte range %d-%d: offsets must be ≥ 0", start, end)
	case start > end:
		return retain.Errorf(retain.CodeInvalidRange, "byte range %d-%d: start is after end", start, end)
	case end > size:
		return retain.Errorf(retain.CodeInvalidRange, "byte range %d-%d: end is past the end of the value (%d bytes)", start, end, size)
	}
	for _, o := range []int64{start, end} {
		split, err := splitsRune(v, o)
		if err != nil {
			return err
		}
		if split {
			below, above := o, o
			for below > 0 {
				if s, err := splitsRune(v, below); err != nil || !s {
					break
				}
				below--
			}
			for above < size {
				if s, err := splitsRune(v, above); err != nil || !s {
					break
				}
				above++
			}
			return retain.Errorf(retain.CodeInvalidRange, "byte range %d-%d: offset %d splits a UTF-8 sequence; the nearest boundaries are %d and %d", start, end, o, below, above)
		}
	}
	return nil
}

// LineSpan returns the byte span [start, end) of lines first..last
// (1-based, inclusive), the newline ending last included, and the last line
// actually covered: a last past the end is cut to the value's last line. A
// first line past the end is invalid_range. It seeks through the value's
// line index where it has one and scans from there.
func LineSpan(v *retain.Value, first, last int64) (start, end, gotLast int64, err error) {
	n := v.Desc.Lines
	if first < 1 || last < first {
		return 0, 0, 0, retain.Errorf(retain.CodeInvalidRange, "line range %d-%d: lines count from 1 and the range must not be reversed", first, last)
	}
	if first > n {
		return 0, 0, 0, retain.Errorf(retain.CodeInvalidRange, "line %d is past the end: the value has %d lines", first, n)
	}
	last = min(last, n)
	at, off := int64(1), int64(0)
	if ix := v.Index(); ix != nil {
		at, off = ix.LineStart(first)
	}
	sc := &lineScanner{v: v, off: off}
	// Skip to the start of first.
	if start, err = sc.skipLines(first - at); err != nil {
		return 0, 0, 0, err
	}
	if end, err = sc.skipLines(last - first + 1); err != nil {
		return 0, 0, 0, err
	}
	return start, end, last, nil
}

// lineScanner moves forward through a value line by line.
type lineScanner struct {
	v   *retain.Value
	off int64
	buf []byte
}

// skipLines moves past k newlines (or to the end of the value) and returns
// the offset it stopped at.
func (s *lineScanner) skipLines(k int64) (int64, error) {
	if s.buf == nil {
		s.buf = make([]byte, scanChunk)
	}
	for k > 0 && s.off < s.v.Size() {
		n, err := s.v.ReadAt(s.buf[:min(int64(len(s.buf)), s.v.Size()-s.off)], s.off)
		if err != nil && err != io.EOF {
			return 0, err
		}
		p := s.buf[:n]
		if c := int64(bytes.Count(p, []byte{'\n'})); c < k {
			k -= c
			s.off += int64(n)
			continue
		}
		for pos := 0; ; {
			j := bytes.IndexByte(p[pos:], '\n')
			pos += j + 1
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
