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
	b     []byte
	ix    *retain.Index
	read  int64
	lines int64
}

func newMem(b []byte, stride int64) *memSource {
	m := &memSource{b: b, lines: int64(bytes.Count(b, []byte("\n")))}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		m.lines++ // SPEC §4: a last line without a newline counts
	}
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
func (m *memSource) Lines() int64         { return m.lines }
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

// refFit is the largest boundary o in [from, limit] with b[from:o] at most
// room bytes as shown, found by trying every offset.
func refFit(b []byte, from, limit, room int64, c capped) int64 {
	for o := limit; o > from; o-- {
		if !splitsAt(b, int(o)) && c.shown(b[from:o]) <= room {
			return o
		}
	}
	return from
}

// refFitBack is the smallest boundary o in [floor, to] with b[o:to] at
// most room bytes as shown.
func refFitBack(b []byte, floor, to, room int64, c capped) int64 {
	for o := floor; o < to; o++ {
		if !splitsAt(b, int(o)) && c.shown(b[o:to]) <= room {
			return o
		}
	}
	return to
}

// refCut cuts line l of b to room bytes as shown, as a page shows a line
// too long for the cap.
func refCut(b []byte, l refLine, n, room int64, c capped) Line {
	at := refFit(b, l.start, l.end, room, c)
	return Line{N: n, Start: l.start, End: l.end, Text: b[l.start:at], Cut: true,
		newline: l.end > l.start && b[l.end-1] == '\n'}
}

// refLines is the reference for Lines: the same rules, on the whole value
// split into lines up front.
func refLines(b []byte, first, last int64, caps Caps) (*LinesPage, error) {
	c := caps.effective()
	L := refSplit(b)
	n := int64(len(L))
	p := &LinesPage{First: first, Last: min(last, n), Total: n, Lines: []Line{},
		Clamped: last != ToEnd && last > n, escape: c.Escape}
	if first == 1 && last == ToEnd && n == 0 {
		return p, nil
	}
	if err := checkLines(first, last, n); err != nil {
		return nil, err
	}
	size := func(k int64) int64 { return gutterLen(k) + c.shown(L[k-1].text) }
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
	if !cut && shown[len(shown)-1] == p.Last && !(c.Lines > 0 && int64(len(shown)) == c.Lines && p.Last < n) && !p.Clamped {
		for _, k := range shown {
			l := L[k-1]
			p.Lines = append(p.Lines, newLine(k, l.start, l.text, true))
		}
		return p, nil
	}
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(int64(len(b))))))
		if need := reserve + gutterLen(first) + c.minProgress(); c.Bytes < need {
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
			p.Lines = append(p.Lines, refCut(b, l, k, c.Bytes-int64(len(p.trailer(worstNumber(int64(len(b))))))-gutterLen(k), c))
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

// refRegexp is the expression of o as the user wrote it, or nil for a
// plain substring.
func refRegexp(o QueryOptions) *regexp.Regexp {
	if !o.Regex && !o.IgnoreCase {
		return nil
	}
	expr := o.Query
	if !o.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if o.IgnoreCase {
		expr = "(?i)" + expr
	}
	return regexp.MustCompile(expr)
}

// refWindow is the reference for the window of a long matching line l.
func refWindow(b []byte, l refLine, o QueryOptions, room int64, c capped) *Window {
	le := l.end
	if le > l.start && b[le-1] == '\n' {
		le--
	}
	text := b[l.start:le]
	var mo, me int64
	if re := refRegexp(o); re != nil {
		loc := re.FindIndex(text)
		mo, me = l.start+int64(loc[0]), l.start+int64(loc[1])
	} else {
		i := bytes.Index(text, []byte(o.Query))
		mo, me = l.start+int64(i), l.start+int64(i+len(o.Query))
	}
	ws := mo
	if mw := c.shown(b[mo:me]); mw <= room {
		ws = refFitBack(b, l.start, mo, (room-mw)/2, c)
	}
	we := refFit(b, ws, le, room, c)
	if we == le && ws > l.start {
		ws = refFitBack(b, l.start, ws, room-c.shown(b[ws:we]), c)
	}
	return &Window{Start: ws, End: we, Match: mo}
}

// refMatches returns the numbers of the lines of b that match o, deciding
// each line on its own with the expression as the user wrote it.
func refMatches(b []byte, o QueryOptions) []int64 {
	re := refRegexp(o)
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
func refQuery(b []byte, o QueryOptions, caps Caps) (*QueryPage, error) {
	c := caps.effective()
	if _, err := compileQuery(o.Query, o.Regex, o.IgnoreCase); err != nil {
		return nil, err
	}
	L := refSplit(b)
	n := int64(len(L))
	p := &QueryPage{QueryOptions: o, Lines: []Line{}, escape: c.Escape}
	budget := int64(-1)
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(int64(len(b))))))
		if need := reserve + gutterLen(worstNumber(int64(len(b)))) + c.minProgress(); c.Bytes < need {
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
	lineSize := func(k int64) int64 { return gutterLen(k) + c.shown(L[k-1].text) }
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
					wl := Line{N: m, Start: l.start, End: l.end, Cut: true, Match: true,
						newline: b[l.end-1] == '\n'}
					wl.Window = refWindow(b, l, o, budget-gutterLen(m), c)
					wl.Text = b[wl.Window.Start:wl.Window.End]
					p.Lines = []Line{wl}
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
func refBytes(b []byte, start, end int64, caps Caps) (*BytesPage, error) {
	c := caps.effective()
	if err := checkBytes(newMem(b, 0), start, end); err != nil {
		return nil, err
	}
	p := &BytesPage{Start: start, End: end, Size: int64(len(b)), escape: c.Escape}
	stop := end
	if c.Bytes > 0 && c.shown(b[start:end]) > c.Bytes {
		reserve := int64(len(p.trailer(worstNumber(int64(len(b))))))
		if need := reserve + c.minProgress(); c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		stop = refFit(b, start, end, c.Bytes-reserve, c)
		p.Next = &Range{stop, end}
	}
	p.Data = append([]byte{}, b[start:stop]...) // never nil, as bytesPage's (b is nil when empty)
	return p, nil
}
