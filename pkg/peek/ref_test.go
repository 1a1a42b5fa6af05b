package peek

import (
	"bytes"
	"errors"
	"io"
	"regexp"

	"github.com/retval/retval/pkg/retain"
)

// memSource is a value held in memory, with an optional line index of any
// stride, counting the bytes read through it.
type memSource struct {
	b    []byte
	ix   *retain.Index
	read int64
}

func newMem(b []byte, stride int64) *memSource {
	m := &memSource{b: b}
	if stride > 0 {
		m.ix = buildIndex(b, stride)
	}
	return m
}

func (m *memSource) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(m.b)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	m.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memSource) Size() int64          { return int64(len(m.b)) }
func (m *memSource) Lines() int64         { return int64(len(refSplit(m.b))) }
func (m *memSource) Index() *retain.Index { return m.ix }

// buildIndex builds the sparse index retain would write, with any stride.
func buildIndex(b []byte, stride int64) *retain.Index {
	ix := &retain.Index{Size: int64(len(b)), Stride: stride, Starts: []int64{0}}
	nl := int64(0)
	for i, c := range b {
		if c == '\n' {
			nl++
			if nl%stride == 0 && i+1 < len(b) {
				ix.Starts = append(ix.Starts, int64(i+1))
			}
		}
	}
	return ix
}

// countingSource counts the bytes read through another source.
type countingSource struct {
	source
	read int64
}

func (c *countingSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.source.ReadAt(p, off)
	c.read += int64(n)
	return n, err
}

// refLine is a line found the obvious way.
type refLine struct {
	start, end int64 // end includes the newline
	text       []byte
}

func refSplit(b []byte) []refLine {
	var out []refLine
	for s := 0; s < len(b); {
		e := bytes.IndexByte(b[s:], '\n')
		if e < 0 {
			e = len(b)
		} else {
			e += s + 1
		}
		out = append(out, refLine{int64(s), int64(e), b[s:e]})
		s = e
	}
	return out
}

// refBoundary is the largest offset ≤ o and > floor not splitting a UTF-8
// sequence of b, decided with the whole value in view.
func refBoundary(b []byte, o, floor int64) int64 {
	for ; o > floor; o-- {
		if !splitsAt(b, int(o)) {
			return o
		}
	}
	return floor
}

// refCut cuts line l of b to room bytes, as a page shows a line too long
// for the cap.
func refCut(b []byte, l refLine, n, room int64) Line {
	at := refBoundary(b, l.start+min(room, l.end-l.start), l.start)
	return Line{N: n, Start: l.start, End: l.end, Text: b[l.start:at], Cut: true,
		newline: l.end > l.start && b[l.end-1] == '\n'}
}

// refLines is the reference for Lines: the same rules, on the whole value
// split into lines up front.
func refLines(b []byte, first, last int64, c Caps) (*LinesPage, error) {
	L := refSplit(b)
	n := int64(len(L))
	p := &LinesPage{First: first, Last: min(last, n), Total: n, Lines: []Line{}}
	if first == 1 && last == ToEnd && n == 0 {
		return p, nil
	}
	if err := checkLines(first, last, n); err != nil {
		return nil, err
	}
	size := func(k int64) int64 { return gutterLen(k) + int64(len(L[k-1].text)) }
	var shown []int64
	used := int64(0)
	cut := false
	for k := first; k <= p.Last; k++ {
		if c.Lines > 0 && int64(len(shown)) == c.Lines {
			break
		}
		if c.Bytes > 0 && used+size(k) > c.Bytes {
			if len(shown) == 0 {
				shown, cut = append(shown, k), true
			}
			break
		}
		shown = append(shown, k)
		used += size(k)
	}
	if !cut && shown[len(shown)-1] == p.Last && !(c.Lines > 0 && int64(len(shown)) == c.Lines && p.Last < n) {
		for _, k := range shown {
			l := L[k-1]
			p.Lines = append(p.Lines, newLine(k, l.start, l.text, true))
		}
		return p, nil
	}
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(int64(len(b))))))
		if need := reserve + gutterLen(first) + minProgress; c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		budget := c.Bytes - reserve
		for len(shown) > 1 {
			tot := int64(0)
			for _, k := range shown {
				tot += size(k)
			}
			if tot <= budget {
				break
			}
			shown = shown[:len(shown)-1]
		}
		if len(shown) == 1 && size(shown[0]) > budget {
			cut = true
		}
	}
	for _, k := range shown {
		l := L[k-1]
		if cut && len(shown) == 1 {
			p.Lines = append(p.Lines, refCut(b, l, k, c.Bytes-int64(len(p.trailer(worstNumber(int64(len(b))))))-gutterLen(k)))
			continue
		}
		p.Lines = append(p.Lines, newLine(k, l.start, l.text, true))
	}
	b2 := shown[len(shown)-1]
	if b2 < p.Last || c.Lines > 0 && int64(len(shown)) == c.Lines && b2 < n {
		last := n
		if c.Lines > 0 {
			last = min(n, b2+c.Lines)
		}
		p.Next = &Range{b2 + 1, last}
	}
	return p, nil
}

// refMatches returns the numbers of the lines of b that match o, deciding
// each line on its own with the expression as the user wrote it.
func refMatches(b []byte, o QueryOptions) []int64 {
	var re *regexp.Regexp
	if o.Regex || o.IgnoreCase {
		expr := o.Query
		if !o.Regex {
			expr = regexp.QuoteMeta(expr)
		}
		if o.IgnoreCase {
			expr = "(?i)" + expr
		}
		re = regexp.MustCompile(expr)
	}
	var out []int64
	for i, l := range refSplit(b) {
		text := bytes.TrimSuffix(l.text, []byte("\n"))
		if re != nil && re.Match(text) || re == nil && bytes.Contains(text, []byte(o.Query)) {
			out = append(out, int64(i+1))
		}
	}
	return out
}

// refQuery is the reference for Query.
func refQuery(b []byte, o QueryOptions, c Caps) (*QueryPage, error) {
	if _, err := compileQuery(o.Query, o.Regex, o.IgnoreCase); err != nil {
		return nil, err
	}
	L := refSplit(b)
	n := int64(len(L))
	p := &QueryPage{QueryOptions: o, Lines: []Line{}}
	budget := int64(-1)
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(int64(len(b))))))
		if need := reserve + gutterLen(worstNumber(int64(len(b)))) + minProgress; c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		budget = c.Bytes - reserve
	}
	var after []int64
	for _, m := range refMatches(b, o) {
		p.Total++
		if m <= o.AfterLine {
			p.Before++
		} else {
			after = append(after, m)
		}
	}
	shown := map[int64]bool{} // line → is a match
	var order []int64
	used, last := int64(0), int64(0)
	lineSize := func(k int64) int64 { return gutterLen(k) + int64(len(L[k-1].text)) }
	for _, m := range after {
		if m <= last {
			shown[m] = true
			p.Shown++
		}
		from, to := max(1, m-o.Context, last+1), min(n, m+o.Context)
		if from > to {
			continue
		}
		cost := int64(0)
		if o.Context > 0 && last > 0 && from > last+1 {
			cost = 3
		}
		for k := from; k <= to; k++ {
			cost += lineSize(k)
		}
		if c.Lines > 0 && int64(len(order))+to-from+1 > c.Lines || budget >= 0 && used+cost > budget {
			if p.Shown == 0 {
				l := L[m-1]
				if budget >= 0 && lineSize(m) > budget {
					cl := refCut(b, l, m, budget-gutterLen(m))
					cl.Match = true
					p.Lines = []Line{cl}
				} else {
					nl := newLine(m, l.start, l.text, true)
					nl.Match = true
					p.Lines = []Line{nl}
				}
				p.Shown = 1
				order = nil
			}
			break
		}
		for k := from; k <= to; k++ {
			shown[k] = k == m
			order = append(order, k)
		}
		used += cost
		if m > last {
			p.Shown++
		}
		last = to
	}
	for _, k := range order {
		l := newLine(k, L[k-1].start, L[k-1].text, true)
		l.Match = shown[k]
		p.Lines = append(p.Lines, l)
	}
	if p.Shown > 0 && p.Before+p.Shown < p.Total {
		for i := len(p.Lines) - 1; i >= 0; i-- {
			if p.Lines[i].Match {
				p.Next = p.Lines[i].N
				break
			}
		}
	}
	return p, nil
}

// refBytes is the reference for Bytes.
func refBytes(b []byte, start, end int64, c Caps) (*BytesPage, error) {
	if err := checkBytes(newMem(b, 0), start, end); err != nil {
		return nil, err
	}
	p := &BytesPage{Start: start, End: end, Size: int64(len(b))}
	stop := end
	if c.Bytes > 0 && end-start > c.Bytes {
		reserve := int64(len(p.trailer(worstNumber(int64(len(b))))))
		if need := reserve + minProgress; c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		stop = refBoundary(b, start+c.Bytes-reserve, start)
		p.Next = &Range{stop, end}
	}
	p.Data = b[start:stop]
	return p, nil
}
