package expand

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// A template is a JSON document — a proposed tool call's arguments — in
// which some objects are nodes that expansion replaces:
//
//	{"$ref": "ID", ...}          a reference, as resolve takes it: becomes a
//	                             JSON string holding the selection; with
//	                             "as": "value" on a pointer, the selected
//	                             JSON value itself, its lexeme kept
//	{"$concat": [part, ...]}     one JSON string: the text of each part in
//	                             order; a part is a string (literal text) or
//	                             a reference (not "as": "value")
//	{"$literal": X}              X, its bytes unchanged, never expanded
//
// Everything else is data and is copied byte for byte, whitespace
// included. What a node holds is never walked for nodes: a reference
// inside $literal's X, or inside a value a reference selects, is text.

// NodeKind is what a node of a template is.
type NodeKind uint8

const (
	NodeRef     NodeKind = iota + 1 // {"$ref": ...}
	NodeConcat                      // {"$concat": [...]}
	NodeLiteral                     // {"$literal": X}
)

// Node is an object of a template that expansion replaces.
type Node struct {
	// Path is the RFC 6901 pointer to the node in the template.
	Path string
	Kind NodeKind
	// Start and End delimit the node's bytes in the template.
	Start, End int
	// Parts are a reference node's one reference, or a $concat's parts in
	// order.
	Parts []Part
	// LitStart and LitEnd delimit X of a $literal in the template.
	LitStart, LitEnd int
}

// Part is a piece of a node's text: a reference, or literal text.
type Part struct {
	// Path is the pointer to the part in the template: the node's own for
	// a reference node, ".../$concat/N" for a $concat's part.
	Path  string
	IsRef bool
	Ref   Ref
	// Text is a literal part's text, decoded from its JSON string.
	Text []byte
	at   int // offset of the part in the template
}

// Failure is a node that cannot be expanded: where it is in the template,
// and why.
type Failure struct {
	Path    string      `json:"path"`
	Code    retain.Code `json:"code"`
	Message string      `json:"message"`
	at      int         // where in the template: failures are listed in document order
}

func failure(at int, path string, err error) Failure {
	return Failure{Path: path, Code: retain.CodeOf(err), Message: err.Error(), at: at}
}

// Refusal is the error of a template that was not expanded, carrying every
// failure. It is wrapped in a retain.Error with code expand_refused:
// errors.As(err, &refusal) finds it.
type Refusal struct{ Failures []Failure }

func (r *Refusal) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nothing was expanded: %s, at ", plural(int64(len(r.Failures)), "failure"))
	for i, f := range r.Failures {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(r.Failures)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q (%s)", f.Path, f.Code)
	}
	b.WriteString("; correct every failing node and send the whole template again")
	return b.String()
}

// ErrorDetails returns the failures, for a JSON rendering of the error
// that carries them beside its code and message: {"failures": [...]}.
func (r *Refusal) ErrorDetails() map[string]any { return map[string]any{"failures": r.Failures} }

// refuse returns the error of a refused expansion.
func refuse(f []Failure) error {
	return &retain.Error{Code: retain.CodeExpandRefused, Err: &Refusal{Failures: f}}
}

// Template is a parsed template: its bytes, its nodes in document order and
// the nodes that are malformed.
type Template struct {
	Src   []byte
	Nodes []Node
	// Failures are the malformed nodes: expanding the template is refused
	// with them (and any reference that does not resolve).
	Failures []Failure
	// orphans are the references of $concat nodes that are malformed in
	// another part: they expand nothing but are checked, so that a refusal
	// lists every failure at once.
	orphans []Part
}

// ParseTemplate reads a template. A document that is not JSON (or is
// nested deeper than MaxTemplateDepth) is a usage error: there is nothing
// to expand. Malformed nodes are not errors here but Failures, so that
// every one of them is reported at once.
func ParseTemplate(src []byte) (*Template, error) {
	w := &walk{src: src}
	if err := w.document(); err != nil {
		return nil, err
	}
	return &Template{Src: src, Nodes: w.nodes, Failures: w.fails, orphans: w.orphans}, nil
}

func tmplErr(format string, args ...any) error {
	return retain.Errorf(retain.CodeBadReference, format, args...)
}

// nodeHelp is appended to messages about malformed nodes.
const nodeHelp = `; a template node is {"$ref": "ID", ...} (as resolve takes it, plus "as": "value" on a pointer), {"$concat": ["text", {"$ref": ...}, ...]} or {"$literal": X}`

// node interprets the object src[start:end], whose members ms include a
// node key, and records it as a node or a failure.
func (w *walk) node(start, end int, ms []member) {
	path := w.pathString()
	fail := func(err error) { w.fails = append(w.fails, failure(start, path, err)) }
	var kinds [keyLiteral + 1]int
	for _, m := range ms {
		kinds[m.key]++
	}
	if (kinds[keyRef] > 0 || kinds[keyList] > 0) && (kinds[keyConcat] > 0 || kinds[keyLiteral] > 0) || kinds[keyConcat] > 0 && kinds[keyLiteral] > 0 {
		fail(tmplErr("an object is one node: it holds one of \"$ref\", \"$concat\" and \"$literal\", not several%s", nodeHelp))
		return
	}
	switch {
	case kinds[keyConcat] > 0 || kinds[keyLiteral] > 0:
		name := "$concat"
		if kinds[keyLiteral] > 0 {
			name = "$literal"
		}
		if len(ms) > 1 {
			if kinds[keyConcat] > 1 || kinds[keyLiteral] > 1 {
				fail(tmplErr("key %q occurs more than once in the node", name))
				return
			}
			other := ms[0]
			if other.key != keyNone {
				other = ms[1]
			}
			fail(tmplErr("%q takes no other keys, and this node has %q%s", name, w.src[other.nameStart:other.nameEnd], nodeHelp))
			return
		}
		m := ms[0]
		if m.key == keyLiteral {
			w.nodes = append(w.nodes, Node{Path: path, Kind: NodeLiteral, Start: start, End: end, LitStart: m.valueStart, LitEnd: m.valueEnd})
			return
		}
		w.concat(path, start, end, m)
	default:
		ref, err := ParseRef(w.src[start:end])
		if err == nil && ref.Kind == RefList {
			err = tmplErr("\"$list_results\" is not allowed in a template: a template composes selections of values; list the run with retval catalogue, or {\"$list_results\": N} through resolve")
		}
		if err != nil {
			fail(err)
			return
		}
		w.nodes = append(w.nodes, Node{Path: path, Kind: NodeRef, Start: start, End: end, Parts: []Part{{Path: path, IsRef: true, Ref: ref, at: start}}})
	}
}

// concat interprets {"$concat": [...]}, whose one member is m.
func (w *walk) concat(path string, start, end int, m member) {
	concatTok := pathTok{start: m.nameStart, end: m.nameEnd, isName: true}
	if c := w.src[m.valueStart]; c != '[' {
		w.fails = append(w.fails, failure(start, path, tmplErr("\"$concat\" takes an array of strings and references, not %s %s%s", article(jsonscan.KindOf(c)), jsonscan.KindOf(c), nodeHelp)))
		return
	}
	n := Node{Path: path, Kind: NodeConcat, Start: start, End: end}
	ok := true
	for i, el := range elements(w.src, m.valueStart) {
		p := w.pathString(concatTok, pathTok{index: i})
		part, err := w.part(p, el[0], el[1])
		part.at = el[0]
		if err != nil {
			w.fails = append(w.fails, failure(el[0], p, err))
			ok = false
			continue
		}
		n.Parts = append(n.Parts, part)
	}
	if !ok {
		for _, part := range n.Parts {
			if part.IsRef {
				w.orphans = append(w.orphans, part)
			}
		}
		return
	}
	w.nodes = append(w.nodes, n)
}

// part interprets one element of a $concat, the bytes src[start:end].
func (w *walk) part(path string, start, end int) (Part, error) {
	el := w.src[start:end]
	switch k := jsonscan.KindOf(el[0]); k {
	case KindString:
		// The text goes into the output's JSON string and its digest into
		// the summary: decoded strictly, and refused unless UTF-8, so that
		// neither holds a substituted character.
		body := el[1 : len(el)-1]
		text, at, err := jsonstr.AppendStrict(nil, body)
		switch {
		case errors.Is(err, jsonstr.ErrSurrogate):
			return Part{}, notUTF8(&NotUTF8Error{Template: true, Offset: int64(start + 1 + at), Escape: string(body[at : at+6])})
		case err != nil:
			return Part{}, tmplErr("%v", err)
		}
		if err := checkUTF8("", int64(start+1), body); err != nil {
			var e *NotUTF8Error
			errors.As(err, &e)
			e.Template = true
			return Part{}, err
		}
		return Part{Path: path, Text: text}, nil
	case KindObject:
		ref, err := ParseRef(el)
		if err != nil {
			var m map[string]json.RawMessage
			if json.Unmarshal(el, &m) == nil && m["$ref"] == nil && (m["$concat"] != nil || m["$literal"] != nil) {
				return Part{}, tmplErr("a $concat part is a string or a reference, never a $concat or $literal: put the parts in this $concat, or write the text as a string")
			}
			return Part{}, err
		}
		switch {
		case ref.Kind == RefList:
			return Part{}, tmplErr("\"$list_results\" is not allowed in a template: a template composes selections of values")
		case ref.As == AsValue:
			return Part{}, tmplErr("a $concat part is text, so \"as\": \"value\" (which inserts a JSON value) cannot be one; use \"as\": \"lexeme\" for the value's bytes or \"string\" for a string's text")
		}
		return Part{Path: path, IsRef: true, Ref: ref}, nil
	default:
		return Part{}, tmplErr("a $concat part must be a string or a {\"$ref\": ...} object, not %s %s", article(k), k)
	}
}
