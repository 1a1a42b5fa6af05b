// Package jsonscan reads a JSON document forward from an io.ReaderAt in
// large chunks, without building it: it skips what it does not look into
// by searching for quotes and brackets (with AVX2, by reading masks of
// them built with vector instructions: index.go), keeps nesting as one bit
// per level and never recurses. Pointer lookups (pkg/expand), outlines and the
// JSON-aware stub (pkg/retain) are built on it.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"

	"github.com/retval/retval/internal/jsonvalid"
)

// Kind is the type of a JSON value.
type Kind uint8

const (
	KindNone Kind = iota // not a JSON selection
	KindObject
	KindArray
	KindString
	KindNumber
	KindBool
	KindNull
)

func (k Kind) String() string {
	switch k {
	case KindObject:
		return "object"
	case KindArray:
		return "array"
	case KindString:
		return "string"
	case KindNumber:
		return "number"
	case KindBool:
		return "boolean"
	case KindNull:
		return "null"
	}
	return "text"
}

// KindOf is the kind of the value whose first byte is c.
func KindOf(c byte) Kind {
	switch {
	case c == '{':
		return KindObject
	case c == '[':
		return KindArray
	case c == '"':
		return KindString
	case c == '-' || c >= '0' && c <= '9':
		return KindNumber
	case c == 't' || c == 'f':
		return KindBool
	case c == 'n':
		return KindNull
	}
	return KindNone
}

// MaxDepth bounds nesting, as retain's validity check does: a document
// nested deeper is not valid JSON for retval.
const MaxDepth = jsonvalid.MaxDepth

// ChunkSize is how much of the document is read at a time.
const ChunkSize = 256 << 10

// SyntaxError is a place where the document is not JSON.
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("not valid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Scanner reads a document forward in chunks.
type Scanner struct {
	r io.ReaderAt
	// mem is the document when it is held in memory (NewBytes): chunks
	// are slices of it, not copies.
	mem   []byte
	size  int64
	chunk int
	buf   []byte
	base  int64 // offset of buf[0]
	pos   int   // next byte is buf[pos]
	// escNext: the previous chunk ended inside a string with an odd run of
	// backslashes, so the first byte of this chunk is escaped.
	escNext bool
	// vec: skip with the structural index (masks built with vector
	// instructions); else search for quotes and brackets a word at a time.
	vec     bool
	masks   []blockMasks // the chunk's structural index, as far as built
	stack   []uint64     // one bit per open container being skipped: 1 = object
	scratch []byte
	dec     []byte
	// commas counts the commas at the first level of the container being
	// skipped by skipCounting.
	commas int64
}

// New returns a Scanner of the document of size bytes held by r, reading
// chunk bytes at a time (0: ChunkSize; tests use tiny chunks to put every
// token across a chunk boundary).
func New(r io.ReaderAt, size int64, chunk int) *Scanner {
	if chunk <= 0 {
		chunk = ChunkSize
	}
	return &Scanner{r: r, size: size, chunk: chunk, vec: hasVector}
}

// NewAt is New for a document that lies in bytes [start, end) of r:
// offsets are r's.
func NewAt(r io.ReaderAt, start, end int64, chunk int) *Scanner {
	s := New(r, end, chunk)
	s.base = start
	return s
}

// NewBytes is New for a document held in memory: its chunks are slices
// of doc, so that a large document is scanned without a copy of any of it.
func NewBytes(doc []byte, chunk int) *Scanner {
	s := New(bytes.NewReader(doc), int64(len(doc)), chunk)
	s.mem = doc
	return s
}

// Fork returns a Scanner of the same document from offset at (which the
// caller knows to be a value's first byte).
func (s *Scanner) Fork(at int64) *Scanner {
	f := NewAt(s.r, at, s.size, s.chunk)
	f.mem = s.mem
	return f
}

// Size is the document's size.
func (s *Scanner) Size() int64 { return s.size }

// Off is the offset of the next byte.
func (s *Scanner) Off() int64 { return s.base + int64(s.pos) }

// Next consumes the byte Peek returned.
func (s *Scanner) Next() { s.pos++ }

// fill reads the next chunk once buf is used up. It reports false at the
// end of the document.
func (s *Scanner) fill() (bool, error) {
	s.base += int64(len(s.buf))
	s.pos = 0
	s.masks = s.masks[:0]
	n := min(int64(s.chunk), s.size-s.base)
	if n <= 0 {
		s.buf = s.buf[:0]
		return false, nil
	}
	if s.mem != nil {
		s.buf = s.mem[s.base : s.base+n : s.base+n]
		return true, nil
	}
	if s.buf == nil {
		s.buf = make([]byte, s.chunk)
	}
	s.buf = s.buf[:n]
	k, err := s.r.ReadAt(s.buf, s.base)
	if k < int(n) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, err
	}
	return true, nil
}

// Syntax is a SyntaxError at the scanner's position.
func (s *Scanner) Syntax(format string, args ...any) error {
	return &SyntaxError{Offset: s.Off(), Msg: fmt.Sprintf(format, args...)}
}

// Peek returns the next byte after any whitespace, without consuming it.
// The end of the document is a SyntaxError.
func (s *Scanner) Peek() (byte, error) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		ok, err := s.fill()
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, s.Syntax("unexpected end of the document")
		}
	}
}

// AtEnd skips whitespace and reports whether the document ends there.
func (s *Scanner) AtEnd() (bool, error) {
	for {
		for s.pos < len(s.buf) {
			switch s.buf[s.pos] {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return false, nil
			}
		}
		ok, err := s.fill()
		if err != nil || !ok {
			return err == nil, err
		}
	}
}

// Expect consumes the next non-space byte, which must be one of want.
func (s *Scanner) Expect(want string) (byte, error) {
	c, err := s.Peek()
	if err != nil {
		return 0, err
	}
	// want is a byte or two: a loop, not a call.
	for i := 0; i < len(want); i++ {
		if want[i] == c {
			s.pos++
			return c, nil
		}
	}
	return 0, s.Syntax("found %q where one of %q belongs", c, want)
}

// SkipStringBody moves past the closing quote of a string whose opening
// quote was consumed. It searches for quotes, not byte by byte: a quote
// preceded by an odd run of backslashes is escaped.
func (s *Scanner) SkipStringBody() error {
	if s.vec {
		return s.skipStringIndexed()
	}
	for {
		if s.pos >= len(s.buf) {
			ok, err := s.fill()
			if err != nil {
				return err
			}
			if !ok {
				return s.Syntax("unterminated string")
			}
		}
		if s.escNext {
			s.escNext = false
			s.pos++
			continue
		}
		b := s.buf[s.pos:]
		j := bytes.IndexByte(b, '"')
		if j < 0 {
			k := len(b)
			for k > 0 && b[k-1] == '\\' {
				k--
			}
			s.escNext = (len(b)-k)%2 == 1
			s.pos = len(s.buf)
			continue
		}
		k := j
		for k > 0 && b[k-1] == '\\' {
			k--
		}
		s.pos += j + 1
		if (j-k)%2 == 0 {
			return nil
		}
	}
}

// hasZero marks (with its high bit) the lowest zero byte of v exactly;
// marks above it may be false.
func hasZero(v uint64) uint64 { return (v - 0x0101010101010101) & ^v & 0x8080808080808080 }

// structural returns the index of the first '"', '[', ']', '{' or '}' in
// b (and, with commas, ','), or -1, eight bytes at a time. It may also
// stop at 'Y', '_', 'y' or DEL, which share the brackets' bit pattern
// under c|0x26 == 0x7f and never occur outside a string in JSON; callers
// pass over them.
func structural(b []byte, commas bool) int {
	i := 0
	if commas {
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			m := hasZero(w^0x2222222222222222) | hasZero((w|0x2626262626262626)^0x7f7f7f7f7f7f7f7f) | hasZero(w^0x2c2c2c2c2c2c2c2c)
			if m != 0 {
				return i + bits.TrailingZeros64(m)/8
			}
		}
	} else {
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			m := hasZero(w^0x2222222222222222) | hasZero((w|0x2626262626262626)^0x7f7f7f7f7f7f7f7f)
			if m != 0 {
				return i + bits.TrailingZeros64(m)/8
			}
		}
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case '"', '[', ']', '{', '}':
			return i
		case ',':
			if commas {
				return i
			}
		}
	}
	return -1
}

// SkipContainer moves past the bracket that closes the container whose
// opening bracket open was just consumed. It follows strings and the
// nesting of brackets (each closing bracket must match its opener) and
// ignores everything else.
func (s *Scanner) SkipContainer(open byte) error { return s.skipContainer(open, false) }

// SkipCounting is SkipContainer that also returns the number of members
// or elements of the container.
func (s *Scanner) SkipCounting(open byte) (int64, error) {
	c, err := s.Peek()
	if err != nil {
		return 0, err
	}
	if c == '}' && open == '{' || c == ']' && open == '[' {
		s.pos++
		return 0, nil
	}
	s.commas = 0
	if err := s.skipContainer(open, true); err != nil {
		return 0, err
	}
	return s.commas + 1, nil
}

func (s *Scanner) skipContainer(open byte, commas bool) error {
	if s.vec {
		return s.skipContainerIndexed(open, commas)
	}
	depth := 0
	s.push(depth, open == '{')
	depth++
	// The loop keeps its position in i and writes s.pos back only when it
	// calls out: this is the hot path of skipping.
	buf, i := s.buf, s.pos
	for {
		if i >= len(buf) {
			s.pos = i
			ok, err := s.fill()
			if err != nil {
				return err
			}
			if !ok {
				return s.Syntax("unexpected end of the document inside a container")
			}
			buf, i = s.buf, s.pos
		}
		j := structural(buf[i:], commas)
		if j < 0 {
			i = len(buf)
			continue
		}
		i += j + 1
		switch c := buf[i-1]; c {
		case '"':
			// Most strings end within the chunk without a backslash before
			// their closing quote: find that quote in the next word, or
			// with IndexByte; leave everything else to SkipStringBody.
			if i+8 <= len(buf) {
				w := binary.LittleEndian.Uint64(buf[i:])
				mq, mb := hasZero(w^0x2222222222222222), hasZero(w^0x5c5c5c5c5c5c5c5c)
				if mq != 0 && (mb == 0 || bits.TrailingZeros64(mb) > bits.TrailingZeros64(mq)) {
					i += bits.TrailingZeros64(mq)/8 + 1
					continue
				}
				if mq == 0 && mb == 0 {
					if k := bytes.IndexByte(buf[i+8:], '"'); k >= 0 && buf[i+8+k-1] != '\\' {
						i += 8 + k + 1
						continue
					}
				}
			}
			s.pos = i
			if err := s.SkipStringBody(); err != nil {
				return err
			}
			buf, i = s.buf, s.pos
		case ',':
			if depth == 1 {
				s.commas++
			}
		case 'Y', '_', 'y', 0x7f:
			// not structural (see structural)
		case '{', '[':
			if depth >= MaxDepth {
				s.pos = i - 1
				return s.Syntax("nesting deeper than %d levels", MaxDepth)
			}
			s.push(depth, c == '{')
			depth++
		case '}', ']':
			depth--
			if s.stack[depth/64]&(1<<(depth%64)) != 0 != (c == '}') {
				s.pos = i - 1
				return s.Syntax("%q closes a container it did not open", c)
			}
			if depth == 0 {
				s.pos = i
				return nil
			}
		}
	}
}

// push records whether the container opened at nesting level d (from 0)
// is an object.
func (s *Scanner) push(d int, obj bool) {
	if d/64 >= len(s.stack) {
		s.stack = append(s.stack, 0)
	}
	if obj {
		s.stack[d/64] |= 1 << (d % 64)
	} else {
		s.stack[d/64] &^= 1 << (d % 64)
	}
}

// IsDelim reports whether c ends a number or literal.
func IsDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// SkipScalar moves past a number, true, false or null and checks its syntax.
func (s *Scanner) SkipScalar() error {
	var v jsonvalid.Validator
	start := s.Off()
	for {
		if s.pos >= len(s.buf) {
			ok, err := s.fill()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		b := s.buf[s.pos:]
		j := 0
		for j < len(b) && !IsDelim(b[j]) {
			j++
		}
		v.Write(b[:j])
		s.pos += j
		if j < len(b) {
			break
		}
	}
	if !v.Valid() {
		return &SyntaxError{Offset: start, Msg: "not a number, true, false or null"}
	}
	return nil
}

// SkipValue moves past the value starting at the next non-space byte and
// returns its kind.
func (s *Scanner) SkipValue() (Kind, error) {
	k, _, err := s.skipValue(false)
	return k, err
}

// skipValue is SkipValue that, with count, also returns the number of
// members or elements of a container.
func (s *Scanner) skipValue(count bool) (Kind, int64, error) {
	c, err := s.Peek()
	if err != nil {
		return 0, 0, err
	}
	k := KindOf(c)
	var n int64
	switch k {
	case KindString:
		s.pos++
		err = s.SkipStringBody()
	case KindObject, KindArray:
		s.pos++
		if count {
			n, err = s.SkipCounting(c)
		} else {
			err = s.SkipContainer(c)
		}
	case KindNone:
		err = s.Syntax("unexpected %q where a value belongs", c)
	default:
		err = s.SkipScalar()
	}
	return k, n, err
}

// BytesAt returns bytes [start, end) of the document: from the current
// chunk when they are in it, else read again. The result is valid until
// the next call.
func (s *Scanner) BytesAt(start, end int64) ([]byte, error) {
	if start >= s.base && end <= s.base+int64(len(s.buf)) {
		return s.buf[start-s.base : end-s.base], nil
	}
	if s.mem != nil {
		return s.mem[start:end:end], nil
	}
	if int64(cap(s.scratch)) < end-start {
		s.scratch = make([]byte, end-start)
	}
	b := s.scratch[:end-start]
	if n, err := s.r.ReadAt(b, start); n < len(b) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// Key reads a member name (its opening quote consumed) and reports whether
// it decodes to tok. Only names short enough to possibly equal tok are
// decoded: a decoded name is at least a sixth of its encoded length.
func (s *Scanner) Key(tok string) (bool, error) {
	start := s.Off()
	if err := s.SkipStringBody(); err != nil {
		return false, err
	}
	n := s.Off() - 1 - start
	if n > 6*int64(len(tok)) {
		return false, nil
	}
	name, err := s.name(start, start+n)
	if err != nil {
		return false, err
	}
	return string(name) == tok, nil
}

// Name reads a member name (its opening quote consumed) and returns its
// decoded text, cut to at most max bytes of the encoded name (cut reports
// whether it was), and the offset of its opening quote. The result is
// valid until the next call.
func (s *Scanner) Name(max int64) (name []byte, quote int64, cut bool, err error) {
	start := s.Off()
	if err := s.SkipStringBody(); err != nil {
		return nil, 0, false, err
	}
	end := s.Off() - 1
	if end-start > max {
		// Decode a prefix: cut before a partial escape.
		e := start + max
		raw, err := s.BytesAt(start, e)
		if err != nil {
			return nil, 0, false, err
		}
		if i := bytes.LastIndexByte(raw, '\\'); i >= 0 && len(raw)-i < 12 {
			raw = raw[:i]
		}
		s.dec = append(s.dec[:0], '"')
		s.dec = append(s.dec, raw...)
		s.dec = append(s.dec, '"')
		var str string
		if json.Unmarshal(s.dec, &str) != nil {
			return nil, start - 1, true, nil
		}
		s.dec = append(s.dec[:0], str...)
		return s.dec, start - 1, true, nil
	}
	name, err = s.name(start, end)
	return name, start - 1, false, err
}

// plain reports whether the string body b decodes to itself: it holds no
// backslash, no control character and nothing but ASCII. Eight bytes at a
// time: (w - 0x20…) & ^w has a byte's high bit set for some byte below
// 0x20 exactly when there is one, if no byte has its high bit set.
func plain(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w&0x8080808080808080 != 0 || hasZero(w^0x5c5c5c5c5c5c5c5c) != 0 || (w-0x2020202020202020)&^w&0x8080808080808080 != 0 {
			return false
		}
	}
	for _, c := range b[i:] {
		if c == '\\' || c >= 0x80 || c < 0x20 {
			return false
		}
	}
	return true
}

// name decodes the string body [start, end), as encoding/json does.
func (s *Scanner) name(start, end int64) ([]byte, error) {
	raw, err := s.BytesAt(start, end)
	if err != nil {
		return nil, err
	}
	if plain(raw) {
		return raw, nil
	}
	s.dec = append(s.dec[:0], '"')
	s.dec = append(s.dec, raw...)
	s.dec = append(s.dec, '"')
	var str string
	if err := json.Unmarshal(s.dec, &str); err != nil {
		msg := "invalid escape in a string"
		if bytes.ContainsFunc(raw, func(r rune) bool { return r < 0x20 }) {
			msg = "control character in a string"
		}
		return nil, &SyntaxError{Offset: start, Msg: msg}
	}
	s.dec = append(s.dec[:0], str...)
	return s.dec, nil
}
