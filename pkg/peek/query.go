package peek

import (
	"fmt"
	"strings"

	"github.com/retval/retval/pkg/retain"
)

// QueryOptions say what a search looks for.
type QueryOptions struct {
	Query      string `json:"query"`
	Regex      bool   `json:"regex,omitempty"`       // Query is an RE2 expression, matched within each line
	IgnoreCase bool   `json:"ignore_case,omitempty"` // Unicode case folding
	Context    int64  `json:"context,omitempty"`     // lines shown before and after each match
	AfterLine  int64  `json:"after_line,omitempty"`  // show only matches after this line
	// FirstLine and LastLine, when set, confine the search to lines
	// FirstLine..LastLine (peek --lines A-B --query TEXT): matches, their
	// context and the totals are counted within them. LastLine ToEnd (or
	// past the end) is the last line; a FirstLine past the end is
	// invalid_range.
	FirstLine int64 `json:"first_line,omitempty"`
	LastLine  int64 `json:"last_line,omitempty"`
}

// QueryPage is the result of Query.
type QueryPage struct {
	QueryOptions
	Total  int64 `json:"total"`  // matching lines in the whole value
	Before int64 `json:"before"` // matching lines at or before AfterLine
	Shown  int64 `json:"shown"`  // matching lines shown
	// Lines are the lines shown, matches and their context, in order; a
	// gap in line numbers separates groups. A matching line too long for
	// the cap is shown alone, as a Window around its first match.
	Lines []Line `json:"lines"`
	// Next is the --after-line that continues, when matches were left out
	// (0 otherwise).
	Next   int64 `json:"next,omitempty"`
	escape bool
	w      *window // the lines a confined search covers (nil: all)
}

// Query searches v for lines matching o and returns the first matches
// after o.AfterLine that fit in caps c, with the total number of matching
// lines. A plain query is a substring; with Regex it is an RE2 expression
// that matches within one line (^ and $ are the line's ends). It reads the
// value once, a chunk at a time, whatever its size. The page is held in
// memory (at most the byte cap, when there is one); WriteQuery streams.
func Query(v *retain.Value, o QueryOptions, c Caps) (*QueryPage, error) {
	return query(sourceOf(v), o, c)
}

// prepare checks o and compiles its matcher.
func (o QueryOptions) prepare() (matcher, error) {
	if o.Context < 0 || o.AfterLine < 0 {
		return nil, optionErr("%s and %s must be ≥ 0", []string{"context", "after-line"})
	}
	return compileQuery(o.Query, o.Regex, o.IgnoreCase)
}

// window is the part of a value a search covers: lines lo..hi, bytes
// [from, to).
type window struct {
	lo, hi   int64
	from, to int64
	within   bool // FirstLine or LastLine confined it
}

// window locates the lines o confines the search to.
func (o QueryOptions) window(src source) (window, error) {
	n := src.Lines()
	if o.FirstLine == 0 && o.LastLine == 0 {
		return window{lo: 1, hi: n, to: src.Size()}, nil
	}
	first, last := max(o.FirstLine, 1), o.LastLine
	if last == 0 {
		last = ToEnd
	}
	if o.FirstLine == 0 && last < first {
		first = last // lets checkLines name the range as given
	}
	from, to, hi, err := lineSpan(src, first, last)
	if err != nil {
		return window{}, err
	}
	return window{lo: first, hi: hi, from: from, to: to, within: true}, nil
}

// String names the lines a confined search covers, for its trailer.
func (w *window) String() string {
	if w == nil || !w.within {
		return ""
	}
	return fmt.Sprintf(" in lines %d-%d", w.lo, w.hi)
}

// afterOffset returns where the lines after line `after` start (the end
// of the value when there are none), moving sc there.
func afterOffset(src source, sc *lineScanner, after int64) (int64, error) {
	if after < src.Lines() {
		return sc.seek(after + 1)
	}
	return src.Size(), nil
}

func query(src source, o QueryOptions, caps Caps) (*QueryPage, error) {
	c := caps.effective()
	m, err := o.prepare()
	if err != nil {
		return nil, err
	}
	w, err := o.window(src)
	if err != nil {
		return nil, err
	}
	p := &QueryPage{QueryOptions: o, Lines: []Line{}, escape: c.Escape}
	if w.within {
		p.w = &w
	}
	budget := int64(-1)
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(src.Size()))))
		if need := reserve + gutterLen(worstNumber(src.Size())) + c.minProgress(); c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		budget = c.Bytes - reserve
	}
	sc := newLineScanner(src)
	afterOff, err := afterOffset(src, sc, max(o.AfterLine, w.lo-1))
	if err != nil {
		return nil, err
	}
	r := scanResult{afterOff: afterOff, from: w.from, to: w.to, keep: -1}
	if c.Lines > 0 {
		r.keep = int(min(c.Lines, 1<<20))
	} else if c.Bytes > 0 {
		r.keep = int(min(c.Bytes/3+1, 1<<20)) // a shown line takes at least "N: "
	}
	if err := m.scan(src, &r); err != nil {
		return nil, err
	}
	p.Total, p.Before = r.total, r.before
	// Number the matches kept, sweeping forward from AfterLine.
	nums := make([]int64, len(r.starts))
	for i, s := range r.starts {
		if nums[i], err = sc.seekOffset(s); err != nil {
			return nil, err
		}
	}
	if err := p.fill(src, m, nums, c, budget); err != nil {
		return nil, err
	}
	p.Next = p.next()
	return p, nil
}

// next is the --after-line that continues the page: its last match shown,
// when matches are left.
func (p *QueryPage) next() int64 {
	if p.Shown > 0 && p.Before+p.Shown < p.Total {
		for i := len(p.Lines) - 1; i >= 0; i-- {
			if p.Lines[i].Match {
				return p.Lines[i].N
			}
		}
	}
	return 0
}

// fill adds matches (by line number) with their context while they fit:
// each match with all its context, or not at all — except the first, which
// is shown alone (as a window around the match if it must be) when it does
// not fit with its context.
func (p *QueryPage) fill(src source, m matcher, nums []int64, c capped, budget int64) error {
	lo, n := int64(1), src.Lines()
	if p.w != nil {
		lo, n = p.w.lo, p.w.hi
	}
	ctx := p.Context
	sc := newLineScanner(src)
	used, last := int64(0), int64(0) // bytes used, last line shown
	for _, k := range nums {
		if k <= last {
			// Already shown as context of an earlier match.
			for i := len(p.Lines) - 1; i >= 0; i-- {
				if p.Lines[i].N == k {
					p.Lines[i].Match = true
				}
			}
			p.Shown++
		}
		from, to := max(lo, k-ctx, last+1), min(n, k+ctx)
		if from > to {
			continue
		}
		var add []Line
		extra := int64(0)
		if ctx > 0 && last > 0 && from > last+1 {
			extra = 3 // the "--" separator line
		}
		fits := c.Lines <= 0 || int64(len(p.Lines))+to-from+1 <= c.Lines
		if fits {
			if _, err := sc.seek(from); err != nil {
				return err
			}
			for j := from; j <= to; j++ {
				room := int64(-1)
				if budget >= 0 {
					room = budget - used - extra - gutterLen(j)
					if room < 0 {
						fits = false
						break
					}
				}
				start := sc.off
				text, full, err := sc.readLine(room)
				if err != nil {
					return err
				}
				if !full || room >= 0 && c.shown(text) > room {
					fits = false
					break
				}
				l := newLine(j, start, text, full)
				l.Match = j == k
				add = append(add, l)
				extra += gutterLen(j) + c.shown(text)
			}
		}
		if !fits {
			if p.Shown == 0 {
				return p.first(src, m, k, c, budget)
			}
			return nil
		}
		p.Lines = append(p.Lines, add...)
		used += extra
		if k > last {
			p.Shown++
		}
		last = to
	}
	return nil
}

// first shows match line k alone: whole when it fits, otherwise the
// window of the line around its first match that fits the budget.
func (p *QueryPage) first(src source, m matcher, k int64, c capped, budget int64) error {
	sc := newLineScanner(src)
	if _, err := sc.seek(k); err != nil {
		return err
	}
	room := int64(-1)
	if budget >= 0 {
		room = budget - gutterLen(k)
	}
	start := sc.off
	text, full, err := sc.readLine(room)
	if err != nil {
		return err
	}
	if full && (room < 0 || c.shown(text) <= room) {
		l := newLine(k, start, text, full)
		l.Match = true
		p.Lines, p.Shown = []Line{l}, 1
		return nil
	}
	end, newline, err := lineEnd(src, start)
	if err != nil {
		return err
	}
	l := Line{N: k, Start: start, End: end, Cut: true, Match: true, newline: newline}
	w, err := matchWindow(src, m, start, l.textEnd(), room, c)
	if err != nil {
		return err
	}
	l.Window = w
	l.Text = make([]byte, w.End-w.Start)
	if _, err := readFull(src, l.Text, w.Start); err != nil {
		return err
	}
	p.Lines, p.Shown = []Line{l}, 1
	return nil
}

// matchWindow returns the part of line [ls, le) to show around its first
// match, at most room bytes as shown: the match in the middle, as much of
// the line before and after it as fits, cut on UTF-8 boundaries; from the
// match on when the match alone does not fit.
func matchWindow(src source, m matcher, ls, le, room int64, c capped) (*Window, error) {
	mo, me, err := m.locate(src, ls, le)
	if err != nil {
		return nil, err
	}
	ws := mo
	if me-mo <= room {
		mw, err := shownLen(src, mo, me, c)
		if err != nil {
			return nil, err
		}
		if mw <= room {
			if ws, err = fitBack(src, ls, mo, (room-mw)/2, c); err != nil {
				return nil, err
			}
		}
	}
	we, err := fit(src, ws, le, room, c)
	if err != nil {
		return nil, err
	}
	if we == le && ws > ls {
		// The line ends within the window: use the room left before it.
		used, err := shownLen(src, ws, we, c)
		if err != nil {
			return nil, err
		}
		if ws, err = fitBack(src, ls, ws, room-used, c); err != nil {
			return nil, err
		}
	}
	return &Window{Start: ws, End: we, Match: mo}, nil
}

// Render returns the text of the page, as the CLI prints it: the lines
// with their gutters ("--" between groups when there is context), then
// the count line.
func (p *QueryPage) Render() []byte {
	b := appendLines(nil, p.Lines, p.Context > 0, p.escape)
	return appendTrailer(b, p.Trailer())
}

// Trailer returns the count line: "[N matches; shown A-B; next:
// --after-line L]", naming the window and the whole line of a matching
// line too long for the cap.
func (p *QueryPage) Trailer() string {
	var win *Line
	for i := range p.Lines {
		if p.Lines[i].Window != nil {
			win = &p.Lines[i]
		}
	}
	return queryTrailer(p.Total, p.Before, p.Shown, p.AfterLine, p.w.String(), win, p.Next)
}

func queryTrailer(total, before, shown, after int64, within string, win *Line, next int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s%s", plural(total, "match"), within)
	switch {
	case total == 0:
	case shown == 0:
		fmt.Fprintf(&b, "; none after line %d", after)
	default:
		fmt.Fprintf(&b, "; shown %d-%d", before+1, before+shown)
		if win != nil {
			w := win.Window
			fmt.Fprintf(&b, ", line %d too long: showing bytes %d-%d around the match at byte %d; whole line: --bytes %d-%d",
				win.N, w.Start, w.End, w.Match, win.Start, win.textEnd())
		}
		if next > 0 {
			fmt.Fprintf(&b, "; next: --after-line %d", next)
		}
	}
	b.WriteString("]")
	return b.String()
}

func (p *QueryPage) trailer(w int64) string {
	l := &Line{N: w, Start: w, End: w, Cut: true, Window: &Window{w, w, w}}
	return queryTrailer(w, w-1, 1, w, (&window{lo: w, hi: w, within: p.w != nil}).String(), l, w) + "\n\n"
}
