package expand

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

// Selection is where a reference's bytes lie in its value: found, not yet
// read. Reading it (Text, WriteTo) returns verified bytes.
type Selection struct {
	Ref   Ref
	Value *retain.Value
	// Start and End delimit the selected bytes of the value. For a pointer
	// they are the value's lexeme, quotes included for a string.
	Start, End int64
	// Kind is the JSON type of a pointer selection, KindNone otherwise.
	Kind Kind
}

// Decoded reports whether reading the selection decodes a JSON string
// (as: string) rather than copying bytes.
func (s *Selection) Decoded() bool { return s.Ref.Kind == RefPointer && s.Ref.As == AsString }

// Size is the length of the selected bytes of the value (for a decoded
// string, of its JSON form).
func (s *Selection) Size() int64 { return s.End - s.Start }

// absolute is r with a line range to the end or of the last lines made
// the lines of v it names ("670-" of 1000 lines is 670-1000; "-50" is
// 951-1000). A "670-" of fewer lines stays open, so the error names it as
// given. Byte ranges are left to peek.ByteSpan.
func (r Ref) absolute(v *retain.Value) Ref {
	if r.Kind != RefLines {
		return r
	}
	n := v.Desc.Lines
	if r.Tail == 0 && r.End == peek.ToEnd && r.Start > n {
		return r
	}
	first, last := r.rangeArg().LinesOf(n)
	if last == peek.ToEnd {
		last = n
	}
	if r.Tail > 0 && n == 0 {
		last = peek.ToEnd
	}
	r.Start, r.End, r.Tail = first, last, 0
	return r
}

// Select finds the selection r makes in v. It checks the reference's
// digest, the byte range's bounds and UTF-8 boundaries, the line range, and
// for a pointer that v is one valid JSON document and that the pointer
// selects exactly one value; it reads only what finding the span needs.
func Select(v *retain.Value, r Ref) (*Selection, error) {
	if r.Kind == RefList {
		return nil, badRef("$list_results lists the run's values; it selects no bytes")
	}
	if err := r.checkDigest(&v.Desc); err != nil {
		return nil, err
	}
	s := &Selection{Ref: r, Value: v}
	if r.Kind == RefLines {
		// Named as typed ("line range 0-", "-5"), before it is made
		// absolute.
		if err := r.rangeArg().CheckLines(v.Desc.Lines); err != nil {
			return nil, err
		}
	}
	r = r.absolute(v)
	switch r.Kind {
	case RefWhole:
		s.End = v.Size()
	case RefBytes:
		start, end, err := peek.ByteSpan(v, r.rangeArg())
		if err != nil {
			return nil, err
		}
		s.Start, s.End = start, end
	case RefLines:
		// peek's rules and messages, except that resolve and expand never
		// clamp: a range that ends past the end fails too.
		if n := v.Desc.Lines; r.End > n && r.Start <= n && r.Start >= 1 && r.End >= r.Start {
			return nil, retain.Errorf(retain.CodeInvalidRange, "line range %d-%d ends past the end: the value has lines 1-%d; ask for lines %d-%d", r.Start, r.End, n, r.Start, n)
		}
		start, end, _, err := peek.LineSpan(v, r.Start, r.End)
		if err != nil {
			return nil, err
		}
		s.Start, s.End = start, end
	case RefOutline:
		return nil, badRef("an outline lists the members of a JSON value and selects no bytes; ask resolve or peek for it, or select one member with a pointer")
	case RefPointer:
		src, start, end, err := document(v, r)
		if err != nil {
			return nil, err
		}
		sp, err := findPointerIn(src, start, end, r.Pointer, chunkSize)
		if err != nil {
			return nil, err
		}
		if r.As == AsString && sp.Kind != KindString {
			return nil, retain.Errorf(retain.CodeNotString, "pointer %q selects %s %s, not a string; ask for it as lexeme", r.Pointer.String(), article(sp.Kind), sp.Kind)
		}
		s.Start, s.End, s.Kind = sp.Start, sp.End, sp.Kind
	}
	return s, nil
}

// WriteTo writes the selection to w, streaming: the selected bytes, or for
// a decoded string its text. It returns the number of bytes written. A
// decoded string that holds a lone surrogate escape fails not_utf8 (see
// NotUTF8Error); other bytes are written as the value holds them.
func (s *Selection) WriteTo(w io.Writer) (int64, error) { return s.writeTo(w, nil) }

// writeTo is WriteTo, with scan (if not nil) shown every byte read from
// the value as it is read.
func (s *Selection) writeTo(w io.Writer, scan io.Writer) (int64, error) {
	if !s.Decoded() {
		src := s.Value.Section(s.Start, s.End)
		if scan != nil {
			src = io.TeeReader(src, scan)
		}
		return io.Copy(w, src)
	}
	cw := &iox.CountingWriter{W: w}
	d := &jsonstr.Decoder{W: cw}
	src := s.Value.Section(s.Start+1, s.End-1)
	if scan != nil {
		src = io.TeeReader(src, scan)
	}
	if _, err := io.Copy(d, src); err != nil {
		return cw.N, s.decodeErr(d, err)
	}
	if err := d.Close(); err != nil {
		return cw.N, s.decodeErr(d, err)
	}
	return cw.N, nil
}

func (s *Selection) decodeErr(d *jsonstr.Decoder, err error) error {
	switch {
	case errors.Is(err, jsonstr.ErrSurrogate):
		at := s.Start + 1 + d.ErrAt()
		esc, rerr := s.Value.Bytes(at, at+6)
		if rerr != nil {
			return rerr
		}
		return notUTF8(&NotUTF8Error{Value: string(s.Value.Desc.ID), Offset: at, Escape: string(esc)})
	case errors.Is(err, jsonstr.ErrControl), errors.Is(err, jsonstr.ErrEscape), errors.Is(err, jsonstr.ErrQuote), errors.Is(err, jsonstr.ErrTruncEsc):
		return retain.Errorf(retain.CodeNotJSON, "not valid JSON in the string at byte %d: %v; read it as lexeme instead", s.Start, err)
	}
	return err
}

// scanner returns a utf8Scan of the bytes the selection reads from its
// value, in value offsets.
func (s *Selection) scanner() *utf8Scan {
	if s.Decoded() {
		return newUTF8Scan(string(s.Value.Desc.ID), s.Start+1)
	}
	return newUTF8Scan(string(s.Value.Desc.ID), s.Start)
}

// JSONText is Text for a selection that is to be carried in a JSON
// string: one that is not valid UTF-8 fails not_utf8, naming the first
// offending byte of the value, rather than come back with bytes that
// encoding/json would replace.
func (s *Selection) JSONText(limit int64) ([]byte, error) {
	if !s.Decoded() {
		b, err := s.Text(limit)
		if err != nil {
			return nil, err
		}
		if err := checkUTF8(string(s.Value.Desc.ID), s.Start, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	scan := s.scanner()
	b, err := s.text(limit, scan)
	if err != nil {
		return nil, err
	}
	if err := scan.err(); err != nil {
		return nil, err
	}
	return b, nil
}

// Text reads the selection into memory: the bytes as the value holds them
// (or a decoded string's text, with its bytes as the value holds them).
// Over limit bytes (0: no limit) it fails with too_large without reading
// more than the limit.
func (s *Selection) Text(limit int64) ([]byte, error) { return s.text(limit, nil) }

func (s *Selection) text(limit int64, scan io.Writer) ([]byte, error) {
	tooLarge := func(what string) error {
		if s.Kind == KindObject || s.Kind == KindArray {
			o := s.Ref
			o.Kind, o.As, o.SHA256, o.From = RefOutline, AsLexeme, "", 0
			flag := "--outline " + retain.ShellQuote(o.Pointer.String())
			if o.Line > 0 {
				flag = fmt.Sprintf("--lines %d %s", o.Line, flag)
			}
			return retain.Errorf(retain.CodeTooLarge, "the selection is %s, over the %d-byte bound of one lookup: %s %s; list its %ss with %s (or the reference %s) and select one with a deeper pointer", what, limit, article(s.Kind), s.Kind, unitOf(s.Kind), flag, o)
		}
		return retain.Errorf(retain.CodeTooLarge, "the selection is %s, over the %d-byte bound of one lookup; narrow it: fewer lines, a shorter byte range or a deeper pointer", what, limit)
	}
	if !s.Decoded() {
		if limit > 0 && s.Size() > limit {
			return nil, tooLarge(plural(s.Size(), "byte"))
		}
		b, err := s.Value.Bytes(s.Start, s.End)
		return b, err
	}
	// A string's text is at least a sixth of its escaped body.
	if body := s.Size() - 2; limit > 0 && body/6 > limit {
		return nil, tooLarge("a string of over " + plural(body/6, "byte"))
	}
	var buf bytes.Buffer
	var w io.Writer = &buf
	if limit > 0 {
		w = &limitWriter{w: &buf, n: limit}
	}
	if _, err := s.writeTo(w, scan); err != nil {
		if err == errOverLimit {
			return nil, tooLarge("a string of over " + plural(limit, "byte"))
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// Close closes the selection's value.
func (s *Selection) Close() error { return s.Value.Close() }

// Resolver opens references against one run of a store. Its answers are
// for JSON strings (a model's tool result, resolve's --batch and --json):
// a selection that is not valid UTF-8 fails not_utf8 (see NotUTF8Error).
type Resolver struct {
	Store *retain.Store
	Run   string
	// Raw makes answers the selected bytes as they are, for a byte stream
	// (resolve of one reference to stdout): a selection that is not valid
	// UTF-8 is answered as the value holds it. A decoded string with a
	// lone surrogate escape still fails not_utf8: no bytes stand for it.
	Raw bool
	// Via names the reader in the run's read log ("" is "resolve").
	Via string
	// StepInMemory, when set, is told when a step's ledger cannot be
	// kept (the store cannot be written: a read-only mount or snapshot):
	// the step is then counted for this call alone, from what its ledger
	// recorded (retain.StepLedger.InMemory). The CLI says so on stderr.
	StepInMemory func(step string, why error)
}

// Open opens the value r names and selects in it. The caller closes the
// Selection. Errors: unknown_reference or collected for the value, and
// those of Select.
func (rs *Resolver) Open(r Ref) (*Selection, error) {
	if r.Kind == RefList {
		return nil, badRef("$list_results lists the run's values; it selects no bytes")
	}
	v, err := rs.Store.OpenValue(rs.Run, valueID(r.ID))
	if err != nil {
		return nil, err
	}
	s, err := Select(v, r)
	if err != nil {
		v.Close()
		return nil, err
	}
	return s, nil
}

// valueID accepts an id as a stub shows it: "#c1" names value c1. Value ids
// never contain "#", so the prefix cannot be part of one.
func valueID(id string) string {
	if rest, ok := strings.CutPrefix(id, "#"); ok && retain.IsClean(rest) {
		return rest
	}
	return id
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

type overLimit struct{}

func (overLimit) Error() string { return "over the limit" }

var errOverLimit error = overLimit{}

// limitWriter fails with errOverLimit once more than n bytes are written.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errOverLimit
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
