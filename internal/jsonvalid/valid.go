// Package jsonvalid checks, as bytes stream past, whether they form exactly
// one JSON document (RFC 8259), without building it and in memory that does
// not grow with the document's size (nesting is kept as one bit per level).
package jsonvalid

import "bytes"

// MaxDepth bounds nesting. A deeper document is reported as not valid rather
// than growing the stack without limit; 1<<20 levels cost 128 KiB of bits.
const MaxDepth = 1 << 20

type state uint8

const (
	sValue      state = iota // expecting a value
	sValueOrEnd              // after '[': a value or ']'
	sKeyOrEnd                // after '{': a key or '}'
	sKey                     // after ',' in an object: a key
	sColon                   // after a key
	sCommaOrEnd              // after a value inside a container
	sString                  // inside a string
	sStringEsc               // after a backslash
	sStringU                 // inside \uXXXX (count in hex)
	sNumMinus                // after '-'
	sNumZero                 // after a leading 0
	sNumInt                  // in integer digits
	sNumDot                  // after '.'
	sNumFrac                 // in fraction digits
	sNumE                    // after 'e'
	sNumESign                // after 'e+' or 'e-'
	sNumExp                  // in exponent digits
	sLiteral                 // inside true, false or null
	sDone                    // the document ended; only whitespace may follow
	sError
)

// Validator is fed with Write and asked with Valid. The zero value is ready.
type Validator struct {
	st      state
	inKey   bool   // the string being read is an object key
	stack   []byte // bit per level: 1 = object, 0 = array
	depth   int
	hex     int    // remaining hex digits of a \u escape
	lit     string // the rest of the literal being read
	started bool
	first   byte // the first byte of the document
}

// Failed reports whether the bytes so far already rule out a valid document,
// so a caller can stop feeding.
func (v *Validator) Failed() bool { return v.st == sError }

func (v *Validator) push(obj bool) bool {
	if v.depth >= MaxDepth {
		return false
	}
	i := v.depth
	if i/8 >= len(v.stack) {
		v.stack = append(v.stack, 0)
	}
	if obj {
		v.stack[i/8] |= 1 << (i % 8)
	} else {
		v.stack[i/8] &^= 1 << (i % 8)
	}
	v.depth++
	return true
}

func (v *Validator) top() (obj bool) {
	i := v.depth - 1
	return v.stack[i/8]&(1<<(i%8)) != 0
}

// afterValue moves to the state that follows a complete value.
func (v *Validator) afterValue() {
	if v.depth == 0 {
		v.st = sDone
	} else {
		v.st = sCommaOrEnd
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Write feeds p. It never fails; see Valid.
func (v *Validator) Write(p []byte) (int, error) {
	n := len(p)
	for i := 0; i < len(p); i++ {
		c := p[i]
	again:
		switch v.st {
		case sError:
			return n, nil
		case sDone:
			if !isSpace(c) {
				v.st = sError
			}
		case sString:
			// Fast path: skip ordinary string bytes.
			j := i
			for j < len(p) && p[j] != '"' && p[j] != '\\' && p[j] >= 0x20 {
				j++
			}
			i = j
			if i == len(p) {
				return n, nil
			}
			switch c = p[i]; {
			case c == '"':
				if v.inKey {
					v.inKey = false
					v.st = sColon
				} else {
					v.afterValue()
				}
			case c == '\\':
				v.st = sStringEsc
			default:
				v.st = sError
			}
		case sStringEsc:
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.st = sString
			case 'u':
				v.st, v.hex = sStringU, 4
			default:
				v.st = sError
			}
		case sStringU:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				v.st = sError
				break
			}
			if v.hex--; v.hex == 0 {
				v.st = sString
			}
		case sLiteral:
			if c != v.lit[0] {
				v.st = sError
				break
			}
			if v.lit = v.lit[1:]; v.lit == "" {
				v.afterValue()
			}
		case sValue, sValueOrEnd:
			if isSpace(c) {
				break
			}
			if c == ']' && v.st == sValueOrEnd {
				v.depth--
				v.afterValue()
				break
			}
			if !v.started {
				v.started, v.first = true, c
			}
			switch {
			case c == '{':
				if !v.push(true) {
					v.st = sError
				} else {
					v.st = sKeyOrEnd
				}
			case c == '[':
				if !v.push(false) {
					v.st = sError
				} else {
					v.st = sValueOrEnd
				}
			case c == '"':
				v.st = sString
			case c == 't':
				v.st, v.lit = sLiteral, "rue"
			case c == 'f':
				v.st, v.lit = sLiteral, "alse"
			case c == 'n':
				v.st, v.lit = sLiteral, "ull"
			case c == '-':
				v.st = sNumMinus
			case c == '0':
				v.st = sNumZero
			case c >= '1' && c <= '9':
				v.st = sNumInt
			default:
				v.st = sError
			}
		case sKeyOrEnd, sKey:
			if isSpace(c) {
				break
			}
			switch {
			case c == '"':
				v.st, v.inKey = sString, true
			case c == '}' && v.st == sKeyOrEnd:
				v.depth--
				v.afterValue()
			default:
				v.st = sError
			}
		case sColon:
			if isSpace(c) {
				break
			}
			if c == ':' {
				v.st = sValue
			} else {
				v.st = sError
			}
		case sCommaOrEnd:
			if isSpace(c) {
				break
			}
			obj := v.top()
			switch {
			case c == ',' && obj:
				v.st = sKey
			case c == ',':
				v.st = sValue
			case c == '}' && obj, c == ']' && !obj:
				v.depth--
				v.afterValue()
			default:
				v.st = sError
			}
		case sNumMinus:
			switch {
			case c == '0':
				v.st = sNumZero
			case c >= '1' && c <= '9':
				v.st = sNumInt
			default:
				v.st = sError
			}
		case sNumZero, sNumInt:
			switch {
			case c >= '0' && c <= '9' && v.st == sNumInt:
			case c == '.':
				v.st = sNumDot
			case c == 'e' || c == 'E':
				v.st = sNumE
			default:
				v.afterValue()
				goto again
			}
		case sNumDot:
			if c >= '0' && c <= '9' {
				v.st = sNumFrac
			} else {
				v.st = sError
			}
		case sNumFrac:
			switch {
			case c >= '0' && c <= '9':
			case c == 'e' || c == 'E':
				v.st = sNumE
			default:
				v.afterValue()
				goto again
			}
		case sNumE:
			switch {
			case c == '+' || c == '-':
				v.st = sNumESign
			case c >= '0' && c <= '9':
				v.st = sNumExp
			default:
				v.st = sError
			}
		case sNumESign:
			if c >= '0' && c <= '9' {
				v.st = sNumExp
			} else {
				v.st = sError
			}
		case sNumExp:
			if !(c >= '0' && c <= '9') {
				v.afterValue()
				goto again
			}
		}
	}
	return n, nil
}

// Valid reports whether everything written is exactly one JSON document,
// optionally surrounded by whitespace.
func (v *Validator) Valid() bool {
	switch v.st {
	case sDone:
		return true
	case sNumZero, sNumInt, sNumFrac, sNumExp:
		return v.depth == 0
	}
	return false
}

// Valid reports whether b is exactly one JSON document.
func Valid(b []byte) bool {
	var v Validator
	v.Write(b)
	return v.Valid()
}

// Started reports whether a value has begun (anything but whitespace was
// written).
func (v *Validator) Started() bool { return v.started || v.st == sError }

// Container reports whether the document begun is an object or an array.
func (v *Validator) Container() bool { return v.first == '{' || v.first == '[' }

// Lines checks, as bytes stream past, whether every non-empty line is one
// JSON object or array (NDJSON, JSON Lines as tools write them: a line of
// "42" or "true" is a JSON document too, but a value that is all such lines,
// `seq` output say, is not taken for NDJSON). The zero value is ready.
type Lines struct {
	v    Validator
	docs int64
	bad  bool
}

// StartAfterLine begins checking after a first line that was found to be
// one document (by a Validator fed the same bytes).
func (l *Lines) StartAfterLine() { l.docs = 1 }

// Fail records that a line is not one document.
func (l *Lines) Fail() { l.bad = true }

// Failed reports whether a line already failed.
func (l *Lines) Failed() bool { return l.bad }

// Write feeds p.
func (l *Lines) Write(p []byte) {
	for len(p) > 0 && !l.bad {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.v.Write(p)
			l.bad = l.v.Failed()
			return
		}
		l.v.Write(p[:i])
		l.endLine()
		p = p[i+1:]
	}
}

func (l *Lines) endLine() {
	if l.v.Started() {
		if l.v.Valid() && l.v.Container() {
			l.docs++
		} else {
			l.bad = true
		}
	}
	l.v = Validator{stack: l.v.stack[:0]}
}

// Valid reports whether the bytes written are at least two JSON objects
// or arrays, one on each non-empty line.
func (l *Lines) Valid() bool {
	if l.bad {
		return false
	}
	docs := l.docs
	if l.v.Started() {
		if !l.v.Valid() || !l.v.Container() {
			return false
		}
		docs++
	}
	return docs >= 2
}
