// Package safetext escapes text that is shown to a model or a terminal, so
// that no byte of a value can move a cursor, change colours, retitle a
// window or reorder what a reader sees.
//
// Escaped (SPEC §3):
//   - C0 controls other than tab and newline (carriage return included) and
//     DEL, as \xNN: "\x1b", "\x0d", "\x7f";
//   - C1 controls U+0080–U+009F, as \u0080 … \u009f;
//   - bidi embeddings, overrides and isolates U+202A–U+202E and
//     U+2066–U+2069, as \u202a … \u202e, \u2066 … \u2069;
//   - bytes that are not valid UTF-8, as \xNN.
//
// Everything else, the backslash included, is copied verbatim. Escapes use
// lower-case hex. The output is always valid UTF-8.
//
// Append and Len treat their input as complete: a UTF-8 sequence cut at the
// end of p is invalid and shown as \xNN. Text that arrives in pieces cut
// anywhere goes through a Writer, which carries an incomplete sequence
// over to the next Write.
package safetext

import (
	"encoding/binary"
	"io"
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Clean reports whether p is shown as it is: Append(dst, p) would append p
// unchanged.
func Clean(p []byte) bool {
	return safePrefix(p) == len(p)
}

// Append appends p to dst with every byte or code point a terminal could
// act on escaped, and returns the extended slice.
func Append(dst, p []byte) []byte {
	dst, _ = escape(dst, p, len(p), true)
	return dst
}

// Len returns len(Append(nil, p)) without building it.
func Len(p []byte) int {
	n := 0
	for i := 0; i < len(p); {
		k := asciiRun(p[i:])
		n += k
		i += k
		if i == len(p) {
			break
		}
		c := p[i]
		if c < utf8.RuneSelf {
			n += 4 // \xNN
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 4
		case escaped(r):
			n += 6 // \uNNNN
		default:
			n += size
		}
		i += size
	}
	return n
}

// Unsafe reports whether the code point r is one a terminal could act on
// and that Append therefore escapes: a C0 control other than tab and
// newline, DEL, a C1 control or a bidi embedding, override or isolate.
// Other escapers (an outline's pointers) ask this, so the rule is one.
func Unsafe(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || escaped(r)
}

// escaped reports whether r, a valid non-ASCII code point, is shown as
// \uNNNN.
func escaped(r rune) bool {
	return r >= 0x80 && r <= 0x9f ||
		r >= 0x202a && r <= 0x202e ||
		r >= 0x2066 && r <= 0x2069
}

// safePrefix returns the length of the longest prefix of p that is shown
// unchanged.
func safePrefix(p []byte) int {
	i := 0
	for i < len(p) {
		i += asciiRun(p[i:])
		if i == len(p) || p[i] < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 || escaped(r) {
			return i
		}
		i += size
	}
	return i
}

// asciiRun returns the length of the prefix of p made of printable ASCII,
// tab and newline: the bytes that are always shown as they are. It checks
// eight bytes at a time, so clean ASCII costs a fraction of a nanosecond a
// byte.
func asciiRun(p []byte) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(p); i += 8 {
		x := binary.LittleEndian.Uint64(p[i:])
		if x&high != 0 {
			break // not ASCII: sorted out below
		}
		// With every byte below 0x80 these masks are exact, byte by
		// byte, in each byte's high bit (no carry crosses a byte).
		ge20 := (x + 0x60*ones) & high
		notDel := nonZero(x ^ 0x7f*ones)
		notTab := nonZero(x ^ '\t'*ones)
		notNL := nonZero(x ^ '\n'*ones)
		if bad := high &^ (ge20&notDel | ^notTab | ^notNL); bad != 0 {
			return i + bits.TrailingZeros64(bad)/8
		}
	}
	for ; i < len(p); i++ {
		if !plain(p[i]) {
			return i
		}
	}
	return i
}

// nonZero returns, in the high bit of each byte, whether that byte of y
// (every byte below 0x80 or not) is not zero.
func nonZero(y uint64) uint64 {
	const (
		high = 0x8080808080808080
		low7 = 0x7f7f7f7f7f7f7f7f
	)
	return ((y&low7 + low7) | y) & high
}

// plain reports whether c is printable ASCII, a tab or a newline.
func plain(c byte) bool {
	return c >= 0x20 && c < 0x7f || c == '\t' || c == '\n'
}

// escape appends p to dst escaped, stopping at the first code point
// boundary at or after stop. Unless final, an incomplete UTF-8 sequence at
// the end of p is left unconsumed (it may be completed by what follows).
// It returns the extended slice and how much of p it consumed.
func escape(dst, p []byte, stop int, final bool) ([]byte, int) {
	i, verbatim := 0, 0 // p[verbatim:i] is pending, to be copied as it is
	for i < len(p) && i < stop {
		i += asciiRun(p[i:min(stop, len(p))])
		if i >= stop || i == len(p) {
			break
		}
		c := p[i]
		if c < utf8.RuneSelf {
			dst = append(dst, p[verbatim:i]...)
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			i++
			verbatim = i
			continue
		}
		if !final && !utf8.FullRune(p[i:]) {
			break
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, p[verbatim:i]...)
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		case escaped(r):
			dst = append(dst, p[verbatim:i]...)
			dst = append(dst, '\\', 'u',
				hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		verbatim = i
	}
	return append(dst, p[verbatim:i]...), i
}

// Writer escapes everything written to it, as Append does, and writes the
// result to the io.Writer it wraps. Writes may cut the text anywhere: a
// UTF-8 sequence split between two Writes is escaped as one code point.
// Flush writes a sequence still incomplete at the end of the text.
type Writer struct {
	w    io.Writer
	held [utf8.UTFMax]byte // an incomplete sequence at the end of the last Write
	n    int               // len of held
	buf  []byte
}

// NewWriter returns a Writer that writes escaped text to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Write escapes p and writes it. It returns len(p) when everything was
// written (a held incomplete sequence counts as written), or 0 and the
// underlying writer's error.
func (w *Writer) Write(p []byte) (int, error) {
	total := len(p)
	buf := w.buf[:0]
	if w.n > 0 {
		// Complete the held sequence with the first bytes of p; then
		// consume whole code points until the held bytes are used up.
		var scratch [2 * utf8.UTFMax]byte
		held := w.n
		s := append(scratch[:0], w.held[:held]...)
		s = append(s, p[:min(len(p), utf8.UTFMax)]...)
		var used int
		buf, used = escape(buf, s, held, false)
		if used < held {
			// Still incomplete: p was too short to finish it.
			w.n = copy(w.held[:], s[used:])
			w.buf = buf
			if err := w.flushBuf(buf); err != nil {
				return 0, err
			}
			return total, nil
		}
		w.n = 0
		p = p[used-held:]
	}
	if len(buf) == 0 {
		// The fast path: the clean prefix goes out without a copy.
		k := safePrefix(p)
		if k == len(p) && k > 0 {
			if _, err := w.w.Write(p); err != nil {
				return 0, err
			}
			return total, nil
		}
		if k > 0 {
			if _, err := w.w.Write(p[:k]); err != nil {
				return 0, err
			}
			p = p[k:]
		}
	}
	buf, used := escape(buf, p, len(p), false)
	w.n = copy(w.held[:], p[used:])
	w.buf = buf
	if err := w.flushBuf(buf); err != nil {
		return 0, err
	}
	return total, nil
}

func (w *Writer) flushBuf(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	_, err := w.w.Write(buf)
	return err
}

// Flush writes, escaped as \xNN, the bytes of a UTF-8 sequence left
// incomplete by the last Write. Call it once the text is complete.
func (w *Writer) Flush() error {
	if w.n == 0 {
		return nil
	}
	buf := Append(w.buf[:0], w.held[:w.n])
	w.n = 0
	w.buf = buf
	return w.flushBuf(buf)
}
