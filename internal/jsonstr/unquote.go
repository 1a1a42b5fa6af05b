package jsonstr

import (
	"bytes"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquoter reads the text of a JSON string literal held in memory — the
// bytes json.Unmarshal would decode it to, exactly, invalid UTF-8 and
// lone surrogates becoming U+FFFD as there — without building it: a 20 MB
// text goes to a file through a few kilobytes. The literal must be valid
// JSON (json.Valid); on anything else the text read is undefined but
// reading stays in bounds.
type Unquoter struct {
	raw     []byte // the literal's contents, quotes stripped
	i       int
	pending [utf8.UTFMax]byte
	np, ip  int // pending[ip:np] is still to be read
}

// NewUnquoter reads the text of lit, a JSON string literal with its
// quotes (and any space around them).
func NewUnquoter(lit []byte) *Unquoter {
	lit = bytes.TrimSpace(lit)
	if len(lit) < 2 {
		return &Unquoter{}
	}
	return &Unquoter{raw: lit[1 : len(lit)-1]}
}

// UnquotedLen is the length of the text of lit, counted without building
// it.
func UnquotedLen(lit []byte) int64 {
	u := NewUnquoter(lit)
	var n int64
	var buf [utf8.UTFMax]byte
	for u.i < len(u.raw) {
		n += int64(u.next(buf[:]))
	}
	return n
}

func (u *Unquoter) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if u.ip < u.np {
			c := copy(p[n:], u.pending[u.ip:u.np])
			u.ip += c
			n += c
			continue
		}
		if u.i >= len(u.raw) {
			break
		}
		// A run of plain bytes is copied as it is.
		if c := u.raw[u.i]; c != '\\' && c < utf8.RuneSelf {
			j := u.i
			for j < len(u.raw) && j-u.i < len(p)-n && u.raw[j] != '\\' && u.raw[j] < utf8.RuneSelf {
				j++
			}
			n += copy(p[n:], u.raw[u.i:j])
			u.i = j
			continue
		}
		u.np = u.next(u.pending[:])
		u.ip = 0
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// next decodes one escape or one character at u.i into buf and returns
// its length.
func (u *Unquoter) next(buf []byte) int {
	c := u.raw[u.i]
	switch {
	case c == '\\' && u.i+1 < len(u.raw):
		e := u.raw[u.i+1]
		u.i += 2
		switch e {
		case 'b':
			buf[0] = '\b'
		case 'f':
			buf[0] = '\f'
		case 'n':
			buf[0] = '\n'
		case 'r':
			buf[0] = '\r'
		case 't':
			buf[0] = '\t'
		case 'u':
			r, ok := u.hex4()
			if !ok {
				return utf8.EncodeRune(buf, utf8.RuneError)
			}
			if utf16.IsSurrogate(r) {
				// A pair, when a \u of the second half follows; else
				// the lone half is U+FFFD and what follows is read on
				// its own.
				if u.i+1 < len(u.raw) && u.raw[u.i] == '\\' && u.raw[u.i+1] == 'u' {
					save := u.i
					u.i += 2
					if r2, ok := u.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							return utf8.EncodeRune(buf, dec)
						}
					}
					u.i = save
				}
				r = utf8.RuneError
			}
			return utf8.EncodeRune(buf, r)
		default: // " \ /
			buf[0] = e
		}
		return 1
	case c < utf8.RuneSelf:
		buf[0] = c
		u.i++
		return 1
	}
	r, size := utf8.DecodeRune(u.raw[u.i:])
	u.i += size
	if r == utf8.RuneError && size == 1 {
		return utf8.EncodeRune(buf, utf8.RuneError)
	}
	return copy(buf, u.raw[u.i-size:u.i])
}

// hex4 reads the four hex digits of a \u escape.
func (u *Unquoter) hex4() (rune, bool) {
	if u.i+4 > len(u.raw) {
		u.i = len(u.raw)
		return 0, false
	}
	var r rune
	for _, c := range u.raw[u.i : u.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			u.i += 4
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	u.i += 4
	return r, true
}
