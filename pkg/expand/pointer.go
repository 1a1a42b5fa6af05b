package expand

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/jsonvalid"
	"github.com/retval/retval/pkg/retain"
)

// Pointer is a parsed RFC 6901 JSON pointer. The zero Pointer is "", which
// selects the whole document.
type Pointer struct {
	text string
	toks []string
}

// ParsePointer parses an RFC 6901 pointer: empty, or "/"-separated
// reference tokens in which "~1" stands for "/" and "~0" for "~". A "~"
// followed by anything else is an error (bad_pointer).
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		return Pointer{}, retain.Errorf(retain.CodeBadPointer, "pointer %q must be empty (the whole document) or start with \"/\", as in %q", s, "/"+s)
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		for j := 0; j < len(p); j++ {
			if p[j] == '~' && (j+1 == len(p) || p[j+1] != '0' && p[j+1] != '1') {
				return Pointer{}, retain.Errorf(retain.CodeBadPointer, "pointer %q: \"~\" must be followed by 0 or 1 (write ~0 for \"~\" and ~1 for \"/\")", s)
			}
		}
		if strings.IndexByte(p, '~') >= 0 {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
	}
	return Pointer{text: s, toks: parts}, nil
}

// String returns the pointer as written.
func (p Pointer) String() string { return p.text }

// Tokens returns the decoded reference tokens.
func (p Pointer) Tokens() []string { return p.toks }

// prefix renders the pointer made of the first n tokens, for messages.
func (p Pointer) prefix(n int) string {
	var b strings.Builder
	for _, t := range p.toks[:n] {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// arrayIndex reads an RFC 6901 array index: "0" or digits without a
// leading zero. An index too large for int64 is returned as -1: it exists
// in no array. The array is at p's first d tokens.
func arrayIndex(p Pointer, d int) (int64, error) {
	tok := p.toks[d]
	at := func() string { return where(p.prefix(d)) }
	switch {
	case tok == "-":
		return 0, retain.Errorf(retain.CodeBadPointer, "index \"-\" in the array %s names the element after the last one, which does not exist; use an index from 0", at())
	case tok == "" || strings.TrimLeft(tok, "0123456789") != "":
		return 0, retain.Errorf(retain.CodeBadPointer, "%q is not an index into the array %s: use a number from 0", tok, at())
	case len(tok) > 1 && tok[0] == '0':
		fixed := strings.TrimLeft(tok, "0")
		if fixed == "" {
			fixed = "0"
		}
		return 0, retain.Errorf(retain.CodeBadPointer, "index %q into the array %s has a leading zero; write %s", tok, at(), fixed)
	}
	n, err := strconv.ParseInt(tok, 10, 64)
	if err != nil {
		return -1, nil
	}
	return n, nil
}

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

func kindOf(c byte) Kind {
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

// Span is where a JSON value lies in a document: bytes [Start, End), from
// the value's first byte to its last, without surrounding whitespace.
type Span struct {
	Start, End int64
	Kind       Kind
}

// MaxDepth bounds nesting, as retain's validity check does: a document
// nested deeper is not valid JSON for retval.
const MaxDepth = jsonvalid.MaxDepth

// chunkSize is how much of the document is read at a time.
const chunkSize = 256 << 10

// FindPointer returns the span of the value that p selects in the JSON
// document held by r (size bytes). It streams: the document is read once,
// front to back, in large chunks, and never built in memory; what the
// pointer does not look into is skipped by searching for quotes and
// brackets. Nesting is followed with a bit per level, never by recursion.
//
// Each object on the path is read to its end: a looked-up member that
// occurs more than once is ambiguous_json, never a silent pick. Member names
// are compared decoded ("a\u0062" is "ab"), as encoding/json decodes them.
// Array indices follow RFC 6901: no leading zeros, "-" is an error.
//
// Errors: bad_pointer (nothing selected), ambiguous_json, not_json for a
// syntax error met on the way, or the reader's error. FindPointer checks
// the syntax of what it reads on the path and the bracket structure of what
// it skips, but does not prove the whole document valid: callers with a
// retained value check its descriptor's json field first.
func FindPointer(r io.ReaderAt, size int64, p Pointer) (Span, error) {
	return findPointer(r, size, p, chunkSize)
}

// findPointer is FindPointer reading chunk bytes at a time (tests use tiny
// chunks to put every token across a chunk boundary).
func findPointer(r io.ReaderAt, size int64, p Pointer, chunk int) (Span, error) {
	s := &scanner{r: r, size: size, chunk: chunk}
	w := walker{s: s, p: p}
	return w.find()
}

// scanner reads a document forward in chunks.
type scanner struct {
	r     io.ReaderAt
	size  int64
	chunk int
	buf   []byte
	base  int64 // offset of buf[0]
	pos   int   // next byte is buf[pos]
	// escNext: the previous chunk ended inside a string with an odd run of
	// backslashes, so the first byte of this chunk is escaped.
	escNext bool
	stack   []uint64 // one bit per open container being skipped: 1 = object
	scratch []byte
	dec     []byte
}

func (s *scanner) off() int64 { return s.base + int64(s.pos) }

// fill reads the next chunk once buf is used up. It reports false at the
// end of the document.
func (s *scanner) fill() (bool, error) {
	s.base += int64(len(s.buf))
	s.pos = 0
	n := min(int64(s.chunk), s.size-s.base)
	if n <= 0 {
		s.buf = s.buf[:0]
		return false, nil
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

func (s *scanner) syntax(format string, args ...any) error {
	return retain.Errorf(retain.CodeNotJSON, "not valid JSON at byte %d: %s; read it with bytes or lines instead", s.off(), fmt.Sprintf(format, args...))
}

// peek returns the next byte after any whitespace, without consuming it.
func (s *scanner) peek() (byte, error) {
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
			return 0, s.syntax("unexpected end of the document")
		}
	}
}

// expect consumes the next non-space byte, which must be one of want.
func (s *scanner) expect(want string) (byte, error) {
	c, err := s.peek()
	if err != nil {
		return 0, err
	}
	if strings.IndexByte(want, c) < 0 {
		return 0, s.syntax("found %q where one of %q belongs", c, want)
	}
	s.pos++
	return c, nil
}

// skipStringBody moves past the closing quote of a string whose opening
// quote was consumed. It searches for quotes, not byte by byte: a quote
// preceded by an odd run of backslashes is escaped.
func (s *scanner) skipStringBody() error {
	for {
		if s.pos >= len(s.buf) {
			ok, err := s.fill()
			if err != nil {
				return err
			}
			if !ok {
				return s.syntax("unterminated string")
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
// b, or -1, eight bytes at a time. It may also stop at 'Y', '_', 'y' or
// DEL, which share the brackets' bit pattern under c|0x26 == 0x7f and
// never occur outside a string in JSON; callers pass over them.
func structural(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		m := hasZero(w^0x2222222222222222) | hasZero((w|0x2626262626262626)^0x7f7f7f7f7f7f7f7f)
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case '"', '[', ']', '{', '}':
			return i
		}
	}
	return -1
}

// skipContainer moves past the bracket that closes the container whose
// opening bracket open was just consumed. It follows strings and the
// nesting of brackets (each closing bracket must match its opener) and
// ignores everything else.
func (s *scanner) skipContainer(open byte) error {
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
				return s.syntax("unexpected end of the document inside a container")
			}
			buf, i = s.buf, s.pos
		}
		j := structural(buf[i:])
		if j < 0 {
			i = len(buf)
			continue
		}
		i += j + 1
		switch c := buf[i-1]; c {
		case '"':
			// Most strings end within the chunk without a backslash before
			// their closing quote: find that quote in the next word, or
			// with IndexByte; leave everything else to skipStringBody.
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
			if err := s.skipStringBody(); err != nil {
				return err
			}
			buf, i = s.buf, s.pos
		case 'Y', '_', 'y', 0x7f:
			// not structural (see structural)
		case '{', '[':
			if depth >= MaxDepth {
				s.pos = i - 1
				return s.syntax("nesting deeper than %d levels", MaxDepth)
			}
			s.push(depth, c == '{')
			depth++
		case '}', ']':
			depth--
			if s.stack[depth/64]&(1<<(depth%64)) != 0 != (c == '}') {
				s.pos = i - 1
				return s.syntax("%q closes a container it did not open", c)
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
func (s *scanner) push(d int, obj bool) {
	if d/64 >= len(s.stack) {
		s.stack = append(s.stack, 0)
	}
	if obj {
		s.stack[d/64] |= 1 << (d % 64)
	} else {
		s.stack[d/64] &^= 1 << (d % 64)
	}
}

// isDelim reports whether c ends a number or literal.
func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// skipScalar moves past a number, true, false or null and checks its syntax.
func (s *scanner) skipScalar() error {
	var v jsonvalid.Validator
	start := s.off()
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
		for j < len(b) && !isDelim(b[j]) {
			j++
		}
		v.Write(b[:j])
		s.pos += j
		if j < len(b) {
			break
		}
	}
	if !v.Valid() {
		return retain.Errorf(retain.CodeNotJSON, "not valid JSON at byte %d: not a number, true, false or null; read it with bytes or lines instead", start)
	}
	return nil
}

// skipValue moves past the value starting at the next non-space byte and
// returns its kind.
func (s *scanner) skipValue() (Kind, error) {
	c, err := s.peek()
	if err != nil {
		return 0, err
	}
	k := kindOf(c)
	switch k {
	case KindString:
		s.pos++
		err = s.skipStringBody()
	case KindObject, KindArray:
		s.pos++
		err = s.skipContainer(c)
	case KindNone:
		err = s.syntax("unexpected %q where a value belongs", c)
	default:
		err = s.skipScalar()
	}
	return k, err
}

// bytesAt returns bytes [start, end) of the document: from the current
// chunk when they are in it, else read again. The result is valid until
// the next call.
func (s *scanner) bytesAt(start, end int64) ([]byte, error) {
	if start >= s.base && end <= s.base+int64(len(s.buf)) {
		return s.buf[start-s.base : end-s.base], nil
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

// key reads a member name (its opening quote consumed) and reports whether
// it decodes to tok. Only names short enough to possibly equal tok are
// looked at: a decoded name is at least a sixth of its encoded length.
func (s *scanner) key(tok string) (bool, error) {
	start := s.off()
	if err := s.skipStringBody(); err != nil {
		return false, err
	}
	n := s.off() - 1 - start
	if n > 6*int64(len(tok)) {
		return false, nil
	}
	raw, err := s.bytesAt(start, start+n)
	if err != nil {
		return false, err
	}
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= 0x80 || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(raw) == tok, nil
	}
	s.dec, err = appendDecoded(s.dec[:0], raw)
	if err != nil {
		return false, retain.Errorf(retain.CodeNotJSON, "not valid JSON at byte %d: %v; read it with bytes or lines instead", start, err)
	}
	return string(s.dec) == tok, nil
}

// level is an object or array on the pointer's path.
type level struct {
	obj   bool
	match int64 // offset of the selected member's value
}

type walker struct {
	s      *scanner
	p      Pointer
	levels []level
}

func (w *walker) find() (Span, error) {
	s, p := w.s, w.p
	if s.size == 0 {
		return Span{}, s.syntax("the document is empty")
	}
	for d, tok := range p.toks {
		c, err := s.peek()
		if err != nil {
			return Span{}, err
		}
		at := func() string { return p.prefix(d) }
		switch c {
		case '{':
			s.pos++
			found, err := w.findMember(tok)
			if err != nil {
				return Span{}, err
			}
			if !found {
				return Span{}, retain.Errorf(retain.CodeBadPointer, "pointer %q selects nothing: the object %s has no member %q (read that object with pointer %q to see its members)", p.text, where(at()), tok, at())
			}
		case '[':
			idx, err := arrayIndex(p, d)
			if err != nil {
				return Span{}, err
			}
			s.pos++
			n, found, err := w.findElement(idx)
			if err != nil {
				return Span{}, err
			}
			if !found {
				return Span{}, retain.Errorf(retain.CodeBadPointer, "pointer %q selects nothing: the array %s has %s, so index %s is past its end", p.text, where(at()), plural(n, "element"), tok)
			}
		default:
			k := kindOf(c)
			if k == KindNone {
				return Span{}, s.syntax("unexpected %q where a value belongs", c)
			}
			return Span{}, retain.Errorf(retain.CodeBadPointer, "pointer %q selects nothing: the value %s is %s %s, which has no member %q", p.text, where(at()), article(k), k, tok)
		}
	}
	if _, err := s.peek(); err != nil {
		return Span{}, err
	}
	sp := Span{Start: s.off()}
	k, err := s.skipValue()
	if err != nil {
		return Span{}, err
	}
	sp.End, sp.Kind = s.off(), k
	if err := w.finish(); err != nil {
		return Span{}, err
	}
	return sp, nil
}

// where names the place a pointer prefix selects, for messages.
func where(at string) string {
	if at == "" {
		return "at the top level"
	}
	return fmt.Sprintf("at %q", at)
}

func article(k Kind) string {
	if k == KindObject || k == KindArray {
		return "an"
	}
	return "a"
}

// findMember reads members of the object whose '{' was consumed until one
// named tok; it stops at that member's value.
func (w *walker) findMember(tok string) (bool, error) {
	s := w.s
	c, err := s.expect("\"}")
	if err != nil || c == '}' {
		return false, err
	}
	for {
		match, err := s.key(tok)
		if err != nil {
			return false, err
		}
		if _, err := s.expect(":"); err != nil {
			return false, err
		}
		if match {
			if _, err := s.peek(); err != nil {
				return false, err
			}
			w.levels = append(w.levels, level{obj: true, match: s.off()})
			return true, nil
		}
		if _, err := s.skipValue(); err != nil {
			return false, err
		}
		if c, err := s.expect(",}"); err != nil || c == '}' {
			return false, err
		}
		if _, err := s.expect("\""); err != nil {
			return false, err
		}
	}
}

// findElement reads elements of the array whose '[' was consumed up to
// element idx; it stops at that element. Without one it returns how many
// elements the array has.
func (w *walker) findElement(idx int64) (int64, bool, error) {
	s := w.s
	c, err := s.peek()
	if err != nil {
		return 0, false, err
	}
	if c == ']' {
		s.pos++
		return 0, false, nil
	}
	for i := int64(0); ; i++ {
		if i == idx {
			w.levels = append(w.levels, level{match: s.off()})
			return 0, true, nil
		}
		if _, err := s.skipValue(); err != nil {
			return 0, false, err
		}
		if c, err := s.expect(",]"); err != nil || c == ']' {
			return i + 1, false, err
		}
	}
}

// finish reads the rest of every object on the path, innermost first, to
// make sure the member looked up in it occurs only once. Arrays outside the
// outermost such object need not be read further.
func (w *walker) finish() error {
	s, p := w.s, w.p
	outer := -1
	for d := range w.levels {
		if w.levels[d].obj {
			outer = d
			break
		}
	}
	if outer < 0 {
		return nil
	}
	for d := len(w.levels) - 1; d >= outer; d-- {
		if !w.levels[d].obj {
			if err := s.skipContainer('['); err != nil {
				return err
			}
			continue
		}
		tok := p.toks[d]
		for {
			c, err := s.expect(",}")
			if err != nil {
				return err
			}
			if c == '}' {
				break
			}
			if _, err := s.expect("\""); err != nil {
				return err
			}
			match, err := s.key(tok)
			if err != nil {
				return err
			}
			if _, err := s.expect(":"); err != nil {
				return err
			}
			if _, err := s.peek(); err != nil {
				return err
			}
			if match {
				return retain.Errorf(retain.CodeAmbiguousJSON, "pointer %q is ambiguous: member %q occurs more than once in the object %s (values at bytes %d and %d); select one by bytes instead", p.text, tok, where(p.prefix(d)), w.levels[d].match, s.off())
			}
			if _, err := s.skipValue(); err != nil {
				return err
			}
		}
	}
	return nil
}
