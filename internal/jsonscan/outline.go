package jsonscan

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/internal/xxh3"
)

// Child is one member of an object or element of an array, as an outline
// lists it.
type Child struct {
	Pos int64 // position in the container, from 0 (an element's index)
	// Name is a member's decoded name; NameCut says it was cut because
	// its encoded form is longer than OutlineOptions.MaxName.
	Name    string
	NameCut bool
	// KeyStart is the offset of a member name's opening quote; for an
	// element, Start.
	KeyStart int64
	// Start and End delimit the child's value, from its first byte to its
	// last.
	Start, End int64
	Kind       Kind
	Count      int64 // members or elements of a container
	// Preview is a scalar's lexeme, at most OutlineOptions.Preview bytes
	// of it, cut at a UTF-8 boundary (PreviewCut says it was cut).
	Preview    string
	PreviewCut bool
	// Dup: the member's name occurs more than once in its object, so a
	// pointer to it is ambiguous.
	Dup bool

	name []byte // the ring's copy of the name
	hash uint64 // of the name, for the filter
	// maybeEarlier: a member before this one may have its name (the
	// filter said so); checked exactly at the end.
	maybeEarlier bool
}

// Size is the length of the child's value in bytes.
func (c *Child) Size() int64 { return c.End - c.Start }

// OutlineOptions say which children an outline keeps.
type OutlineOptions struct {
	// After: keep only children at positions after it; -1 keeps from the
	// first.
	After int64
	Head  int // children kept from the first one kept
	Tail  int // last children kept, after the head ones
	// Preview is how much of a scalar's lexeme is kept (0: 48 bytes).
	Preview int
	// MaxName is how much of a member name is decoded (0: 4096 bytes).
	MaxName int64
}

// Outline is the shape of one value: its kind and span, and for a
// container its number of children and the ones kept.
type Outline struct {
	Kind       Kind
	Start, End int64
	Count      int64
	Head, Tail []Child
	// Preview, for a scalar, as in Child.
	Preview    string
	PreviewCut bool
}

// bloomWords is the size of the filter of member names an outline keeps
// to tell, exactly in the end, whether a member it shows has a name that
// occurs elsewhere: 1 MiB, whatever the object's size.
const bloomWords = 1 << 17

// bloom is a blocked Bloom filter: a name sets 4 bits of one word, so a
// look-up touches one cache line.
type bloom []uint64

// mask returns the word of h and the 4 bits h sets in it.
func (b bloom) mask(h uint64) (int, uint64) {
	m := uint64(1)<<(h&63) | uint64(1)<<(h>>6&63) | uint64(1)<<(h>>12&63) | uint64(1)<<(h>>18&63)
	return int(h >> 24 % bloomWords), m
}

func (b bloom) has(h uint64) bool {
	w, m := b.mask(h)
	return b[w]&m == m
}

func (b bloom) add(h uint64) {
	w, m := b.mask(h)
	b[w] |= m
}

// Outline reads the value that starts at the next non-space byte, in one
// pass, and returns its outline. Nested containers are skipped without
// being decoded, counting their first level only.
func (s *Scanner) Outline(o OutlineOptions) (*Outline, error) {
	if o.Preview <= 0 {
		o.Preview = 48
	}
	if o.MaxName <= 0 {
		o.MaxName = 4096
	}
	c, err := s.Peek()
	if err != nil {
		return nil, err
	}
	out := &Outline{Start: s.Off(), Kind: KindOf(c)}
	switch out.Kind {
	case KindObject, KindArray:
	case KindNone:
		return nil, s.Syntax("unexpected %q where a value belongs", c)
	default:
		if _, err := s.SkipValue(); err != nil {
			return nil, err
		}
		out.End = s.Off()
		out.Preview, out.PreviewCut, err = s.preview(out.Start, out.End, o.Preview)
		return out, err
	}
	s.Next()
	obj := out.Kind == KindObject
	closer, after := byte(']'), ",]"
	if obj {
		closer, after = '}', ",}"
	}
	var seen bloom
	var headIdx map[string]int // kept head members' names: their index
	if obj {
		seen = make(bloom, bloomWords)
		headIdx = map[string]int{}
	}
	ring := make([]Child, o.Tail)
	rn := 0 // children in the ring (at most Tail), oldest at ring[rstart]
	rstart := 0
	if c, err := s.Peek(); err != nil {
		return nil, err
	} else if c == closer {
		s.Next()
		out.End = s.Off()
		return out, nil
	}
	for i := int64(0); ; i++ {
		var ch Child
		ch.Pos = i
		if obj {
			if _, err := s.Expect(`"`); err != nil {
				return nil, err
			}
			name, quote, cut, err := s.Name(o.MaxName)
			if err != nil {
				return nil, err
			}
			ch.KeyStart, ch.NameCut = quote, cut
			h := xxh3.Hash(name)
			// Exact: a kept member with this name. The head's names are
			// all in the filter, so only a name the filter may hold is
			// looked up.
			if len(headIdx) > 0 && seen.has(h) {
				if j, ok := headIdx[string(name)]; ok {
					out.Head[j].Dup, ch.Dup = true, true
				}
			}
			for j := 0; j < rn; j++ {
				if r := &ring[(rstart+j)%o.Tail]; r.hash == h && string(r.name) == string(name) {
					r.Dup, ch.Dup = true, true
				}
			}
			ch.hash = h
			// A member the ring keeps enters the filter when it leaves the
			// ring (its "earlier" is asked at the end); any other at once.
			inRing := i > o.After && len(out.Head) >= o.Head && o.Tail > 0
			if i > o.After && len(out.Head) < o.Head && !ch.Dup {
				ch.maybeEarlier = seen.has(h)
			}
			if !inRing {
				seen.add(h)
			}
			if i > o.After {
				if len(out.Head) < o.Head {
					ch.Name = string(name)
					if _, ok := headIdx[ch.Name]; !ok {
						headIdx[ch.Name] = len(out.Head)
					}
				} else if o.Tail > 0 {
					slot := &ring[(rstart+rn)%o.Tail]
					if rn == o.Tail {
						slot = &ring[rstart]
					}
					ch.name = append(slot.name[:0], name...)
				}
			}
			if _, err := s.Expect(":"); err != nil {
				return nil, err
			}
			if _, err := s.Peek(); err != nil {
				return nil, err
			}
		} else if _, err := s.Peek(); err != nil {
			return nil, err
		}
		ch.Start = s.Off()
		if !obj {
			ch.KeyStart = ch.Start
		}
		k, n, err := s.skipValue(true)
		if err != nil {
			return nil, err
		}
		ch.End, ch.Kind, ch.Count = s.Off(), k, n
		if i > o.After && (len(out.Head) < o.Head || o.Tail > 0) && k != KindObject && k != KindArray {
			if ch.Preview, ch.PreviewCut, err = s.preview(ch.Start, ch.End, o.Preview); err != nil {
				return nil, err
			}
		}
		switch {
		case i <= o.After:
		case len(out.Head) < o.Head:
			out.Head = append(out.Head, ch)
		case o.Tail > 0:
			if rn < o.Tail {
				ring[(rstart+rn)%o.Tail] = ch
				rn++
			} else {
				if obj {
					seen.add(ring[rstart].hash) // leaves the ring
				}
				ring[rstart] = ch
				rstart = (rstart + 1) % o.Tail
			}
		}
		c, err := s.Expect(after)
		if err != nil {
			return nil, err
		}
		if c == closer {
			out.Count = i + 1
			break
		}
	}
	out.End = s.Off()
	for j := 0; j < rn; j++ {
		ch := ring[(rstart+j)%o.Tail]
		if obj {
			ch.Name = string(ch.name)
			// The filter holds every member but the ring's, which were
			// compared with each other exactly.
			ch.maybeEarlier = !ch.Dup && seen.has(ch.hash)
		}
		ch.name = nil
		out.Tail = append(out.Tail, ch)
	}
	if obj {
		if err := s.checkEarlier(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkEarlier settles the kept members the filter said may have a name
// that occurs before them: it reads the object's names again, up to the
// last such member, and compares them exactly. Rare for an object whose
// names are distinct (the filter errs for about one member in sixty of an
// object of a million).
func (s *Scanner) checkEarlier(out *Outline) error {
	want := map[string][]*Child{}
	last := int64(-1)
	for _, l := range [][]Child{out.Head, out.Tail} {
		for i := range l {
			if c := &l[i]; c.maybeEarlier && !c.Dup && !c.NameCut {
				want[c.Name] = append(want[c.Name], c)
				last = max(last, c.Pos)
			}
		}
	}
	if last < 0 {
		return nil
	}
	t := s.Fork(out.Start)
	if _, err := t.Expect("{"); err != nil {
		return err
	}
	for p := int64(0); p < last; p++ {
		if _, err := t.Expect(`"`); err != nil {
			return err
		}
		name, _, _, err := t.Name(1 << 30)
		if err != nil {
			return err
		}
		for _, c := range want[string(name)] {
			if c.Pos > p {
				c.Dup = true
			}
		}
		if _, err := t.Expect(":"); err != nil {
			return err
		}
		if _, err := t.SkipValue(); err != nil {
			return err
		}
		if _, err := t.Expect(",}"); err != nil {
			return err
		}
	}
	return nil
}

// preview returns at most max bytes of [start, end), cut at a UTF-8
// boundary.
func (s *Scanner) preview(start, end int64, max int) (string, bool, error) {
	cut := end-start > int64(max)
	if cut {
		end = start + int64(max)
	}
	b, err := s.BytesAt(start, end)
	if err != nil {
		return "", false, err
	}
	if cut {
		n := len(b)
		for k := n - 1; k >= 0 && k >= n-utf8.UTFMax; k-- {
			if b[k]&0xC0 != 0x80 {
				if !utf8.FullRune(b[k:]) {
					n = k
				}
				break
			}
		}
		b = b[:n]
	}
	return string(b), cut, nil
}

// EscapeToken escapes a reference token for a pointer (RFC 6901: "~" is
// "~0", "/" is "~1").
func EscapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// ChildPointer is the pointer to c in the container at parent (an
// escaped pointer).
func ChildPointer(parent string, obj bool, c *Child) string {
	if obj {
		return parent + "/" + EscapeToken(c.Name)
	}
	return parent + "/" + strconv.FormatInt(c.Pos, 10)
}

// ShowPointer renders a pointer for an outline line: as it is when it is
// plain printable text without spaces or quotes, else as a JSON string
// (quoted and escaped), which is what a reference's "pointer" holds.
func ShowPointer(p string) string {
	plain := utf8.ValidString(p)
	for _, r := range p {
		if r <= ' ' || r == '"' || r == 0xfeff || safetext.Unsafe(r) {
			plain = false
			break
		}
	}
	if plain && p != "" {
		return p
	}
	return quoteJSON(p)
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0xfeff || safetext.Unsafe(r):
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)) + h)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Line renders c, a child of the container at parent, as one outline
// line: its pointer, kind, and for a container its count, then its size in
// bytes and for a scalar its (possibly cut) lexeme:
//
//	/name  string  7 bytes  "bench"
//	/packages  object  3 members  412 bytes
//
// A member whose name occurs more than once ends in "  duplicate name".
func Line(parent string, obj bool, c *Child) string {
	var b strings.Builder
	b.WriteString(ShowPointer(ChildPointer(parent, obj, c)))
	if c.NameCut {
		b.WriteString("…")
	}
	b.WriteString("  ")
	b.WriteString(c.Kind.String())
	switch c.Kind {
	case KindObject:
		b.WriteString("  " + count(c.Count, "member"))
	case KindArray:
		b.WriteString("  " + count(c.Count, "element"))
	}
	b.WriteString("  " + count(c.Size(), "byte"))
	if c.Kind != KindObject && c.Kind != KindArray {
		b.WriteString("  ")
		b.WriteString(c.Preview)
		if c.PreviewCut {
			b.WriteString("…")
		}
	}
	if c.Dup {
		b.WriteString("  duplicate name")
	}
	return b.String()
}

func count(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// Count renders "1 member", "3 elements".
func Count(n int64, unit string) string { return count(n, unit) }
