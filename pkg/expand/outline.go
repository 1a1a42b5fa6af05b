package expand

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

// OutlineOptions bound an outline as it is shown. Zero fields mean the
// defaults: 400 lines, 16 KiB, as peek's caps.
type OutlineOptions struct {
	// Lines and Bytes cap the output, header and continuation line
	// included. Each is at most MaxOutlineLines and a bound is always
	// applied: an outline is built in memory before it is printed.
	Lines, Bytes int64
	// Continue renders how to read on after position `after` (the exact
	// flag or reference); nil: peek's flag form.
	Continue func(after int64) string
}

// MaxOutlineLines bounds the members or elements one outline page lists.
const MaxOutlineLines = 10000

// tailShown is how many of a container's last children an outline shows
// after a gap.
const tailShown = 3

// OutlinePage is an outline as shown.
type OutlinePage struct {
	Pointer string `json:"pointer"`
	Line    int64  `json:"line,omitempty"` // the NDJSON line, or 0
	Kind    string `json:"kind"`
	Size    int64  `json:"size"`
	Count   int64  `json:"count"`
	// Shown are the position ranges listed, inclusive.
	Shown [][2]int64 `json:"shown"`
	// Next is the --after value that reads on, or -1 at the end.
	Next int64  `json:"next"`
	Text string `json:"-"`
}

// Render returns the page's text.
func (p *OutlinePage) Render() []byte { return []byte(p.Text) }

// Outline outlines the value r selects (a RefOutline) in v: its members or
// elements, one per line, as jsonscan.Line renders them, the first ones
// from r.From as far as the caps allow and the last three, with a last
// line naming what was shown and how to read on. One pass over the
// document from the start (a pointer's path, then the container); nested
// containers are skipped, not decoded. Errors are those of a pointer.
func Outline(v *retain.Value, r Ref, o OutlineOptions) (*OutlinePage, error) {
	if r.Kind != RefOutline {
		return nil, badRef("not an outline reference")
	}
	if err := r.checkDigest(&v.Desc); err != nil {
		return nil, err
	}
	src, start, end, err := document(v, r)
	if err != nil {
		return nil, err
	}
	lines := o.Lines
	if lines <= 0 || lines > MaxOutlineLines {
		lines = min(MaxOutlineLines, max(lines, 0))
		if lines == 0 {
			lines = 400
		}
	}
	bytesCap := o.Bytes
	if bytesCap <= 0 {
		bytesCap = 16 << 10
	}
	maxName := min(int64(4096), max(bytesCap/4, 16))
	ol, err := findOutline(src, start, end, r.Pointer, jsonscan.OutlineOptions{
		After: r.From - 1, Head: int(max(lines-3, 1)), Tail: tailShown, MaxName: maxName,
	}, chunkSize)
	if err != nil {
		return nil, err
	}
	cont := o.Continue
	if cont == nil {
		cont = func(after int64) string {
			c := "--outline " + retain.ShellQuote(r.Pointer.String()) + " --after " + strconv.FormatInt(after, 10)
			if r.Line > 0 {
				c = "--lines " + strconv.FormatInt(r.Line, 10) + " " + c
			}
			return c
		}
	}
	return renderOutline(r, ol, lines, bytesCap, cont), nil
}

// document returns where the JSON document a pointer or outline reference
// looks into lies in v: the whole value, or one line's document of an
// NDJSON value.
func document(v *retain.Value, r Ref) (io.ReaderAt, int64, int64, error) {
	if r.Line == 0 {
		if !v.Desc.JSON {
			hint := "read it with bytes or lines instead"
			if v.Desc.NDJSON {
				hint = "it is NDJSON (one document per line): add a line, as in --lines 1 with the pointer, or \"lines\": [1, 1]"
			}
			return nil, 0, 0, retain.Errorf(retain.CodeNotJSON, "value %q is not one valid JSON document, so a pointer selects nothing in it; %s", v.Desc.ID, hint)
		}
		return v, 0, v.Size(), nil
	}
	if !v.Desc.NDJSON {
		return nil, 0, 0, retain.Errorf(retain.CodeNotJSON, "value %q is not NDJSON (one JSON document on each non-empty line), so a pointer cannot select in one line of it; read the line with lines alone, or use the pointer without lines if the value is one document", v.Desc.ID)
	}
	start, end, err := lineDoc(v, r.Line)
	if err != nil {
		return nil, 0, 0, err
	}
	if start == end {
		return nil, 0, 0, retain.Errorf(retain.CodeNotJSON, "line %d of value %q is empty: it holds no JSON document", r.Line, v.Desc.ID)
	}
	return v, start, end, nil
}

// lineDoc returns the span of line n of v without its line ending.
func lineDoc(v *retain.Value, n int64) (int64, int64, error) {
	start, end, _, err := peek.LineSpan(v, n, n)
	if err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

// findOutline outlines the value at p of the document in bytes
// [start, end) of r.
func findOutline(r io.ReaderAt, start, end int64, p Pointer, o jsonscan.OutlineOptions, chunk int) (*jsonscan.Outline, error) {
	s := jsonscan.NewAt(r, start, end, chunk)
	w := walker{s: s, p: p, r: r, start: start, end: end, chunk: chunk}
	if err := w.locate(); err != nil {
		return nil, jsonErr(err)
	}
	ol, err := s.Outline(o)
	if err != nil {
		return nil, jsonErr(err)
	}
	if err := w.finish(); err != nil {
		return nil, jsonErr(err)
	}
	return ol, nil
}

func unitOf(k Kind) string {
	if k == KindObject {
		return "member"
	}
	return "element"
}

// renderOutline lays out a page within the caps.
func renderOutline(r Ref, ol *jsonscan.Outline, lines, bytesCap int64, cont func(int64) string) *OutlinePage {
	ptr := r.Pointer.String()
	pg := &OutlinePage{Pointer: ptr, Line: r.Line, Kind: ol.Kind.String(), Size: ol.End - ol.Start, Count: ol.Count, Next: -1}
	var b strings.Builder
	b.WriteString("[outline of ")
	if r.Line > 0 {
		fmt.Fprintf(&b, "line %d, ", r.Line)
	}
	if ptr == "" {
		b.WriteString("the whole document")
	} else {
		b.WriteString(strconv.Quote(ptr))
	}
	fmt.Fprintf(&b, ": %s, ", ol.Kind)
	obj := ol.Kind == KindObject
	if ol.Kind != KindObject && ol.Kind != KindArray {
		fmt.Fprintf(&b, "%s, %s", plural(pg.Size, "byte"), ol.Preview)
		if ol.PreviewCut {
			b.WriteString("…")
		}
		b.WriteString("; it has no members]\n")
		pg.Text = b.String()
		return pg
	}
	unit := unitOf(ol.Kind)
	fmt.Fprintf(&b, "%s, %s", plural(ol.Count, unit), plural(pg.Size, "byte"))
	b.WriteString("]\n")
	header := b.String()

	head := make([]string, len(ol.Head))
	for i := range ol.Head {
		head[i] = jsonscan.Line(ptr, obj, &ol.Head[i]) + "\n"
	}
	tail := make([]string, len(ol.Tail))
	for i := range ol.Tail {
		tail[i] = jsonscan.Line(ptr, obj, &ol.Tail[i]) + "\n"
	}
	from := r.From
	var tailFrom int64
	if len(ol.Tail) > 0 {
		tailFrom = ol.Tail[0].Pos
	}
	headLen := make([]int64, len(head)+1) // headLen[k]: bytes of head[:k]
	for i, l := range head {
		headLen[i+1] = headLen[i] + int64(len(l))
	}
	var tailLen int64
	for _, l := range tail {
		tailLen += int64(len(l))
	}
	// Try the most head lines first; fewer until the page fits.
	for k := len(head); k >= 0; k-- {
		end := from + int64(k) // the first position the head does not show
		var shown [][2]int64
		if k > 0 {
			shown = append(shown, [2]int64{from, end - 1})
		}
		gap := int64(0)
		if len(ol.Tail) > 0 {
			gap = tailFrom - end
			last := ol.Tail[len(ol.Tail)-1].Pos
			if gap == 0 && k > 0 {
				shown[0][1] = last
			} else {
				shown = append(shown, [2]int64{tailFrom, last})
			}
		} else {
			gap = ol.Count - end // children cut off at the end
		}
		next := int64(-1)
		if gap > 0 {
			next = end - 1
		}
		nlines := int64(1 + k + len(tail))
		var gapLine string
		if gap > 0 && len(ol.Tail) > 0 {
			gapLine = fmt.Sprintf("[… %s not shown …]\n", plural(gap, unit))
			nlines++
		}
		var trailer strings.Builder
		if next >= 0 || from > 0 {
			trailer.WriteString("[" + unit + "s ")
			for i, s := range shown {
				if i > 0 {
					trailer.WriteString(" and ")
				}
				if s[0] == s[1] {
					fmt.Fprintf(&trailer, "%d", s[0])
				} else {
					fmt.Fprintf(&trailer, "%d-%d", s[0], s[1])
				}
			}
			if len(shown) == 0 {
				trailer.WriteString("none")
			}
			fmt.Fprintf(&trailer, " of %d", ol.Count)
			if next >= 0 {
				trailer.WriteString("; next: " + cont(next))
			}
			trailer.WriteString("]\n")
			nlines++
		}
		size := int64(len(header)) + headLen[k] + int64(len(gapLine)) + tailLen + int64(trailer.Len())
		if k == 0 || size <= bytesCap && nlines <= lines {
			var page strings.Builder
			page.Grow(int(size))
			page.WriteString(header)
			for _, l := range head[:k] {
				page.WriteString(l)
			}
			page.WriteString(gapLine)
			for _, l := range tail {
				page.WriteString(l)
			}
			page.WriteString(trailer.String())
			pg.Shown, pg.Next, pg.Text = shown, next, page.String()
			if pg.Shown == nil {
				pg.Shown = [][2]int64{}
			}
			return pg
		}
	}
	panic("unreachable")
}

// outline answers an outline lookup: a page that fits the lookup's bound
// (the next one is named as a reference).
func (rs *Resolver) outline(r Ref, limit int64) ([]byte, error) {
	v, err := rs.Store.OpenValue(rs.Run, valueID(r.ID))
	if err != nil {
		return nil, err
	}
	defer v.Close()
	o := OutlineOptions{Lines: 400, Bytes: limit, Continue: func(after int64) string {
		n := r
		n.From = after + 1
		return n.String()
	}}
	if limit <= 0 {
		o.Bytes = 1 << 20
	}
	pg, err := Outline(v, r, o)
	if err != nil {
		return nil, err
	}
	return []byte(pg.Text), nil
}
