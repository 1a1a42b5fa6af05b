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
}

// QueryPage is the result of Query.
type QueryPage struct {
	QueryOptions
	Total  int64 `json:"total"`  // matching lines in the whole value
	Before int64 `json:"before"` // matching lines at or before AfterLine
	Shown  int64 `json:"shown"`  // matching lines shown
	// Lines are the lines shown, matches and their context, in order; a
	// gap in line numbers separates groups.
	Lines []Line `json:"lines"`
	// Next is the --after-line that continues, when matches were left out
	// (0 otherwise).
	Next int64 `json:"next,omitempty"`
}

// Query searches v for lines matching o and returns the first matches
// after o.AfterLine that fit in caps c, with the total number of matching
// lines. A plain query is a substring; with Regex it is an RE2 expression
// that matches within one line (^ and $ are the line's ends). It reads the
// value once, a chunk at a time, whatever its size.
func Query(v *retain.Value, o QueryOptions, c Caps) (*QueryPage, error) {
	return query(sourceOf(v), o, c)
}

func query(src source, o QueryOptions, c Caps) (*QueryPage, error) {
	if o.Context < 0 || o.AfterLine < 0 {
		return nil, retain.Errorf(retain.CodeUsage, "--context and --after-line must be ≥ 0")
	}
	m, err := compileQuery(o.Query, o.Regex, o.IgnoreCase)
	if err != nil {
		return nil, err
	}
	p := &QueryPage{QueryOptions: o, Lines: []Line{}}
	n := src.Lines()
	budget := int64(-1)
	if c.Bytes > 0 {
		reserve := int64(len(p.trailer(worstNumber(src.Size()))))
		if need := reserve + gutterLen(worstNumber(src.Size())) + minProgress; c.Bytes < need {
			return nil, tooSmall(c, need)
		}
		budget = c.Bytes - reserve
	}
	// Where the lines after AfterLine start.
	sc := newLineScanner(src)
	afterOff := src.Size()
	if o.AfterLine < n {
		if afterOff, err = sc.seek(o.AfterLine + 1); err != nil {
			return nil, err
		}
	}
	keep := -1
	if c.Lines > 0 {
		keep = int(min(c.Lines, 1<<20))
	} else if c.Bytes > 0 {
		keep = int(min(c.Bytes/3+1, 1<<20)) // a shown line takes at least "N: "
	}
	r, err := m.scan(src, afterOff, keep)
	if err != nil {
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
	if err := p.fill(src, nums, c, budget); err != nil {
		return nil, err
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

// fill adds matches (by line number) with their context while they fit:
// each match with all its context, or not at all — except the first, which
// is shown alone (cut if it must be) when it does not fit with its context.
func (p *QueryPage) fill(src source, nums []int64, c Caps, budget int64) error {
	n := src.Lines()
	ctx := p.Context
	sc := newLineScanner(src)
	used, last := int64(0), int64(0) // bytes used, last line shown
	for _, m := range nums {
		if m <= last {
			// Already shown as context of an earlier match.
			for i := len(p.Lines) - 1; i >= 0; i-- {
				if p.Lines[i].N == m {
					p.Lines[i].Match = true
				}
			}
			p.Shown++
		}
		from, to := max(1, m-ctx, last+1), min(n, m+ctx)
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
			for k := from; k <= to; k++ {
				room := int64(-1)
				if budget >= 0 {
					room = budget - used - extra - gutterLen(k)
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
				if !full {
					fits = false
					break
				}
				l := newLine(k, start, text, full)
				l.Match = k == m
				add = append(add, l)
				extra += gutterLen(k) + int64(len(text))
			}
		}
		if !fits {
			if p.Shown == 0 {
				return p.first(src, m, budget)
			}
			return nil
		}
		p.Lines = append(p.Lines, add...)
		used += extra
		if m > last {
			p.Shown++
		}
		last = to
	}
	return nil
}

// first shows match line m alone, cut to the budget if it must be.
func (p *QueryPage) first(src source, m, budget int64) error {
	sc := newLineScanner(src)
	if _, err := sc.seek(m); err != nil {
		return err
	}
	room := budget - gutterLen(m)
	start := sc.off
	text, full, err := sc.readLine(room)
	if err != nil {
		return err
	}
	l := newLine(m, start, text, full)
	l.Match = true
	if !full {
		if err := cutLine(src, &l, room); err != nil {
			return err
		}
	}
	p.Lines, p.Shown = []Line{l}, 1
	return nil
}

// Render returns the text of the page, as the CLI prints it: the lines
// with their gutters ("--" between groups when there is context), then
// the count line.
func (p *QueryPage) Render() []byte {
	b := appendLines(nil, p.Lines, p.Context > 0)
	return appendTrailer(b, p.Trailer())
}

// Trailer returns the count line: "[N matches; shown A-B; next:
// --after-line L]", naming the rest of a cut line when there is one.
func (p *QueryPage) Trailer() string {
	var cut *Line
	last := int64(0)
	for i := range p.Lines {
		if p.Lines[i].Match {
			last = p.Lines[i].N
			if p.Lines[i].Cut {
				cut = &p.Lines[i]
			}
		}
	}
	return queryTrailer(p.Total, p.Before, p.Shown, p.AfterLine, last, cut, p.Next)
}

func queryTrailer(total, before, shown, after, last int64, cut *Line, next int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%d matches", total)
	switch {
	case total == 0:
	case shown == 0:
		fmt.Fprintf(&b, "; none after line %d", after)
	default:
		fmt.Fprintf(&b, "; shown %d-%d", before+1, before+shown)
		if cut != nil {
			a, e := cut.Rest()
			fmt.Fprintf(&b, ", line %d cut; rest of line %d: --bytes %d-%d", last, last, a, e)
		}
		if next > 0 {
			fmt.Fprintf(&b, "; next: --after-line %d", next)
		}
	}
	b.WriteString("]")
	return b.String()
}

func (p *QueryPage) trailer(w int64) string {
	l := &Line{N: w, Start: w, End: w, Cut: true}
	return queryTrailer(w, w-1, 1, w, w, l, w) + "\n\n"
}
