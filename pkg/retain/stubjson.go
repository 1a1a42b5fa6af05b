package retain

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/retval/retval/internal/jsonscan"
)

// The JSON-aware stub (SPEC §3; the rule is written in docs/design.md):
// a value that is one valid JSON document whose root is a non-empty
// object or array, larger than the preview budget, whose head excerpt
// shows the start of fewer than stubShapeMembers of the root's members
// (and not its end), is previewed by the outline of its root instead of
// head and tail excerpts.

// stubShapeMembers is how many of the root's members a head excerpt must
// begin to show the document's shape.
const stubShapeMembers = 3

// stubFirstLevel bounds the root members an outline stub considers;
// stubSecondLevel the members of each shown container listed under it.
const (
	stubFirstLevel  = 64
	stubSecondLevel = 3
)

// stubOutline is the preview of a JSON value's stub: rendered lines,
// within the preview budget.
type stubOutline struct {
	lines []string
	// next is the pointer the read-more line names: the largest container
	// shown (the first of equals), or "" (the root) when none is.
	next string
}

// wholeLines is the part of buf[:n] up to its last newline: what the
// JSON rule judges a head by (a fragment of a long first line shows no
// shape either), nothing when the first line does not fit.
func wholeLines(buf []byte, n int) []byte {
	if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
		return buf[:i+1]
	}
	return nil
}

// jsonStubOutline returns the outline preview of the JSON document of
// size bytes held by r, whose first bytes are head, under a preview budget
// of budget bytes; nil when the head excerpt shows the document's shape
// (then the stub is the plain one).
func jsonStubOutline(r io.ReaderAt, size int64, head []byte, budget int64) (*stubOutline, error) {
	if budget <= 0 || size <= budget {
		return nil, nil
	}
	ex := wholeLines(head, int(min(int64(len(head)), budget/2)))
	if shapeShown(r, int64(len(ex))) {
		return nil, nil
	}
	s := jsonscan.New(r, size, 0)
	ol, err := s.Outline(jsonscan.OutlineOptions{After: -1, Head: stubFirstLevel})
	if err != nil {
		return nil, err
	}
	if (ol.Kind != jsonscan.KindObject && ol.Kind != jsonscan.KindArray) || ol.Count == 0 {
		return nil, nil
	}
	obj := ol.Kind == jsonscan.KindObject
	unit := "element"
	if obj {
		unit = "member"
	}
	header := fmt.Sprintf("[JSON %s, %s, %d bytes; its outline:]", ol.Kind, jsonscan.Count(ol.Count, unit), ol.End-ol.Start)
	used := int64(len(header) + 1)
	moreLine := func(n int64) string { return "[… " + moreCount(n, unit) + "]" }
	// The first level, as far as it fits with room for the line that
	// counts the rest.
	var first []string
	for i := range ol.Head {
		l := jsonscan.Line("", obj, &ol.Head[i])
		reserve := int64(0)
		if rest := ol.Count - int64(i) - 1; rest > 0 {
			reserve = int64(len(moreLine(rest)) + 1)
		}
		if used+int64(len(l))+1+reserve > budget {
			break
		}
		first = append(first, l)
		used += int64(len(l)) + 1
	}
	var more string
	if rest := ol.Count - int64(len(first)); rest > 0 {
		more = moreLine(rest)
		used += int64(len(more)) + 1
	}
	if used > budget {
		return nil, nil // not even the header and the count fit
	}
	// The second level where it fits: under each container shown, in
	// order, its first members, until one line does not fit.
	second := make([][]string, len(first))
fill:
	for i := range first {
		c := &ol.Head[i]
		if (c.Kind != jsonscan.KindObject && c.Kind != jsonscan.KindArray) || c.Count == 0 {
			continue
		}
		sub, err := jsonscan.NewAt(r, c.Start, size, 0).Outline(jsonscan.OutlineOptions{After: -1, Head: stubSecondLevel})
		if err != nil {
			return nil, err
		}
		parent := jsonscan.ChildPointer("", obj, c)
		subObj := sub.Kind == jsonscan.KindObject
		for j := range sub.Head {
			l := "  " + jsonscan.Line(parent, subObj, &sub.Head[j])
			if used+int64(len(l))+1 > budget {
				break fill
			}
			second[i] = append(second[i], l)
			used += int64(len(l)) + 1
		}
		if rest := sub.Count - int64(len(sub.Head)); rest > 0 {
			u := "element"
			if subObj {
				u = "member"
			}
			l := "  [… " + moreCount(rest, u) + "]"
			if used+int64(len(l))+1 > budget {
				break fill
			}
			second[i] = append(second[i], l)
			used += int64(len(l)) + 1
		}
	}
	out := &stubOutline{lines: []string{header}}
	var biggest int64
	for i := range first {
		if c := &ol.Head[i]; (c.Kind == jsonscan.KindObject || c.Kind == jsonscan.KindArray) && c.Size() > biggest {
			biggest, out.next = c.Size(), jsonscan.ChildPointer("", obj, c)
		}
	}
	for i, l := range first {
		out.lines = append(out.lines, l)
		out.lines = append(out.lines, second[i]...)
	}
	if more != "" {
		out.lines = append(out.lines, more)
	}
	return out, nil
}

// shapeShown reports whether the first n bytes of the document held by r
// show its shape: the start of at least stubShapeMembers of the root's
// members, or the root's end (a scalar root shows itself).
func shapeShown(r io.ReaderAt, n int64) bool {
	s := jsonscan.New(r, n, 0)
	c, err := s.Peek()
	if err != nil {
		return false
	}
	if c != '{' && c != '[' {
		return true
	}
	s.Next()
	closer := byte(']')
	if c == '{' {
		closer = '}'
	}
	for seen := 0; ; {
		c, err := s.Peek()
		if err != nil {
			return false // the excerpt ends here
		}
		switch c {
		case closer:
			return true
		case ',':
			s.Next()
			continue
		}
		if seen++; seen >= stubShapeMembers {
			return true
		}
		if closer == '}' {
			if _, err := s.Expect(`"`); err != nil {
				return false
			}
			if err := s.SkipStringBody(); err != nil {
				return false
			}
			if _, err := s.Expect(":"); err != nil {
				return false
			}
		}
		if _, err := s.SkipValue(); err != nil {
			return false
		}
	}
}

// moreCount renders "1 more member", "3 more elements".
func moreCount(n int64, unit string) string {
	if n == 1 {
		return "1 more " + unit
	}
	return strconv.FormatInt(n, 10) + " more " + unit + "s"
}
