package jsonstr

import (
	"errors"
	"io"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The text of a JSON string, from its body (the bytes between its
// quotes). Decoded as encoding/json decodes it (AppendDecoded, the
// Unquoter): escapes are resolved, a valid surrogate pair becomes one
// rune, a lone surrogate becomes U+FFFD, and bytes that are not UTF-8
// become U+FFFD one by one. Decoded strictly (AppendStrict, Decoder: for
// text that is returned as it is), nothing is substituted: bytes that are
// not UTF-8 are kept as they are, for the caller to refuse or return raw,
// and a lone surrogate is ErrSurrogate, since no bytes stand for it.
// Control characters, bad escapes and unescaped quotes are errors either
// way.

var (
	ErrControl  = errors.New("control character in a string")
	ErrEscape   = errors.New("invalid escape in a string")
	ErrQuote    = errors.New("unescaped quote in a string")
	ErrTruncEsc = errors.New("string ends inside an escape")
	// ErrSurrogate is a \u escape of a lone UTF-16 surrogate, in strict
	// decoding.
	ErrSurrogate = errors.New("lone surrogate escape in a string")
)

// UEscape returns the rune of the escape \uXXXX at the start of s, or -1
// when s does not start with one.
func UEscape(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// maxGrowth bounds what decodeSome appends per byte of data: an invalid
// byte, decoded as encoding/json does, becomes the three bytes of U+FFFD.
const maxGrowth = 3

// maxHeld is the most decodeSome leaves undecoded at the end of data when
// not final: an escape or UTF-8 sequence that may continue past it (a
// surrogate pair's first escape and 5 bytes of its second).
const maxHeld = 11

// decodeSome decodes what it can of a string body, appending to dst, and
// reports how much of data it used; on an error, that is where the failing
// escape or byte starts. Unless final, it stops before an escape or UTF-8
// sequence that may continue past the end of data (at most maxHeld
// bytes). With strict, see above.
func decodeSome(dst, data []byte, final, strict bool) ([]byte, int, error) {
	i := 0
	for i < len(data) {
		c := data[i]
		switch {
		case c >= 0x20 && c < utf8.RuneSelf && c != '\\' && c != '"':
			j := i + 1
			for j < len(data) && data[j] >= 0x20 && data[j] < utf8.RuneSelf && data[j] != '\\' && data[j] != '"' {
				j++
			}
			dst = append(dst, data[i:j]...)
			i = j
		case c == '\\':
			if i+1 >= len(data) {
				if !final {
					return dst, i, nil
				}
				return dst, i, ErrTruncEsc
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
				i += 2
			case 'b':
				dst = append(dst, '\b')
				i += 2
			case 'f':
				dst = append(dst, '\f')
				i += 2
			case 'n':
				dst = append(dst, '\n')
				i += 2
			case 'r':
				dst = append(dst, '\r')
				i += 2
			case 't':
				dst = append(dst, '\t')
				i += 2
			case 'u':
				if i+6 > len(data) && !final {
					return dst, i, nil
				}
				rr := UEscape(data[i:])
				if rr < 0 {
					return dst, i, ErrEscape
				}
				if utf16.IsSurrogate(rr) {
					if i+12 > len(data) && !final {
						return dst, i, nil
					}
					if dec := utf16.DecodeRune(rr, UEscape(data[i+6:])); dec != unicode.ReplacementChar {
						dst = utf8.AppendRune(dst, dec)
						i += 12
						continue
					}
					if strict {
						return dst, i, ErrSurrogate
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				i += 6
			default:
				return dst, i, ErrEscape
			}
		case c == '"':
			return dst, i, ErrQuote
		case c < 0x20:
			return dst, i, ErrControl
		case strict:
			// Kept as they are, valid or not.
			j := i + 1
			for j < len(data) && data[j] >= utf8.RuneSelf {
				j++
			}
			dst = append(dst, data[i:j]...)
			i = j
		default:
			if !final && !utf8.FullRune(data[i:]) {
				return dst, i, nil
			}
			r, size := utf8.DecodeRune(data[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
		}
	}
	return dst, i, nil
}

// AppendDecoded appends the text of the whole string body to dst, as
// encoding/json decodes it.
func AppendDecoded(dst, body []byte) ([]byte, error) {
	dst, _, err := decodeSome(dst, body, true, false)
	return dst, err
}

// AppendStrict appends the text of the whole string body to dst,
// strictly; on an error, at is the offset in body where it lies.
func AppendStrict(dst, body []byte) (out []byte, at int, err error) {
	return decodeSome(dst, body, true, true)
}

// Decoder decodes a string body written to it in pieces onto W, strictly.
// Close ends the body.
type Decoder struct {
	W     io.Writer
	pend  []byte // an escape cut by the end of a piece
	in    []byte
	out   []byte
	off   int64 // bytes of the body written before the current piece
	errAt int64
}

// ErrAt is, after a decoding error, the offset in the body where the
// failing escape or byte starts.
func (d *Decoder) ErrAt() int64 { return d.errAt }

func (d *Decoder) Write(p []byte) (int, error) {
	err := d.feed(p, false)
	d.off += int64(len(p))
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close decodes what is left; the string body ends here.
func (d *Decoder) Close() error { return d.feed(nil, true) }

func (d *Decoder) feed(p []byte, final bool) error {
	data := p
	if len(d.pend) > 0 {
		// Complete the held-back sequence with the head of p (maxHeld
		// bytes suffice), decode that, then go on in p itself.
		n := min(len(p), maxHeld+1)
		d.in = append(append(d.in[:0], d.pend...), p[:n]...)
		out, used, err := decodeSome(d.out[:0], d.in, final && n == len(p), true)
		d.out = out
		if err != nil {
			d.errAt = d.off - int64(len(d.pend)) + int64(used)
			return err
		}
		if used < len(d.pend) {
			if n == len(p) && !final {
				d.pend = append(d.pend[:0], d.in[used:]...)
				return d.flush()
			}
			// Cannot happen: 12 more bytes always complete a sequence.
			return ErrTruncEsc
		}
		data = p[used-len(d.pend):]
		d.pend = d.pend[:0]
		if err := d.flush(); err != nil {
			return err
		}
	}
	base := d.off + int64(len(p)-len(data)) // offset of data[0] in the body
	out, used, err := decodeSome(d.out[:0], data, final, true)
	d.out = out
	if err != nil {
		d.errAt = base + int64(used)
		return err
	}
	d.pend = append(d.pend[:0], data[used:]...)
	return d.flush()
}

func (d *Decoder) flush() error {
	if len(d.out) == 0 {
		return nil
	}
	_, err := d.W.Write(d.out)
	d.out = d.out[:0]
	return err
}
