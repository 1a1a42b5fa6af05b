// Package jsonstr escapes bytes as the contents of a JSON string exactly as
// encoding/json does with HTML escaping off: invalid UTF-8 becomes \ufffd,
// control characters and U+2028/U+2029 are escaped. It streams, so a large
// value can become a JSON string without being held in memory, and it can
// count the escaped length without producing it.
//
// It also holds retval's one decoder of JSON strings (decode.go), which
// streams too: as encoding/json decodes them (AppendDecoded, and the
// Unquoter, which reads a literal's text without building it), or
// strictly, substituting nothing (AppendStrict, Decoder).
package jsonstr

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// Append appends the escaped form of p to dst (no quotes). p must be whole:
// an incomplete sequence at its end is invalid UTF-8.
func Append(dst, p []byte) []byte {
	start := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, p[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, p[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, p[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, p[start:]...)
}

// Len is len(Append(nil, p)) without building it.
func Len(p []byte) int64 {
	var n int64
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += int64(size)
		}
		i += size
	}
	return n
}

// Writer escapes what is written to it onto W, holding back an incomplete
// UTF-8 sequence until the next Write or Close.
type Writer struct {
	W     io.Writer
	carry []byte
	buf   []byte
}

func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(w.carry) > 0 {
		p = append(w.carry, p...)
		w.carry = nil
	}
	// Hold back a trailing incomplete sequence.
	cut := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if p[k]&0xC0 != 0x80 {
			if !utf8.FullRune(p[k:]) {
				cut = k
			}
			break
		}
	}
	w.carry = append([]byte(nil), p[cut:]...)
	w.buf = Append(w.buf[:0], p[:cut])
	if _, err := w.W.Write(w.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// Close flushes a held-back sequence (it was invalid: the input ended).
func (w *Writer) Close() error {
	if len(w.carry) == 0 {
		return nil
	}
	w.buf = Append(w.buf[:0], w.carry)
	w.carry = nil
	_, err := w.W.Write(w.buf)
	return err
}

// Marshal is json.Marshal without HTML escaping and without the newline
// an Encoder adds: the one-line form every JSON retval writes for a
// machine uses.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
