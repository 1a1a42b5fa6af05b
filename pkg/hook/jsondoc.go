package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// node is a JSON value that keeps what an edit must not change: the order
// of members and the exact lexeme of every string, number and literal. A
// settings file written as Claude Code writes it (JSON.stringify with an
// indent) prints back byte for byte.
type node struct {
	kind  byte     // '{', '[' or 0 for a scalar
	raw   string   // a scalar's lexeme
	keys  []string // an object's member names, decoded
	rawKs []string // and as written
	vals  []*node  // an object's member values or an array's elements
}

// parseDoc parses a JSON document; duplicate keys are refused (a reader
// keeps one of them, and which is not certain).
func parseDoc(b []byte) (*node, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	p := &parser{s: string(b)}
	p.space()
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	return n, nil
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
func (p *parser) value() (*node, error) {
	switch c := p.s[p.i]; c {
	case '{', '[':
		n := &node{kind: c}
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
				n.keys, n.rawKs = append(n.keys, k), append(n.rawKs, rk)
				p.space()
				p.i++ // :
				p.space()
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			p.space()
			if p.s[p.i] == ',' {
				p.i++
				p.space()
			}
		}
		p.i++
		return n, nil
	case '"':
		return &node{raw: p.str()}, nil
	default:
		j := p.i
		for j < len(p.s) && strings.IndexByte(",]} \t\r\n", p.s[j]) < 0 {
			j++
		}
		n := &node{raw: p.s[p.i:j]}
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

// print writes n as JSON.stringify(n, null, indent) does.
func (n *node) print(b *strings.Builder, indent string, depth int) {
	if n.kind == 0 {
		b.WriteString(n.raw)
		return
	}
	open, close := "[", "]"
	if n.kind == '{' {
		open, close = "{", "}"
	}
	b.WriteString(open)
	if len(n.vals) == 0 {
		b.WriteString(close)
		return
	}
	for i, v := range n.vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, depth+1))
		if n.kind == '{' {
			b.WriteString(n.rawKs[i])
			b.WriteString(": ")
		}
		v.print(b, indent, depth+1)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(indent, depth))
	b.WriteString(close)
}

// get returns the member k of an object, or nil.
func (n *node) get(k string) *node {
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return nil
}

// set sets member k of an object, appending it when new.
func (n *node) set(k string, v *node) {
	for i, key := range n.keys {
		if key == k {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, k)
	n.rawKs = append(n.rawKs, quote(k))
	n.vals = append(n.vals, v)
}

// del removes member k of an object.
func (n *node) del(k string) {
	for i, key := range n.keys {
		if key == k {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.rawKs = append(n.rawKs[:i], n.rawKs[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
			return
		}
	}
}

// text is a scalar's value when it is a string.
func (n *node) text() (string, bool) {
	if n == nil || n.kind != 0 || !strings.HasPrefix(n.raw, `"`) {
		return "", false
	}
	var s string
	err := json.Unmarshal([]byte(n.raw), &s)
	return s, err == nil
}

func strNode(s string) *node { return &node{raw: quote(s)} }

// quote is s as a JSON string, escaped as JSON.stringify escapes it.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// errShape is a settings file whose structure retval cannot edit safely.
var errShape = errors.New("unexpected shape")

// objectAt returns the object member k of n, creating it when absent; an
// existing member that is not an object is an error naming path.
func objectAt(n *node, k, path string) (*node, error) {
	v := n.get(k)
	if v == nil {
		v = &node{kind: '{'}
		n.set(k, v)
	}
	if v.kind != '{' {
		return nil, fmt.Errorf("%w: %s is not an object", errShape, path)
	}
	return v, nil
}

// arrayAt is objectAt for an array.
func arrayAt(n *node, k, path string) (*node, error) {
	v := n.get(k)
	if v == nil {
		v = &node{kind: '['}
		n.set(k, v)
	}
	if v.kind != '[' {
		return nil, fmt.Errorf("%w: %s is not an array", errShape, path)
	}
	return v, nil
}
