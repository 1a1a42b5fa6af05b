package expand

import (
	"fmt"
	"unicode/utf8"

	"github.com/retval/retval/pkg/retain"
)

// A selection goes into a JSON string wherever resolve answers in JSON
// (--batch, --json) and wherever expand puts it. A JSON string holds
// Unicode text: bytes that are not UTF-8 have no place in it, and
// encoding/json would write U+FFFD for each, so the text would differ from
// the bytes whose size and digest are reported for it. Such a selection
// therefore fails not_utf8, naming the first offending byte of the value;
// it is never substituted. A JSON string's decoded text (as: string) is
// held to the same rule: a \u escape of a lone UTF-16 surrogate ("\ud800")
// decodes to no UTF-8 at all, so that string fails not_utf8 too, even
// where raw bytes would be returned, since there are no bytes to return.
//
// A decoded string is checked on its raw body: escapes decode to whole
// UTF-8 sequences and never to a lone continuation byte, so the text is
// valid exactly when the body is and holds no lone surrogate escape.

// NotUTF8Error is a selection that a JSON string cannot carry: the byte at
// Offset of Value is not part of a valid UTF-8 sequence, or, with Escape
// set, the string there holds a \u escape of a lone UTF-16 surrogate. It
// is wrapped in a retain.Error with code not_utf8.
type NotUTF8Error struct {
	Value  string
	Offset int64
	Byte   byte   // the offending byte (unless Escape is set)
	Escape string // the escape of a lone surrogate, e.g. `\ud800`
	// Template is set when the text is a $concat part of a template, so
	// Offset is a byte of the template.
	Template bool
}

func (e *NotUTF8Error) Error() string {
	switch {
	case e.Template && e.Escape != "":
		return fmt.Sprintf("this text holds %s at byte %d of the template, a lone UTF-16 surrogate that no UTF-8 text can hold; write the character it stands for, or a pair of surrogates", e.Escape, e.Offset)
	case e.Template:
		return fmt.Sprintf("this text is not valid UTF-8 at byte %d of the template (0x%02x), and a JSON string cannot carry it; send the template as UTF-8", e.Offset, e.Byte)
	case e.Escape != "":
		return fmt.Sprintf("the string in value %q holds %s at byte %d, a lone UTF-16 surrogate: its text is not valid UTF-8, and a JSON string cannot carry it; read it with \"as\": \"lexeme\" to get its escaped form", e.Value, e.Escape, e.Offset)
	}
	return fmt.Sprintf("value %q is not valid UTF-8 at byte %d (0x%02x), and a JSON string cannot carry it; select bytes that leave it out, or read the raw bytes with retval resolve, without --batch or --json", e.Value, e.Offset, e.Byte)
}

func notUTF8(e *NotUTF8Error) error { return &retain.Error{Code: retain.CodeNotUTF8, Err: e} }

// utf8Scan finds the first byte that is not part of valid UTF-8 in the
// bytes written to it, in order, from offset off of a value. A sequence
// cut by the end of one write is completed by the next.
type utf8Scan struct {
	value string
	off   int64 // offset of the next byte written
	carry []byte
	bad   int64 // offset of the first bad byte, or -1
	badB  byte
	// onBad, when set, is called once, as soon as a bad byte is seen.
	onBad func()
}

func newUTF8Scan(value string, off int64) *utf8Scan {
	return &utf8Scan{value: value, off: off, bad: -1}
}

func (u *utf8Scan) fail(off int64, b byte) {
	u.bad, u.badB = off, b
	if u.onBad != nil {
		u.onBad()
	}
}

// Write never fails: it only looks.
func (u *utf8Scan) Write(p []byte) (int, error) {
	n := len(p)
	if u.bad >= 0 {
		u.off += int64(n)
		return n, nil
	}
	base := u.off // offset of p[0]
	u.off += int64(n)
	if len(u.carry) > 0 {
		// Complete the sequence cut at the end of the last write.
		held := len(u.carry)
		k := 0
		for k < len(p) && !utf8.FullRune(u.carry) {
			u.carry = append(u.carry, p[k])
			k++
		}
		if !utf8.FullRune(u.carry) {
			return n, nil // still cut: p was shorter than the rest of it
		}
		start := base - int64(held)
		r, size := utf8.DecodeRune(u.carry)
		if r == utf8.RuneError && size == 1 {
			u.fail(start, u.carry[0])
			return n, nil
		}
		// The sequence began in the carry, so it takes size-held bytes of p.
		p = p[size-held:]
		base += int64(size - held)
		u.carry = u.carry[:0]
	}
	// Hold back a sequence cut by the end of p.
	cut := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				cut = k
			}
			break
		}
	}
	if body := p[:cut]; !utf8.Valid(body) {
		for i := 0; i < len(body); {
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				u.fail(base+int64(i), body[i])
				return n, nil
			}
			i += size
		}
	}
	u.carry = append(u.carry, p[cut:]...)
	return n, nil
}

// err reports the first bad byte, once everything has been written: a
// sequence still cut at the end is bad too.
func (u *utf8Scan) err() error {
	if u.bad < 0 && len(u.carry) > 0 {
		u.fail(u.off-int64(len(u.carry)), u.carry[0])
	}
	if u.bad < 0 {
		return nil
	}
	return notUTF8(&NotUTF8Error{Value: u.value, Offset: u.bad, Byte: u.badB})
}

// checkUTF8 checks bytes held whole that start at offset off of value.
func checkUTF8(value string, off int64, b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	u := newUTF8Scan(value, off)
	u.Write(b)
	return u.err()
}
