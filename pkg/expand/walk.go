package expand

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// MaxTemplateDepth bounds the nesting of a template, as encoding/json
// bounds the documents it decodes: a deeper template is not valid JSON.
const MaxTemplateDepth = 10000

// MaxTemplateSize bounds a template. A template carries references and
// the few lines a model writes, not content: 16 MiB is far beyond any tool
// call's arguments and keeps the template, held in memory, small next to
// the output it may expand to.
const MaxTemplateSize = 16 << 20

// nodeKey is a member name that makes an object a template node.
type nodeKey uint8

const (
	keyNone nodeKey = iota
	keyRef
	keyList
	keyConcat
	keyLiteral
)

var nodeKeys = map[string]nodeKey{"$ref": keyRef, "$list_results": keyList, "$concat": keyConcat, "$literal": keyLiteral}

// longestKey is the length of the longest name in nodeKeys.
const longestKey = len("$list_results")

// member is one member of an object being walked: its name's body (between
// the quotes, still escaped) and its value's bytes.
type member struct {
	key                  nodeKey
	nameStart, nameEnd   int
	valueStart, valueEnd int
}

// pathTok is one step of the path to the value being walked: an array
// index, or a member whose name's body is src[start:end].
type pathTok struct {
	index      int
	start, end int
	isName     bool
}

// walk reads a template: it checks that src is exactly one JSON document
// (as encoding/json.Valid does, nesting included) and finds the objects
// that are template nodes, outermost only: what a node holds is its data,
// never walked for nodes of its own. It reads src once, front to back,
// and builds nothing of the document but the nodes.
type walk struct {
	src     []byte
	pos     int
	depth   int
	path    []pathTok
	members []member // the members of every object being walked, innermost last
	nodes   []Node
	fails   []Failure
	orphans []Part
}

// syntaxError is a template that is not JSON.
func (w *walk) syntax(format string, args ...any) error {
	line := 1 + bytes.Count(w.src[:w.pos], []byte{'\n'})
	col := w.pos - bytes.LastIndexByte(w.src[:w.pos], '\n')
	return retain.Errorf(retain.CodeUsage, "the template is not valid JSON: %s at byte %d (line %d, column %d); send one JSON document, the tool call's arguments", fmt.Sprintf(format, args...), w.pos, line, col)
}

func (w *walk) document() error {
	w.space()
	if w.pos == len(w.src) {
		return retain.Errorf(retain.CodeUsage, "the template is empty: send one JSON document, the tool call's arguments")
	}
	if err := w.value(); err != nil {
		return err
	}
	w.space()
	if w.pos < len(w.src) {
		return w.syntax("%s after the document", describe(w.src[w.pos]))
	}
	return nil
}

func describe(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (w *walk) space() {
	for w.pos < len(w.src) {
		switch w.src[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// value reads the value at pos (no whitespace before it).
func (w *walk) value() error {
	if w.pos == len(w.src) {
		return w.syntax("unexpected end where a value belongs")
	}
	switch c := w.src[w.pos]; c {
	case '{':
		return w.object()
	case '[':
		return w.array()
	case '"':
		_, err := w.str()
		return err
	case 't':
		return w.word("true")
	case 'f':
		return w.word("false")
	case 'n':
		return w.word("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return w.number()
		}
		return w.syntax("%s where a value belongs", describe(c))
	}
}

func (w *walk) word(lit string) error {
	if !strings.HasPrefix(string(w.src[w.pos:min(len(w.src), w.pos+len(lit))]), lit) {
		return w.syntax("not %s, a number, a string, an object or an array", lit)
	}
	w.pos += len(lit)
	return nil
}

func (w *walk) digits() int {
	n := 0
	for w.pos < len(w.src) && w.src[w.pos] >= '0' && w.src[w.pos] <= '9' {
		w.pos++
		n++
	}
	return n
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (w *walk) number() error {
	if w.src[w.pos] == '-' {
		w.pos++
	}
	switch {
	case w.pos < len(w.src) && w.src[w.pos] == '0':
		w.pos++
	case w.digits() == 0:
		return w.syntax("a number without digits")
	}
	if w.pos < len(w.src) && w.src[w.pos] == '.' {
		w.pos++
		if w.digits() == 0 {
			return w.syntax("no digits after a decimal point")
		}
	}
	if w.pos < len(w.src) && (w.src[w.pos] == 'e' || w.src[w.pos] == 'E') {
		w.pos++
		if w.pos < len(w.src) && (w.src[w.pos] == '+' || w.src[w.pos] == '-') {
			w.pos++
		}
		if w.digits() == 0 {
			return w.syntax("no digits in an exponent")
		}
	}
	return nil
}

// str reads a string from its opening quote and reports whether its body
// holds an escape.
func (w *walk) str() (escaped bool, err error) {
	w.pos++
	for {
		for w.pos < len(w.src) {
			c := w.src[w.pos]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			w.pos++
		}
		if w.pos == len(w.src) {
			return false, w.syntax("unterminated string")
		}
		switch c := w.src[w.pos]; {
		case c == '"':
			w.pos++
			return escaped, nil
		case c < 0x20:
			return false, w.syntax("control character %s in a string (write it as an escape)", describe(c))
		}
		escaped = true
		if w.pos+1 == len(w.src) {
			return false, w.syntax("unterminated string")
		}
		switch w.src[w.pos+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			w.pos += 2
		case 'u':
			if jsonstr.UEscape(w.src[w.pos:]) < 0 {
				return false, w.syntax("invalid \\u escape")
			}
			w.pos += 6
		default:
			w.pos++
			return false, w.syntax("invalid escape %s", describe(w.src[w.pos]))
		}
	}
}

func (w *walk) enter() error {
	if w.depth >= MaxTemplateDepth {
		return w.syntax("nesting deeper than %d levels", MaxTemplateDepth)
	}
	w.depth++
	return nil
}

func (w *walk) expect(c byte, what string) error {
	w.space()
	if w.pos == len(w.src) {
		return w.syntax("unexpected end where %s belongs", what)
	}
	if w.src[w.pos] != c {
		return w.syntax("%s where %s belongs", describe(w.src[w.pos]), what)
	}
	w.pos++
	return nil
}

func (w *walk) array() error {
	if err := w.enter(); err != nil {
		return err
	}
	w.pos++
	w.space()
	if w.pos < len(w.src) && w.src[w.pos] == ']' {
		w.pos++
		w.depth--
		return nil
	}
	for i := 0; ; i++ {
		w.path = append(w.path, pathTok{index: i})
		if err := w.value(); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		w.space()
		if w.pos == len(w.src) {
			return w.syntax("unexpected end of an array")
		}
		switch w.src[w.pos] {
		case ',':
			w.pos++
			w.space()
		case ']':
			w.pos++
			w.depth--
			return nil
		default:
			return w.syntax("%s where \",\" or \"]\" belongs", describe(w.src[w.pos]))
		}
	}
}

func (w *walk) object() error {
	if err := w.enter(); err != nil {
		return err
	}
	start := w.pos
	nodes, fails, orphans, mem := len(w.nodes), len(w.fails), len(w.orphans), len(w.members)
	w.pos++
	w.space()
	if w.pos < len(w.src) && w.src[w.pos] == '}' {
		w.pos++
		w.depth--
		return nil
	}
	special := false
	for {
		if w.pos == len(w.src) || w.src[w.pos] != '"' {
			if w.pos == len(w.src) {
				return w.syntax("unexpected end where a member name belongs")
			}
			return w.syntax("%s where a member name belongs", describe(w.src[w.pos]))
		}
		m := member{nameStart: w.pos + 1}
		escaped, err := w.str()
		if err != nil {
			return err
		}
		m.nameEnd = w.pos - 1
		m.key = w.keyOf(m.nameStart, m.nameEnd, escaped)
		special = special || m.key != keyNone
		if err := w.expect(':', `":"`); err != nil {
			return err
		}
		w.space()
		m.valueStart = w.pos
		w.path = append(w.path, pathTok{start: m.nameStart, end: m.nameEnd, isName: true})
		if err := w.value(); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		m.valueEnd = w.pos
		w.members = append(w.members, m)
		w.space()
		if w.pos == len(w.src) {
			return w.syntax("unexpected end of an object")
		}
		c := w.src[w.pos]
		w.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			w.pos--
			return w.syntax("%s where \",\" or \"}\" belongs", describe(c))
		}
		w.space()
	}
	w.depth--
	if special {
		// A node's members are its data: forget what was found in them.
		w.nodes, w.fails, w.orphans = w.nodes[:nodes], w.fails[:fails], w.orphans[:orphans]
		w.node(start, w.pos, w.members[mem:])
	}
	w.members = w.members[:mem]
	return nil
}

// keyOf says whether the member name whose body is src[start:end] names a
// node. Names are compared decoded ("\u0024ref" is "$ref"), as
// encoding/json compares them; a decoded name is at least a sixth of its
// body, so only short bodies are decoded.
func (w *walk) keyOf(start, end int, escaped bool) nodeKey {
	body := w.src[start:end]
	if !escaped {
		if len(body) > longestKey || len(body) == 0 || body[0] != '$' {
			return keyNone
		}
		return nodeKeys[string(body)]
	}
	if len(body) > 6*longestKey {
		return keyNone
	}
	name, err := jsonstr.AppendDecoded(nil, body)
	if err != nil {
		return keyNone
	}
	return nodeKeys[string(name)]
}

// pathString renders the path to the value being walked as an RFC 6901
// pointer, with extra tokens appended.
func (w *walk) pathString(extra ...pathTok) string {
	var b strings.Builder
	for _, t := range append(w.path[:len(w.path):len(w.path)], extra...) {
		b.WriteByte('/')
		if !t.isName {
			b.WriteString(strconv.Itoa(t.index))
			continue
		}
		name, err := jsonstr.AppendDecoded(nil, w.src[t.start:t.end])
		if err != nil {
			name = w.src[t.start:t.end]
		}
		b.WriteString(escapeToken(string(name)))
	}
	return b.String()
}

// escapeToken writes a reference token as RFC 6901 spells it.
func escapeToken(s string) string {
	if strings.IndexByte(s, '~') < 0 && strings.IndexByte(s, '/') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// skip returns the end of the valid JSON value starting at i (no space
// before it). It is used on bytes walk has already checked.
func skip(src []byte, i int) int {
	switch src[i] {
	case '"':
		for i++; ; i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch src[i] {
			case '"':
				i = skip(src, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	default:
		for i < len(src) && !jsonscan.IsDelim(src[i]) {
			i++
		}
		return i
	}
}

// elements returns the spans of the elements of the checked array that
// starts at i.
func elements(src []byte, i int) [][2]int {
	var out [][2]int
	for i++; ; {
		for isSpace(src[i]) || src[i] == ',' {
			i++
		}
		if src[i] == ']' {
			return out
		}
		e := skip(src, i)
		out = append(out, [2]int{i, e})
		i = e
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
