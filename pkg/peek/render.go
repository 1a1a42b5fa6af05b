package peek

import (
	"fmt"
	"strings"

	"github.com/retval/retval/internal/safetext"
)

// A page's text is its lines, each with its gutter and as stored, then —
// when something was left out, or the range asked for goes past the end —
// one continuation line in brackets naming the exact flag that reads on.
// When the last line shown does not end in a newline (a cut line, or a
// value's last line without one), a newline is written before the
// continuation line. Without a continuation line the text ends exactly as
// the value's bytes do. Under Caps.Escape the value's bytes are shown as
// safetext escapes them; gutters and continuation lines never need it.

// Render returns the text of the page, as the CLI prints it.
func (p *LinesPage) Render() []byte {
	// Sized for the page up front (gutters of up to 20 digits, the
	// trailer): grown by doubling instead, a 400-line page cost a fresh
	// process about 30 page faults more.
	n := 128
	for _, l := range p.Lines {
		n += len(l.Text) + 22
	}
	b := make([]byte, 0, n)
	b = appendLines(b, p.Lines, false, p.escape)
	return appendTrailer(b, p.Trailer())
}

// Trailer returns the continuation line of the page (without its newline),
// or "" when the page shows everything asked for.
func (p *LinesPage) Trailer() string {
	if len(p.Lines) == 0 {
		return ""
	}
	l := p.Lines[len(p.Lines)-1]
	ends := p.Clamped && l.N == p.Total
	if !l.Cut && p.Next == nil && !ends {
		return ""
	}
	return linesTrailer(p.First, l.N, p.Total, l, p.Next, ends)
}

// linesTrailer is the continuation line of a page of lines first..last;
// l is the last line shown, next the range that continues, and ends says
// that the range asked for went past the value's last line.
func linesTrailer(first, last, total int64, l Line, next *Range, ends bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[lines %d-%d of %d", first, last, total)
	if l.Cut {
		a, e := l.Rest()
		fmt.Fprintf(&b, ", line %d cut; rest of line %d: --bytes %d-%d", l.N, l.N, a, e)
	}
	if next != nil {
		fmt.Fprintf(&b, "; next: --lines %d-%d", next.First, next.Last)
	}
	if ends {
		fmt.Fprintf(&b, "; the value ends at line %d", total)
	}
	b.WriteString("]")
	return b.String()
}

// trailer returns the widest continuation line a page of a value whose
// numbers are all at most w can have.
func (p *LinesPage) trailer(w int64) string {
	l := Line{N: w, Start: w, End: w, Cut: true}
	return linesTrailer(w, w, w, l, &Range{w, w}, p.Clamped) + "\n\n"
}

// appendLines appends lines with their gutters; with separate, a line
// "--" goes between lines that are not consecutive (as grep -C does).
func appendLines(b []byte, lines []Line, separate, escape bool) []byte {
	for i, l := range lines {
		if separate && i > 0 && l.N > lines[i-1].N+1 {
			b = append(b, "--\n"...)
		}
		b = appendGutter(b, l.N)
		b = appendText(b, l.Text, escape)
	}
	return b
}

// appendText appends bytes of the value, escaped when escape is set.
func appendText(b, text []byte, escape bool) []byte {
	if escape {
		return safetext.Append(b, text)
	}
	return append(b, text...)
}

// appendTrailer appends the continuation line t, if any, on a line of
// its own.
func appendTrailer(b []byte, t string) []byte {
	if t == "" {
		return b
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = append(b, t...)
	return append(b, '\n')
}
