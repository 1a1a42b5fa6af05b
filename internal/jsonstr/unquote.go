package jsonstr

import (
	"bytes"
	"io"
)

// Unquoter reads the text of a JSON string literal held in memory — the
// bytes json.Unmarshal would decode it to, exactly, invalid UTF-8 and
// lone surrogates becoming U+FFFD as there — without building it: a 20 MB
// text goes to a file through a few kilobytes. The literal must be valid
// JSON (json.Valid); on anything else the text read is undefined but
// reading stays in bounds.
type Unquoter struct {
	raw []byte // the literal's contents, quotes stripped
	i   int
	// held[hp:hn] is text decoded for a read with less room than
	// len(held), still to be read.
	held   [64]byte
	hp, hn int
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
	var buf [4 << 10]byte
	for {
		k, err := u.Read(buf[:])
		n += int64(k)
		if err != nil {
			return n
		}
	}
}

func (u *Unquoter) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if u.hp < u.hn {
			c := copy(p[n:], u.held[u.hp:u.hn])
			u.hp += c
			n += c
			continue
		}
		if u.i >= len(u.raw) {
			break
		}
		// Decode straight into p as much of the literal as is sure to fit
		// (a byte becomes at most maxGrowth), so that append never leaves
		// p; when p has little room left, a few bytes go through held.
		// Either way more than maxHeld bytes are decoded, or the rest of
		// the literal: every round makes progress.
		dst := p[n:n:len(p)]
		viaHeld := len(p)-n < len(u.held)
		if viaHeld {
			dst = u.held[:0]
		}
		k := min(len(u.raw)-u.i, cap(dst)/maxGrowth)
		out, used, err := decodeSome(dst, u.raw[u.i:u.i+k], u.i+k == len(u.raw), false)
		u.i += used
		if err != nil || used == 0 {
			u.i = len(u.raw) // not valid JSON: the text ends here
		}
		if viaHeld {
			u.hp, u.hn = 0, len(out)
		} else {
			n += len(out)
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
