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
	Vals    []*Node  // an object's member values or an array's elements
	// Start and End are the byte offsets of the value in the text it was
	// parsed from (End exclusive); a node made by an edit has neither.
	Start, End int
}

// Parse parses a JSON document; duplicate keys are refused (a reader
// keeps one of them, and which is not certain).
func Parse(b []byte) (*Node, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	p := &parser{s: string(b)}
	p.space()
	return p.value()
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
				rk := p.str()
				var k string
				json.Unmarshal([]byte(rk), &k)
				if seen[k] {
					return nil, fmt.Errorf("the key %q occurs twice in one object: remove one", k)
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
	for i, v := range n.Vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, depth+1))
		if n.Kind == '{' {
			b.WriteString(n.RawKeys[i])
			b.WriteString(": ")
		}
		v.Print(b, indent, depth+1)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(indent, depth))
	b.WriteString(close)
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

// Get returns the member k of an object, or nil.
func (n *Node) Get(k string) *Node {
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
	n.Vals = append(n.Vals, v)
}

// Del removes member k of an object.
func (n *Node) Del(k string) {
	for i, key := range n.Keys {
		if key == k {
			n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
			n.RawKeys = append(n.RawKeys[:i], n.RawKeys[i+1:]...)
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
