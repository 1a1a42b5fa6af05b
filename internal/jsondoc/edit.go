package jsondoc

import (
	"fmt"
	"strings"

	"github.com/retval/retval/internal/splice"
)

// Doc is a JSON document edited in place: each edit splices the text of
// one member or element into the document, or out of it, written in the
// document's own style (its indent, its line endings, compact or one
// member per line), and every other byte stays as it was. Removing what
// Insert added gives back the text it was inserted into, byte for byte.
type Doc struct {
	// Root is the document as it stands; every edit parses it again, so
	// nodes taken from an older Root no longer belong to it.
	Root  *Node
	src   string
	style style
}

// style is how a document writes what it holds.
type style struct {
	newline string // "\n" or "\r\n"
	unit    string // one level of indent
	colon   string // between a member's name and its value
	comma   string // between elements on one line
	pretty  bool   // containers one element per line
}

// NewDoc parses a document for editing; see Parse for its errors. An
// object with no members is taken to be written one member per line, in
// two-space indents, as JSON.stringify(v, null, 2) writes it.
func NewDoc(b []byte) (*Doc, error) {
	root, err := Parse(b)
	if err != nil {
		return nil, err
	}
	src := string(b)
	st := style{newline: "\n", unit: Indent(b), colon: ": ", pretty: true}
	if strings.Contains(src, "\r\n") {
		st.newline = "\r\n"
	}
	if l := Items(root); len(l.Items) > 0 && !strings.Contains(src[root.Start:root.End], "\n") {
		st.pretty, st.colon, st.comma = false, ":", ","
	}
	if c, ok := firstColon(src, root); ok {
		st.colon = c
	}
	if c, ok := firstComma(src, root); ok {
		st.comma = c
	} else if st.comma == "" {
		st.comma = ", "
	}
	return &Doc{Root: root, src: src, style: st}, nil
}

// Bytes is the document as edited.
func (d *Doc) Bytes() []byte { return []byte(d.src) }

// Items is an object's or array's elements as a splice.List: for an
// object, each member from its name to the end of its value.
func Items(n *Node) splice.List {
	l := splice.List{Open: n.Start, Close: n.End - 1}
	for i, v := range n.Vals {
		start := v.Start
		if n.Kind == '{' {
			start = n.KeyStarts[i]
		}
		l.Items = append(l.Items, splice.Span{Start: start, End: v.End})
	}
	return l
}

// firstColon is the text between the first member name and its value in
// the document.
func firstColon(src string, n *Node) (string, bool) {
	if n.Kind == '{' && len(n.Vals) > 0 {
		return src[n.KeyStarts[0]+len(n.RawKeys[0]) : n.Vals[0].Start], true
	}
	for _, v := range n.Vals {
		if c, ok := firstColon(src, v); ok {
			return c, true
		}
	}
	return "", false
}

// firstComma is the first separator between two elements on one line.
func firstComma(src string, n *Node) (string, bool) {
	if n.Kind == 0 {
		return "", false
	}
	if l := Items(n); len(l.Items) >= 2 {
		if sep := src[l.Items[0].End:l.Items[1].Start]; !strings.Contains(sep, "\n") {
			return sep, true
		}
	}
	for _, v := range n.Vals {
		if c, ok := firstComma(src, v); ok {
			return c, true
		}
	}
	return "", false
}

// lineIndent is the white space that starts the line holding offset i.
func (d *Doc) lineIndent(i int) string {
	start := strings.LastIndexByte(d.src[:i], '\n') + 1
	end := start
	for end < len(d.src) && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return d.src[start:end]
}

// layout is how elements go into list: on lines of their own when the
// list has them so (or, empty, when the document does), at the indent its
// elements have or one level in from its line.
func (d *Doc) layout(list *Node) splice.Layout {
	l := Items(list)
	lay := splice.Layout{Sep: d.style.comma}
	lead := d.src[l.Open+1 : l.Close]
	lead = lead[:len(lead)-len(strings.TrimLeft(lead, " \t\r\n"))]
	switch {
	case len(l.Items) > 0 && strings.Contains(lead, "\n"):
		lay.Newline = d.style.newline
		lay.Indent = lead[strings.LastIndexByte(lead, '\n')+1:]
	case len(l.Items) == 0 && d.style.pretty:
		lay.Newline = d.style.newline
		lay.CloseIndent = d.lineIndent(l.Open)
		lay.Indent = lay.CloseIndent + d.style.unit
	}
	return lay
}

// Insert adds v to list before its element i (i == len(list.Vals)
// appends): a member named key when list is an object, an element when it
// is an array.
func (d *Doc) Insert(list *Node, i int, key string, v *Node) error {
	if list.Kind == 0 || (list.Kind == '{') != (key != "") {
		return fmt.Errorf("%w: insert into a %c with key %q", ErrShape, list.Kind, key)
	}
	lay := d.layout(list)
	st := d.style
	if lay.Newline == "" {
		st.pretty = false
	}
	var b strings.Builder
	if key != "" {
		b.WriteString(Quote(key))
		b.WriteString(st.colon)
	}
	st.render(&b, v, lay.Indent)
	return d.apply(Items(list).Insert(d.src, i, []string{b.String()}, lay))
}

// Remove removes list's element i (for an object, its member i).
func (d *Doc) Remove(list *Node, i int) error {
	return d.apply(Items(list).Remove(d.src, i, i+1, d.layout(list)))
}

// Replace writes v in place of the value n.
func (d *Doc) Replace(n, v *Node) error {
	var b strings.Builder
	d.style.render(&b, v, d.lineIndent(n.Start))
	return d.apply(splice.Edit{Start: n.Start, End: n.End, Text: b.String()})
}

func (d *Doc) apply(e splice.Edit) error {
	src, err := splice.Apply(d.src, e)
	if err != nil {
		return err
	}
	root, err := Parse([]byte(src))
	if err != nil {
		return fmt.Errorf("the edit would not parse: %w", err)
	}
	d.src, d.Root = src, root
	return nil
}

// render writes n in the style, its own line starting at indent.
func (st style) render(b *strings.Builder, n *Node, indent string) {
	if n.Kind == 0 {
		b.WriteString(n.Raw)
		return
	}
	open, close := "[", "]"
	if n.Kind == '{' {
		open, close = "{", "}"
	}
	b.WriteString(open)
	if len(n.Vals) == 0 {
		b.WriteString(close)
		return
	}
	inner := indent + st.unit
	for i, v := range n.Vals {
		switch {
		case i > 0 && st.pretty:
			b.WriteByte(',')
		case i > 0:
			b.WriteString(st.comma)
		}
		if st.pretty {
			b.WriteString(st.newline)
			b.WriteString(inner)
		}
		if n.Kind == '{' {
			b.WriteString(n.RawKeys[i])
			b.WriteString(st.colon)
		}
		st.render(b, v, inner)
	}
	if st.pretty {
		b.WriteString(st.newline)
		b.WriteString(indent)
	}
	b.WriteString(close)
}
