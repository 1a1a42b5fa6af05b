package expand

import (
	"errors"
	"fmt"
	"io"

	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/pkg/retain"
)

// Finding what a pointer selects: one streaming walk of the document,
// level by level down the pointer's tokens, on internal/jsonscan's
// scanner. (The pointer itself is pointer.go; outlines are outline.go.)

// Kind is the type of a JSON value.
type Kind = jsonscan.Kind

const (
	KindNone   = jsonscan.KindNone // not a JSON selection
	KindObject = jsonscan.KindObject
	KindArray  = jsonscan.KindArray
	KindString = jsonscan.KindString
	KindNumber = jsonscan.KindNumber
	KindBool   = jsonscan.KindBool
	KindNull   = jsonscan.KindNull
)

// Span is where a JSON value lies in a document: bytes [Start, End), from
// the value's first byte to its last, without surrounding whitespace.
type Span struct {
	Start, End int64
	Kind       Kind
}

// MaxDepth bounds nesting, as retain's validity check does: a document
// nested deeper is not valid JSON for retval.
const MaxDepth = jsonscan.MaxDepth

// chunkSize is how much of the document is read at a time.
const chunkSize = jsonscan.ChunkSize

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
	return findPointerIn(r, 0, size, p, chunk)
}

// findPointerIn is findPointer for a document in bytes [start, end) of r;
// offsets are r's.
func findPointerIn(r io.ReaderAt, start, end int64, p Pointer, chunk int) (Span, error) {
	w := walker{s: jsonscan.NewAt(r, start, end, chunk), p: p, r: r, start: start, end: end, chunk: chunk}
	sp, err := w.find()
	return sp, jsonErr(err)
}

// jsonErr turns the scanner's syntax errors into not_json.
func jsonErr(err error) error {
	var se *jsonscan.SyntaxError
	if errors.As(err, &se) {
		return retain.Errorf(retain.CodeNotJSON, "%v; read it with bytes or lines instead", se)
	}
	return err
}

// level is an object or array on the pointer's path.
type level struct {
	obj   bool
	match int64 // offset of the selected member's value
}

type walker struct {
	s      *jsonscan.Scanner
	p      Pointer
	levels []level
	// The document, to try suggestions in: bytes [start, end) of r.
	r          io.ReaderAt
	start, end int64
	chunk      int
	quiet      bool // trying a suggestion: no suggestions of its own
	// opens are the offsets of the objects on the path, by depth (-1 for
	// an array).
	opens []int64
}

func (w *walker) find() (Span, error) {
	s := w.s
	if err := w.locate(); err != nil {
		return Span{}, err
	}
	sp := Span{Start: s.Off()}
	k, err := s.SkipValue()
	if err != nil {
		return Span{}, err
	}
	sp.End, sp.Kind = s.Off(), k
	if err := w.finish(); err != nil {
		return Span{}, err
	}
	return sp, nil
}

// locate follows the pointer to the value it selects: the scanner stops
// at its first byte. The caller reads the value, then calls finish.
func (w *walker) locate() error {
	s, p := w.s, w.p
	if s.Size() <= s.Off() {
		return s.Syntax("the document is empty")
	}
	for d, tok := range p.toks {
		c, err := s.Peek()
		if err != nil {
			return err
		}
		at := func() string { return p.prefix(d) }
		switch c {
		case '{':
			start := s.Off()
			w.opens = append(w.opens, start)
			s.Next()
			found, err := w.findMember(tok)
			if err != nil {
				return err
			}
			if !found {
				return w.notFound(start, d)
			}
		case '[':
			idx, err := arrayIndex(p, d)
			if err != nil {
				return err
			}
			w.opens = append(w.opens, -1)
			s.Next()
			n, found, err := w.findElement(idx)
			if err != nil {
				return err
			}
			if !found {
				return retain.Errorf(retain.CodeBadPointer, "pointer %q selects nothing: the array %s has %s, so index %s is past its end", p.text, where(at()), plural(n, "element"), tok)
			}
		default:
			k := jsonscan.KindOf(c)
			if k == KindNone {
				return s.Syntax("unexpected %q where a value belongs", c)
			}
			return retain.Errorf(retain.CodeBadPointer, "pointer %q selects nothing: the value %s is %s %s, which has no member %q", p.text, where(at()), article(k), k, tok)
		}
	}
	_, err := s.Peek()
	return err
}

// notFound is the error for token d of the pointer, which names no member
// of the object at offset start.
func (w *walker) notFound(start int64, d int) error {
	p := w.p
	e := &PointerError{Pointer: p.text, Outline: p.prefix(d), HasOutline: true}
	e.Msg = fmt.Sprintf("pointer %q selects nothing: the object %s has no member %q", p.text, where(p.prefix(d)), p.toks[d])
	if w.quiet {
		return pointerErr(e)
	}
	var sugg []suggestion
	// A "/" left unescaped in a member name on the path, at this object
	// or one above it.
	for j := 0; j <= d; j++ {
		if w.opens[j] < 0 {
			continue
		}
		name, slash, _, err := w.suggestMembers(w.opens[j], j, false)
		if err != nil {
			return err
		}
		if slash.full != "" {
			e.Msg += fmt.Sprintf("; the object %s has a member %q: a \"/\" in a member name is written ~1 (and \"~\" ~0)", where(p.prefix(j)), name)
			sugg = append(sugg, slash)
			break
		}
	}
	_, _, near, err := w.suggestMembers(start, d, true)
	if err != nil {
		return err
	}
	e.Suggestions = w.resolving(append(sugg, near...))
	return pointerErr(e)
}

// suggestion is a pointer to suggest, and the pointer to the member it
// names, suggested instead when the whole does not resolve.
type suggestion struct{ full, member string }

// resolving keeps the suggestions that select something, each replaced,
// when it does not, by its member's pointer, if that does.
func (w *walker) resolving(sugg []suggestion) []string {
	var out []string
	seen := map[string]bool{}
	try := func(s string) bool {
		p, err := ParsePointer(s)
		if err != nil || seen[s] {
			return false
		}
		t := walker{s: jsonscan.NewAt(w.r, w.start, w.end, w.chunk), p: p, quiet: true}
		_, err = t.find()
		return err == nil
	}
	for _, sg := range sugg {
		s := sg.full
		if !try(s) {
			if s = sg.member; !try(s) {
				continue
			}
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
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
	c, err := s.Expect("\"}")
	if err != nil || c == '}' {
		return false, err
	}
	for {
		match, err := s.Key(tok)
		if err != nil {
			return false, err
		}
		if _, err := s.Expect(":"); err != nil {
			return false, err
		}
		if match {
			if _, err := s.Peek(); err != nil {
				return false, err
			}
			w.levels = append(w.levels, level{obj: true, match: s.Off()})
			return true, nil
		}
		if _, err := s.SkipValue(); err != nil {
			return false, err
		}
		if c, err := s.Expect(",}"); err != nil || c == '}' {
			return false, err
		}
		if _, err := s.Expect("\""); err != nil {
			return false, err
		}
	}
}

// findElement reads elements of the array whose '[' was consumed up to
// element idx; it stops at that element. Without one it returns how many
// elements the array has.
func (w *walker) findElement(idx int64) (int64, bool, error) {
	s := w.s
	c, err := s.Peek()
	if err != nil {
		return 0, false, err
	}
	if c == ']' {
		s.Next()
		return 0, false, nil
	}
	for i := int64(0); ; i++ {
		if i == idx {
			w.levels = append(w.levels, level{match: s.Off()})
			return 0, true, nil
		}
		if _, err := s.SkipValue(); err != nil {
			return 0, false, err
		}
		if c, err := s.Expect(",]"); err != nil || c == ']' {
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
			if err := s.SkipContainer('['); err != nil {
				return err
			}
			continue
		}
		tok := p.toks[d]
		for {
			c, err := s.Expect(",}")
			if err != nil {
				return err
			}
			if c == '}' {
				break
			}
			if _, err := s.Expect("\""); err != nil {
				return err
			}
			match, err := s.Key(tok)
			if err != nil {
				return err
			}
			if _, err := s.Expect(":"); err != nil {
				return err
			}
			if _, err := s.Peek(); err != nil {
				return err
			}
			if match {
				return retain.Errorf(retain.CodeAmbiguousJSON, "pointer %q is ambiguous: member %q occurs more than once in the object %s (values at bytes %d and %d); select one by bytes instead", p.text, tok, where(p.prefix(d)), w.levels[d].match, s.Off())
			}
			if _, err := s.SkipValue(); err != nil {
				return err
			}
		}
	}
	return nil
}
