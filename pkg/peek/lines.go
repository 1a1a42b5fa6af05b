package peek

import (
	"bytes"
	"encoding/json"

	"github.com/retval/retval/pkg/retain"
)

// Line is one line of a value as a page shows it.
type Line struct {
	N     int64 // line number, from 1
	Start int64 // offset of its first byte
	// End is the offset just past its last byte, its newline included.
	End int64
	// Text is the bytes shown: the whole line as stored, newline included
	// (a last line without one stays without), unless Cut.
	Text []byte
	// Cut says the line was longer than the cap: Text is a prefix ending on
	// a UTF-8 boundary, and Rest is the byte range of the remainder.
	Cut bool
	// Match says a query matched this line (the others are its context).
	Match   bool
	newline bool // the line ends in a newline (at End-1)
}

// Rest returns the half-open byte range of the part of a cut line that was
// not shown, its newline excluded: the --bytes range that reads it.
func (l Line) Rest() (start, end int64) {
	end = l.End
	if l.newline {
		end--
	}
	return min(l.Start+int64(len(l.Text)), end), end
}

// MarshalJSON renders a line for --json output: the text as a string.
func (l Line) MarshalJSON() ([]byte, error) {
	type line struct {
		N     int64  `json:"n"`
		Start int64  `json:"start"`
		End   int64  `json:"end"`
		Text  string `json:"text"`
		Cut   bool   `json:"cut,omitempty"`
		Match bool   `json:"match,omitempty"`
	}
	return json.Marshal(line{l.N, l.Start, l.End, string(l.Text), l.Cut, l.Match})
}

// Range is an inclusive line range or a half-open byte range, as the flag
// that continues a page names it.
type Range struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// LinesPage is the result of Lines.
type LinesPage struct {
	First int64  `json:"first"` // the first line asked for
	Last  int64  `json:"last"`  // the last line asked for, cut to the value's lines
	Total int64  `json:"total"` // lines in the value
	Lines []Line `json:"lines"`
	// Next is the line range that continues, when the caps cut the page
	// before Last.
	Next *Range `json:"next,omitempty"`
}

// Lines reads lines first..last (1-based, inclusive) of v within caps c.
// A last past the end is cut to the value's last line; ToEnd asks for as
// many lines as the caps allow. A first line past the end is invalid_range,
// except that Lines(v, 1, ToEnd, c) of an empty value is an empty page. It
// seeks through the value's line index, so a page at the end of a large
// value reads about as much as one at its start.
func Lines(v *retain.Value, first, last int64, c Caps) (*LinesPage, error) {
	return lines(sourceOf(v), first, last, c)
}

func lines(src source, first, last int64, c Caps) (*LinesPage, error) {
	n := src.Lines()
	p := &LinesPage{First: first, Last: min(last, n), Total: n, Lines: []Line{}}
	if first == 1 && last == ToEnd && n == 0 {
		return p, nil
	}
	if err := checkLines(first, last, n); err != nil {
		return nil, err
	}
	sc := newLineScanner(src)
	if _, err := sc.seek(first); err != nil {
		return nil, err
	}
	used := int64(0)
	for k := first; k <= p.Last; k++ {
		if c.Lines > 0 && int64(len(p.Lines)) == c.Lines {
			break
		}
		room := int64(-1)
		if c.Bytes > 0 {
			room = c.Bytes - used - gutterLen(k)
			if room < 0 {
				if len(p.Lines) > 0 {
					break
				}
				room = 0 // the cap cannot hold even the gutter: refused below
			}
		}
		start := sc.off
		text, full, err := sc.readLine(room)
		if err != nil {
			return nil, err
		}
		if !full && len(p.Lines) > 0 {
			break // only a line that alone passes the cap is cut
		}
		p.Lines = append(p.Lines, newLine(k, start, text, full))
		if !full {
			break
		}
		used += gutterLen(k) + int64(len(text))
	}
	shown := p.Lines[len(p.Lines)-1]
	if !shown.Cut && shown.N == p.Last && !fullPage(p, c) {
		return p, nil // everything asked for fits: no continuation line
	}
	// A continuation line is needed: make room for it.
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(src.Size()))))
		if need := reserve + gutterLen(first) + minProgress; c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		budget := c.Bytes - reserve
		for len(p.Lines) > 1 && used > budget {
			l := p.Lines[len(p.Lines)-1]
			if !l.Cut {
				used -= gutterLen(l.N) + int64(len(l.Text))
			}
			p.Lines = p.Lines[:len(p.Lines)-1]
		}
		if l := &p.Lines[0]; len(p.Lines) == 1 && (l.Cut || gutterLen(l.N)+int64(len(l.Text)) > budget) {
			if err := cutLine(src, l, budget-gutterLen(l.N)); err != nil {
				return nil, err
			}
		}
	}
	p.Next = nextLines(p, c)
	return p, nil
}

// fullPage reports whether the page holds as many lines as the line cap
// allows and the value goes on: then it names the next page even when it
// shows the whole range asked for, so that following the hints reads the
// whole value.
func fullPage(p *LinesPage, c Caps) bool {
	return c.Lines > 0 && int64(len(p.Lines)) == c.Lines && p.Lines[len(p.Lines)-1].N < p.Total
}

// nextLines is the range that continues page p, when the caps cut it
// before the last line asked for or it is a full page: the next page of the
// value, from the line after the last shown.
func nextLines(p *LinesPage, c Caps) *Range {
	b := p.Lines[len(p.Lines)-1].N
	if b == p.Last && !fullPage(p, c) {
		return nil
	}
	last := p.Total
	if c.Lines > 0 {
		last = min(last, b+c.Lines)
	}
	return &Range{b + 1, last}
}

// newLine makes the Line read at start: whole, or the prefix of a line
// that is too long (finished by cutLine once it is known to be shown).
func newLine(n, start int64, text []byte, full bool) Line {
	return Line{N: n, Start: start, End: start + int64(len(text)), Text: text, Cut: !full,
		newline: full && len(text) > 0 && text[len(text)-1] == '\n'}
}

// cutLine cuts l to at most room bytes, at a UTF-8 boundary, and finds
// where the line ends so that its rest can be named.
func cutLine(src source, l *Line, room int64) error {
	at, err := boundaryAtOrBefore(src, l.Start+min(room, int64(len(l.Text))), l.Start)
	if err != nil {
		return err
	}
	if !l.Cut {
		// The line was read whole: its end is known.
		l.Text = l.Text[:at-l.Start]
		l.Cut = true
		return nil
	}
	l.Text = l.Text[:at-l.Start]
	end, newline, err := lineEnd(src, at)
	if err != nil {
		return err
	}
	l.End, l.newline = end, newline
	return nil
}

// lineEnd scans forward from o to the end of the line holding it and
// returns the offset just past it (its newline included) and whether it
// ends in a newline.
func lineEnd(src source, o int64) (int64, bool, error) {
	buf := make([]byte, scanChunk)
	for o < src.Size() {
		n, err := readFull(src, buf[:min(int64(len(buf)), src.Size()-o)], o)
		if err != nil {
			return 0, false, err
		}
		if j := bytes.IndexByte(buf[:n], '\n'); j >= 0 {
			return o + int64(j) + 1, true, nil
		}
		o += int64(n)
	}
	return src.Size(), false, nil
}

// readLine returns the line the scanner is at, newline included, when it
// is at most room bytes long (room < 0: any length), and moves to the next
// line. A longer line gives its first room bytes and full = false, and the
// scanner stays where it was.
func (s *lineScanner) readLine(room int64) (text []byte, full bool, err error) {
	pos := s.off
	for pos < s.src.Size() {
		w, err := s.window(pos)
		if err != nil {
			return nil, false, err
		}
		j := bytes.IndexByte(w, '\n')
		take := len(w)
		if j >= 0 {
			take = j + 1
		}
		if room >= 0 && int64(len(text)+take) > room {
			return append(text, w[:room-int64(len(text))]...), false, nil
		}
		text = append(text, w[:take]...)
		pos += int64(take)
		if j >= 0 {
			break
		}
	}
	s.off = pos
	s.line++
	return text, true, nil
}

// window returns the bytes from o on that the scanner has buffered,
// reading a chunk at o when o is outside the buffer.
func (s *lineScanner) window(o int64) ([]byte, error) {
	if o >= s.winOff && o < s.winOff+int64(len(s.win)) {
		return s.win[o-s.winOff:], nil
	}
	if s.winBuf == nil {
		s.winBuf = make([]byte, scanChunk)
	}
	n, err := readFull(s.src, s.winBuf[:min(int64(len(s.winBuf)), s.src.Size()-o)], o)
	if err != nil {
		return nil, err
	}
	s.win, s.winOff = s.winBuf[:n], o
	return s.win, nil
}
