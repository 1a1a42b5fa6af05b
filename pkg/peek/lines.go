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
	// a UTF-8 boundary, and Rest is the byte range of the remainder — or,
	// when Window is set, the part of the line around a match.
	Cut bool
	// Match says a query matched this line (the others are its context).
	Match bool
	// Window is set on a matching line too long for the cap that a search
	// shows around its first match: Text is then the bytes of the window.
	Window  *Window
	newline bool // the line ends in a newline (at End-1)
}

// Window is the part of a long matching line a search shows: the
// half-open byte range [Start, End) of the value, cut on UTF-8 boundaries,
// around the line's first match, which starts at offset Match.
type Window struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	Match int64 `json:"match"`
}

// Rest returns the half-open byte range of the part of a cut line that was
// not shown, its newline excluded: the --bytes range that reads it. For a
// window, it is the part after the window.
func (l Line) Rest() (start, end int64) {
	end = l.textEnd()
	from := l.Start + int64(len(l.Text))
	if l.Window != nil {
		from = l.Window.End
	}
	return min(from, end), end
}

// textEnd is the offset of the line's end, its newline excluded.
func (l Line) textEnd() int64 {
	if l.newline {
		return l.End - 1
	}
	return l.End
}

// MarshalJSON renders a line for --json output: the text as a string.
func (l Line) MarshalJSON() ([]byte, error) {
	type line struct {
		N      int64   `json:"n"`
		Start  int64   `json:"start"`
		End    int64   `json:"end"`
		Text   string  `json:"text"`
		Cut    bool    `json:"cut,omitempty"`
		Match  bool    `json:"match,omitempty"`
		Window *Window `json:"window,omitempty"`
	}
	return json.Marshal(line{l.N, l.Start, l.End, string(l.Text), l.Cut, l.Match, l.Window})
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
	// Clamped says the range asked for goes past the value's last line:
	// Last is cut to it, and a page that reaches it says so in its
	// continuation line ("the value ends at line N").
	Clamped bool `json:"clamped,omitempty"`
	escape  bool
}

// Lines reads lines first..last (1-based, inclusive) of v within caps c.
// A last past the end is cut to the value's last line, and the page that
// shows it says where the value ends; ToEnd asks for as many lines as the
// caps allow. A first line past the end is invalid_range, except that
// Lines(v, 1, ToEnd, c) of an empty value is an empty page. It seeks
// through the value's line index, so a page at the end of a large value
// reads about as much as one at its start. The page is held in memory (at
// most the byte cap, when there is one); WriteLines streams.
func Lines(v *retain.Value, first, last int64, c Caps) (*LinesPage, error) {
	return lines(sourceOf(v), first, last, c)
}

// newLinesPage is the page of lines first..last of src, without its lines.
func newLinesPage(src source, first, last int64, c capped) *LinesPage {
	n := src.Lines()
	return &LinesPage{First: first, Last: min(last, n), Total: n, Lines: []Line{},
		Clamped: last != ToEnd && last > n, escape: c.Escape}
}

func lines(src source, first, last int64, caps Caps) (*LinesPage, error) {
	c := caps.effective()
	p := newLinesPage(src, first, last, c)
	n := p.Total
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
		if full && room >= 0 && c.shown(text) > room {
			full = false // it fits as stored, not escaped
		}
		if !full && len(p.Lines) > 0 {
			break // only a line that alone passes the cap is cut
		}
		p.Lines = append(p.Lines, newLine(k, start, text, full))
		if !full {
			break
		}
		used += gutterLen(k) + c.shown(text)
	}
	shown := p.Lines[len(p.Lines)-1]
	if !shown.Cut && shown.N == p.Last && !fullPage(int64(len(p.Lines)), shown.N, p.Total, c) && !p.Clamped {
		return p, nil // everything asked for fits: no continuation line
	}
	// A continuation line is needed: make room for it.
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(src.Size()))))
		if need := reserve + gutterLen(first) + c.minProgress(); c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		budget := c.Bytes - reserve
		for len(p.Lines) > 1 && used > budget {
			l := p.Lines[len(p.Lines)-1]
			if !l.Cut {
				used -= gutterLen(l.N) + c.shown(l.Text)
			}
			p.Lines = p.Lines[:len(p.Lines)-1]
		}
		if l := &p.Lines[0]; len(p.Lines) == 1 && (l.Cut || gutterLen(l.N)+c.shown(l.Text) > budget) {
			if err := cutLine(src, l, budget-gutterLen(l.N), c); err != nil {
				return nil, err
			}
		}
	}
	l := p.Lines[len(p.Lines)-1]
	p.Next = nextLines(int64(len(p.Lines)), l.N, p.Last, p.Total, c)
	return p, nil
}

// fullPage reports whether a page of shown lines, the last of them line
// lastN, holds as many lines as the line cap allows and the value goes on:
// then it names the next page even when it shows the whole range asked
// for, so that following the hints reads the whole value.
func fullPage(shown, lastN, total int64, c capped) bool {
	return c.Lines > 0 && shown == c.Lines && lastN < total
}

// nextLines is the range that continues a page of shown lines ending at
// line b, when the caps cut it before the last line asked for or it is a
// full page: the next page of the value, from the line after the last
// shown.
func nextLines(shown, b, last, total int64, c capped) *Range {
	if b == last && !fullPage(shown, b, total, c) {
		return nil
	}
	end := total
	if c.Lines > 0 {
		end = min(end, b+c.Lines)
	}
	return &Range{b + 1, end}
}

// newLine makes the Line read at start: whole, or the prefix of a line
// that is too long (finished by cutLine once it is known to be shown).
func newLine(n, start int64, text []byte, full bool) Line {
	return Line{N: n, Start: start, End: start + int64(len(text)), Text: text, Cut: !full,
		newline: full && len(text) > 0 && text[len(text)-1] == '\n'}
}

// cutLine cuts l to at most room bytes as shown, at a UTF-8 boundary, and
// finds where the line ends so that its rest can be named.
func cutLine(src source, l *Line, room int64, c capped) error {
	at, err := fit(src, l.Start, l.Start+int64(len(l.Text)), room, c)
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
	buf := make([]byte, max(1, min(int64(scanChunk), src.Size()-o)))
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
		// No bigger than the value: a small value's peek (one call of a
		// running MCP server) need not clear 64 KiB.
		s.winBuf = make([]byte, max(1, min(int64(scanChunk), s.src.Size())))
	}
	n, err := readFull(s.src, s.winBuf[:min(int64(len(s.winBuf)), s.src.Size()-o)], o)
	if err != nil {
		return nil, err
	}
	s.win, s.winOff = s.winBuf[:n], o
	return s.win, nil
}
