// Package jsondoc edits JSON documents a person or a program keeps (a
// settings file, an MCP client's server list) without disturbing them: it
// keeps the order of members and the exact lexeme of every string, number
// and literal, and where every parsed value was in the text, so an edit can
// reprint the whole document (Print) or splice new text over one value.
package jsondoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Node is a JSON value. A document written as JSON.stringify writes it
// (with an indent) prints back byte for byte.
type Node struct {
	Kind    byte     // '{', '[' or 0 for a scalar
	Raw     string   // a scalar's lexeme
	Keys    []string // an object's member names, decoded
	RawKeys []string // and as written
	// KeyStarts are the byte offsets of an object's member names in the
	// text it was parsed from.
	KeyStarts []int
	Vals      []*Node // an object's member values or an array's elements
	// Start and End are the byte offsets of the value in the text it was
	// parsed from (End exclusive); a node made by an edit has neither.
	Start, End int
}

// Parse parses a JSON document. A text that is not JSON is a
// *SyntaxError; a key that occurs twice in one object (a reader keeps one
// of them, and which is not certain) is a *DuplicateKeyError.
func Parse(b []byte) (*Node, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		if err == nil {
			err = errors.New("not one JSON value")
		}
		se := &SyntaxError{Err: err, Line: 1, Column: 1}
		var jerr *json.SyntaxError
		if errors.As(err, &jerr) {
			se.Line, se.Column = position(b, jerr.Offset)
		} else {
			se.Line, se.Column = position(b, int64(len(b)))
		}
		return nil, se
	}
	p := &parser{s: string(b)}
	p.space()
	return p.value()
}

// SyntaxError is a text that is not JSON, with where the reading stopped.
type SyntaxError struct {
	Err          error // encoding/json's
	Line, Column int   // 1-based; the column counts bytes
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("not valid JSON (line %d, column %d): %v", e.Line, e.Column, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// DuplicateKeyError is an object that names one key twice.
type DuplicateKeyError struct{ Key string }

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("the key %q occurs twice in one object", e.Key)
}

// position is the line and column of the byte before offset off (where
// encoding/json stopped reading).
func position(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off > 0 {
		off--
	}
	line, col = 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// value parses one value of a document already known to be valid.
func (p *parser) value() (*Node, error) {
	start := p.i
	switch c := p.s[p.i]; c {
	case '{', '[':
		n := &Node{Kind: c, Start: start}
		p.i++
		p.space()
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		seen := map[string]bool{}
		for p.s[p.i] != end {
			if c == '{' {
				n.KeyStarts = append(n.KeyStarts, p.i)
				rk := p.str()
				var k string
				json.Unmarshal([]byte(rk), &k)
				if seen[k] {
					return nil, &DuplicateKeyError{Key: k}
				}
				seen[k] = true
				n.Keys, n.RawKeys = append(n.Keys, k), append(n.RawKeys, rk)
				p.space()
				p.i++ // :
				p.space()
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.Vals = append(n.Vals, v)
			p.space()
			if p.s[p.i] == ',' {
				p.i++
				p.space()
			}
		}
		p.i++
		n.End = p.i
		return n, nil
	case '"':
		return &Node{Raw: p.str(), Start: start, End: p.i}, nil
	default:
		j := p.i
		for j < len(p.s) && strings.IndexByte(",]} \t\r\n", p.s[j]) < 0 {
			j++
		}
		n := &Node{Raw: p.s[p.i:j], Start: start, End: j}
		p.i = j
		return n, nil
	}
}

// str returns the string lexeme at p.i, quotes included.
func (p *parser) str() string {
	j := p.i + 1
	for p.s[j] != '"' {
		if p.s[j] == '\\' {
			j++
		}
		j++
	}
	s := p.s[p.i : j+1]
	p.i = j + 1
	return s
}

// Print writes n as JSON.stringify(n, null, indent) does, at nesting depth
// depth.
func (n *Node) Print(b *strings.Builder, indent string, depth int) {
	st := style{newline: "\n", unit: indent, colon: ": ", pretty: true}
	st.render(b, n, strings.Repeat(indent, depth))
}

// Indent is the indent unit of a JSON text: the white space that starts
// its first indented line, or two spaces when it has none.
func Indent(b []byte) string {
	for _, l := range strings.Split(string(b), "\n")[1:] {
		if t := strings.TrimLeft(l, " \t"); t != "" && len(t) < len(l) {
			return l[:len(l)-len(t)]
		}
	}
	return "  "
}

// Get returns the member k of an object, or nil (also when n is nil).
func (n *Node) Get(k string) *Node {
	if n == nil {
		return nil
	}
	for i, key := range n.Keys {
		if key == k {
			return n.Vals[i]
		}
	}
	return nil
}

// Set sets member k of an object, appending it when new.
func (n *Node) Set(k string, v *Node) {
	for i, key := range n.Keys {
		if key == k {
			n.Vals[i] = v
			return
		}
	}
	n.Keys = append(n.Keys, k)
	n.RawKeys = append(n.RawKeys, Quote(k))
	n.KeyStarts = append(n.KeyStarts, -1)
	n.Vals = append(n.Vals, v)
}

// Del removes member k of an object.
func (n *Node) Del(k string) {
	for i, key := range n.Keys {
		if key == k {
			n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
			n.RawKeys = append(n.RawKeys[:i], n.RawKeys[i+1:]...)
			if i < len(n.KeyStarts) {
				n.KeyStarts = append(n.KeyStarts[:i], n.KeyStarts[i+1:]...)
			}
			n.Vals = append(n.Vals[:i], n.Vals[i+1:]...)
			return
		}
	}
}

// Text is a scalar's value when it is a string.
func (n *Node) Text() (string, bool) {
	if n == nil || n.Kind != 0 || !strings.HasPrefix(n.Raw, `"`) {
		return "", false
	}
	var s string
	err := json.Unmarshal([]byte(n.Raw), &s)
	return s, err == nil
}

// String is a string node holding s.
func String(s string) *Node { return &Node{Raw: Quote(s)} }

// Quote is s as a JSON string, escaped as JSON.stringify escapes it.
func Quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// ErrShape is a document whose structure is not what the editor expects.
var ErrShape = errors.New("unexpected shape")

// ObjectAt returns the object member k of n, creating it when absent; an
// existing member that is not an object is an error naming path.
func ObjectAt(n *Node, k, path string) (*Node, error) {
	v := n.Get(k)
	if v == nil {
		v = &Node{Kind: '{'}
		n.Set(k, v)
	}
	if v.Kind != '{' {
		return nil, fmt.Errorf("%w: %s is not an object", ErrShape, path)
	}
	return v, nil
}

// ArrayAt is ObjectAt for an array.
func ArrayAt(n *Node, k, path string) (*Node, error) {
	v := n.Get(k)
	if v == nil {
		v = &Node{Kind: '['}
		n.Set(k, v)
	}
	if v.Kind != '[' {
		return nil, fmt.Errorf("%w: %s is not an array", ErrShape, path)
	}
	return v, nil
}
