package expand

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// Prefix starts a string argument of an agent's tool call that stands for
// expanded text: "$expand:" followed by one JSON node of the template
// grammar — {"$ref": …}, {"$concat": […]} or {"$literal": "…"} — encoded
// in the string as any JSON text is. A string that merely contains it
// later on is text.
const Prefix = "$expand:"

// Input is an agent tool call's arguments after ExpandInput: the expanded
// document and what each reference in it became.
type Input struct {
	// Doc is the expanded arguments; the input itself, unchanged, when it
	// holds no reference (Fields is then empty).
	Doc []byte
	// Fields are the arguments references expanded, in document order:
	// the path of each in the arguments (an RFC 6901 pointer), and the
	// length and SHA-256 of its expanded text (a "$literal" string has no
	// digest: it is what the model wrote).
	Fields []Expansion
	// Written is the bytes of the reference forms as the model wrote them
	// (their JSON in the arguments); Expanded the bytes of the text they
	// stand for. Expanded - Written is what references saved the model
	// generating.
	Written, Expanded int64
}

// InputOptions are the forms an agent lets through its tool calls.
type InputOptions struct {
	// Objects accepts the bare node objects too, where the agent passes
	// objects to the tool unchecked (MCP tools, opencode): {"$ref": "ID",
	// …} with a clean value id, {"$concat": […]}. An object that is not
	// such a node — a JSON Schema's {"$ref": "#/definitions/x"}, any
	// object where Objects is off — is data, copied as it is.
	Objects bool
}

// ExpandInput expands the references in an agent tool call's arguments
// src (one JSON document): every string whose text begins with Prefix,
// and with o.Objects the bare node objects. All or nothing, as Expand:
// any reference that does not resolve, or a Prefix string that is not
// one node, refuses the whole call, the error (expand_refused, with a
// Refusal) naming every failure with its path in the arguments
// ("/content/$concat/1"). Everything that is not a reference is copied
// with its original bytes. Arguments that are not one JSON document are a
// usage error: an integration passes them on untouched.
func (x *Expander) ExpandInput(src []byte, o InputOptions) (*Input, error) {
	s := &inputScan{src: src, objects: o.Objects}
	if _, err := ParseTemplate(src); err != nil {
		return nil, err // not JSON: nothing to expand
	}
	s.value(0, "")
	if len(s.refs) == 0 {
		return &Input{Doc: src}, nil
	}
	tmpl, fails := s.template()
	in := &Input{}
	for _, r := range s.refs {
		in.Written += int64(r.end - r.start)
	}
	t, err := ParseTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	for _, n := range t.Nodes {
		if n.Kind == NodeLiteral && s.isRef(n.Path) {
			// $expand:{"$literal": "…"}: the text the model wrote.
			text, _ := jsonstr.AppendDecoded(nil, tmpl[n.LitStart+1:n.LitEnd-1])
			in.Fields = append(in.Fields, Expansion{Path: n.Path, Bytes: int64(len(text))})
			in.Expanded += int64(len(text))
		}
	}
	if len(fails) > 0 {
		// Plan the rest all the same, so the refusal names every failure.
		if p, err := x.Plan(t); err == nil {
			p.Close()
		} else if r := (*Refusal)(nil); errors.As(err, &r) {
			fails = append(fails, r.Failures...)
		}
		sortByPath(fails, s)
		return nil, refuse(fails)
	}
	p, err := x.Plan(t)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	p.Digests = true
	var out buffer
	if _, err := p.WriteTo(&out); err != nil {
		return nil, err
	}
	x.logComposed(p.composed)
	for _, e := range p.Expansions() {
		in.Fields = append(in.Fields, e)
		in.Expanded += e.Bytes
	}
	sortFields(in.Fields, s)
	in.Doc = make([]byte, 0, out.n)
	for _, c := range out.chunks {
		in.Doc = append(in.Doc, c...)
	}
	return in, nil
}

// Unexpanded returns the paths of the strings of src (one JSON document)
// that still begin with Prefix: a tool call that ran with its references
// as written, where no integration expanded them (the hook missing or
// not trusted). nil when src is not JSON or has none.
func Unexpanded(src []byte) []string {
	if _, err := ParseTemplate(src); err != nil {
		return nil
	}
	s := &inputScan{src: src}
	s.value(0, "")
	var paths []string
	for _, r := range s.refs {
		if r.inner != nil {
			paths = append(paths, r.path)
		}
	}
	return paths
}

// Summary is the line an integration shows the model after it expanded a
// call's references: each field's path, bytes and SHA-256 — the
// `--summary` form, what the model can check the tool received without
// reading it back.
func (in *Input) Summary() string {
	if len(in.Fields) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[retval expanded ")
	for i, f := range in.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		path := f.Path
		if path == "" {
			path = "/"
		}
		fmt.Fprintf(&b, "%s: %d bytes", path, f.Bytes)
		if f.SHA256 != "" {
			b.WriteString(", sha256:" + f.SHA256)
		}
	}
	b.WriteString("]")
	return b.String()
}

// inputRef is a reference form found in the arguments: a Prefix string
// (inner is the node the string holds) or a bare node object (inner nil,
// its bytes are the node).
type inputRef struct {
	start, end int
	path       string
	inner      []byte
}

// inputScan finds the reference forms of a tool call's arguments (already
// checked to be one JSON document).
type inputScan struct {
	src     []byte
	objects bool
	refs    []inputRef
	// data are the objects that have a node key but are data (bare nodes
	// where objects are off, or not of a bare node's form): the template
	// holds them as {"$literal": …}.
	data [][2]int
}

func (s *inputScan) isRef(path string) bool {
	for _, r := range s.refs {
		if r.path == path {
			return true
		}
	}
	return false
}

// value scans the value at src[i:], whose path is path, and returns its
// end.
func (s *inputScan) value(i int, path string) int {
	for isSpace(s.src[i]) {
		i++
	}
	end := skip(s.src, i)
	switch s.src[i] {
	case '"':
		body := s.src[i+1 : end-1]
		if !bytes.HasPrefix(body, []byte(Prefix)) && !bytes.Contains(body, []byte(`\u`)) {
			return end // the common case, decoded by nobody
		}
		text, err := jsonstr.AppendDecoded(nil, body)
		if err == nil && bytes.HasPrefix(text, []byte(Prefix)) {
			s.refs = append(s.refs, inputRef{start: i, end: end, path: path, inner: text[len(Prefix):]})
		}
	case '[':
		for k, el := range elements(s.src, i) {
			s.value(el[0], path+"/"+strconv.Itoa(k))
		}
	case '{':
		ms := members(s.src, i)
		node := false
		for _, m := range ms {
			if nameKey(m.name) != keyNone {
				node = true
			}
		}
		if !node {
			for _, m := range ms {
				s.value(m.value, path+"/"+escapeToken(string(m.name)))
			}
			return end
		}
		if s.objects && bareNode(s.src[i:end], ms) {
			s.refs = append(s.refs, inputRef{start: i, end: end, path: path})
		} else {
			s.data = append(s.data, [2]int{i, end})
		}
	}
	return end
}

// bareNode reports whether the object obj, with members ms, is a node an
// agent's arguments may hold bare: a reference whose "$ref" is a clean
// value id (what stubs show), or a "$concat". Objects of other shapes that
// use those names (JSON Schema's "$ref": "#/…") are data.
func bareNode(obj []byte, ms []objMember) bool {
	for _, m := range ms {
		switch nameKey(m.name) {
		case keyConcat:
			return len(ms) == 1
		case keyRef:
			id, err := jsonstr.AppendDecoded(nil, bytes.TrimSuffix(bytes.TrimPrefix(m.raw, []byte(`"`)), []byte(`"`)))
			return err == nil && len(m.raw) > 1 && m.raw[0] == '"' && retain.IsClean(string(id))
		}
	}
	return false
}

// template is the arguments as an expand template: each Prefix string
// replaced by the node it holds, each data object that looks like a node
// wrapped in {"$literal": …}. A Prefix string that does not hold one node
// of the right form becomes an empty "$literal" and a failure.
func (s *inputScan) template() ([]byte, []Failure) {
	type edit struct {
		start, end int
		with       []byte
	}
	var edits []edit
	var fails []Failure
	for _, r := range s.refs {
		if r.inner == nil {
			continue
		}
		if err := checkInner(r.inner); err != nil {
			fails = append(fails, Failure{Path: r.path, Code: retain.CodeOf(err), Message: err.Error(), at: r.start})
			edits = append(edits, edit{r.start, r.end, []byte(`{"$literal":""}`)})
			continue
		}
		edits = append(edits, edit{r.start, r.end, r.inner})
	}
	for _, d := range s.data {
		w := append([]byte(`{"$literal":`), s.src[d[0]:d[1]]...)
		edits = append(edits, edit{d[0], d[1], append(w, '}')})
	}
	sortEdits := func(i, j int) bool { return edits[i].start < edits[j].start }
	for i := 1; i < len(edits); i++ { // few: insertion sort
		for j := i; j > 0 && sortEdits(j, j-1); j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	var out []byte
	at := 0
	for _, e := range edits {
		out = append(out, s.src[at:e.start]...)
		out = append(out, e.with...)
		at = e.end
	}
	return append(out, s.src[at:]...), fails
}

// innerHelp says what a Prefix string holds.
const innerHelp = `: after "$expand:" comes one JSON node, {"$ref": "ID", …}, {"$concat": [text or reference, …]} or {"$literal": "text"}`

// checkInner checks that the text after Prefix is one node whose
// expansion is text, as a string argument needs.
func checkInner(inner []byte) error {
	t, err := ParseTemplate(inner)
	if err != nil {
		return tmplErr("%s%s", strings.TrimPrefix(err.Error(), "the template is "), innerHelp)
	}
	if len(t.Failures) > 0 {
		return tmplErr("%s", t.Failures[0].Message)
	}
	start := 0
	for isSpace(inner[start]) {
		start++
	}
	if len(t.Nodes) != 1 || t.Nodes[0].Start != start {
		return tmplErr("not a node%s", innerHelp)
	}
	n := t.Nodes[0]
	switch {
	case n.Kind == NodeLiteral && inner[n.LitStart] != '"':
		return tmplErr(`"$literal" after "$expand:" takes a string: the argument is text`)
	case n.Kind == NodeRef && n.Parts[0].Ref.As == AsValue:
		return tmplErr(`"as": "value" inserts a JSON value, and after "$expand:" the argument is text: drop it (the lexeme as text is "as": "lexeme")`)
	}
	return nil
}

// objMember is one member of an object: its decoded name and its value.
type objMember struct {
	name  []byte
	raw   []byte // the value's bytes
	value int    // where the value starts
}

// members returns the members of the checked object starting at i.
func members(src []byte, i int) []objMember {
	var out []objMember
	for i++; ; {
		for isSpace(src[i]) || src[i] == ',' {
			i++
		}
		if src[i] == '}' {
			return out
		}
		nameEnd := skip(src, i)
		name, err := jsonstr.AppendDecoded(nil, src[i+1:nameEnd-1])
		if err != nil {
			name = src[i+1 : nameEnd-1]
		}
		i = nameEnd
		for isSpace(src[i]) || src[i] == ':' {
			i++
		}
		end := skip(src, i)
		out = append(out, objMember{name: name, raw: src[i:end], value: i})
		i = end
	}
}

// nameKey is the node key a decoded member name is, if any.
func nameKey(name []byte) nodeKey {
	if len(name) == 0 || name[0] != '$' || len(name) > longestKey {
		return keyNone
	}
	return nodeKeys[string(name)]
}

// sortByPath orders failures by where their reference form stands in the
// arguments (the template's offsets differ from the arguments').
func sortByPath(f []Failure, s *inputScan) {
	order := func(path string) int {
		for k, r := range s.refs {
			if path == r.path || strings.HasPrefix(path, r.path+"/") {
				return k
			}
		}
		return len(s.refs)
	}
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && order(f[j].Path) < order(f[j-1].Path); j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// sortFields orders expansions as their reference forms stand.
func sortFields(f []Expansion, s *inputScan) {
	order := func(path string) int {
		for k, r := range s.refs {
			if path == r.path {
				return k
			}
		}
		return len(s.refs)
	}
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && order(f[j].Path) < order(f[j-1].Path); j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// LogInput records in the run's read log that an integration (via: "hook
// claude-code", "proxy", …) expanded the references of a call of tool:
// the bytes the model wrote and the bytes they stood for, which `retval
// stats` reports as output saved. A call without references is not
// recorded.
func (x *Expander) LogInput(via, tool string, in *Input) {
	if in == nil || len(in.Fields) == 0 || x.Store == nil {
		return
	}
	run, err := retain.Sanitize(x.Run)
	if err != nil {
		return
	}
	x.Store.LogRead(run, retain.Read{Op: retain.OpReference, Via: via, Tool: tool, Bytes: in.Written, Size: in.Expanded})
}

// Instructions teaches a model the reference form, once a session, where
// an integration that expands it runs (a hook's session start, the MCP
// proxy's initialize): never in a file that may be read where none runs.
// About 170 tokens.
const Instructions = `retval: to reuse text that a tool result kept by retval holds (a stub "[retained #ID] …") in a tool call without typing it again, write a string argument as $expand: followed by JSON:
  $expand:{"$ref":"ID","lines":[A,B]}   lines A-B of value ID, exactly (also "bytes":[S,E] half-open, or "pointer":"/a/0" for JSON)
  $expand:{"$concat":["new text\n",{"$ref":"ID","lines":[2100,2399]},"more\n"]}   text and selections joined
  $expand:{"$literal":"$expand:…"}   a string that must itself begin with $expand:
It is replaced by the exact text before the tool runs and you are told its bytes and sha256; a reference that fails refuses the call, naming it. Only a string that begins with $expand: is expanded.`
