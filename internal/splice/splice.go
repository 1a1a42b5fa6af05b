// Package splice edits a file a person keeps (a JSON settings file, a TOML
// config) as text: each change replaces one byte range, and every other
// byte stays as it was, so the file keeps its layout, line endings and
// comments. It is what retval's editors of other programs' files share
// (the hook installer and mcp wrap): an Edit, applying a set of them, and
// inserting into or removing from a bracketed list in the list's own
// style, so that a removal gives back exactly the text an insertion
// started from.
package splice

import (
	"errors"
	"slices"
	"strings"
)

// Edit replaces src[Start:End] by Text.
type Edit struct {
	Start, End int
	Text       string
}

// ErrOverlap is the error of edits that replace the same bytes.
var ErrOverlap = errors.New("two edits overlap")

// Apply applies edits to src. They must not overlap; insertions at one
// offset land in the order given.
func Apply(src string, edits ...Edit) (string, error) {
	es := slices.Clone(edits)
	slices.SortStableFunc(es, func(a, b Edit) int { return a.Start - b.Start })
	var b strings.Builder
	at := 0
	for _, e := range es {
		if e.Start < at || e.End < e.Start || e.End > len(src) {
			return "", ErrOverlap
		}
		b.WriteString(src[at:e.Start])
		b.WriteString(e.Text)
		at = e.End
	}
	b.WriteString(src[at:])
	return b.String(), nil
}

// Span is src[Start:End].
type Span struct{ Start, End int }

// List is a bracketed list in a text: a JSON array or object, a TOML
// array. Open is the offset of its opening bracket, Close that of its
// closing one, and Items the spans of its elements (for an object, from
// a member's name to the end of its value).
type List struct {
	Open, Close int
	Items       []Span
}

// Layout says how to write an element into a list that has none yet.
type Layout struct {
	// Newline is the line break ("\n" or "\r\n"); "" keeps the list on
	// one line.
	Newline string
	// Indent is the white space before each element on its own line,
	// and CloseIndent the white space before the closing bracket.
	Indent, CloseIndent string
	// Sep separates elements written on one line where the list shows
	// no separator of its own (", " or ",").
	Sep string
}

// lead is the white space after the opening bracket.
func (l List) lead(src string) string {
	i := l.Open + 1
	for i < l.Close && strings.IndexByte(" \t\r\n", src[i]) >= 0 {
		i++
	}
	return src[l.Open+1 : i]
}

// Sep is the text between two elements: as written between the first
// two, else, when the first is on a line of its own, "," and the white
// space before it, else lay.Sep.
func (l List) Sep(src string, lay Layout) string {
	if len(l.Items) >= 2 {
		return src[l.Items[0].End:l.Items[1].Start]
	}
	if ws := l.lead(src); strings.Contains(ws, "\n") {
		return "," + ws
	}
	if lay.Sep == "" {
		return ", "
	}
	return lay.Sep
}

// Insert is the edit that inserts the elements texts (each written whole:
// a value, or a member's name, separator and value) before element i
// (i == len(l.Items) appends). Remove(i, i+len(texts), lay) on the result
// gives back src.
func (l List) Insert(src string, i int, texts []string, lay Layout) Edit {
	sep := l.Sep(src, lay)
	n := len(l.Items)
	switch {
	case n == 0 && lay.Newline != "":
		// The white space inside the brackets is replaced: an empty list
		// on lines of its own reads as [] once emptied again.
		in := lay.Newline + lay.Indent
		return Edit{l.Open + 1, l.Close, in + strings.Join(texts, ","+in) + lay.Newline + lay.CloseIndent}
	case n == 0:
		p := l.Open + 1 + len(l.lead(src))
		return Edit{p, p, strings.Join(texts, sep)}
	case i >= n:
		return Edit{l.Items[n-1].End, l.Items[n-1].End, sep + strings.Join(texts, sep)}
	}
	at := l.Items[i].Start
	return Edit{at, at, strings.Join(texts, sep) + sep}
}

// Remove is the edit that removes elements i to j-1 and the separators
// that go with them. Emptying a list laid out on lines of its own
// (lay.Newline set) leaves [] (or {}), as Insert into an empty list starts
// from; emptying a one-line list keeps the white space inside its
// brackets.
func (l List) Remove(src string, i, j int, lay Layout) Edit {
	n := len(l.Items)
	switch {
	case i == 0 && j >= n:
		if lay.Newline != "" {
			return Edit{l.Open + 1, l.Close, ""}
		}
		return Edit{l.Items[0].Start, l.Items[n-1].End, ""}
	case j >= n:
		return Edit{l.Items[i-1].End, l.Items[n-1].End, ""}
	}
	return Edit{l.Items[i].Start, l.Items[j].Start, ""}
}
