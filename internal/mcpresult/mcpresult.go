// Package mcpresult is the one rule by which retval rewrites an MCP
// tools/call result it retains, shared by the MCP proxy and the agents'
// hooks that see MCP results (opencode's plugin):
//
//   - a text block or embedded text resource over the threshold is
//     retained as a value of its own and replaced by its stub — a text
//     block keeps its annotations and _meta, a resource its uri, mimeType
//     and annotations (the stub says which resource it holds); every
//     smaller block stays as it is, in its place;
//   - when no one block is over the threshold but their text together is,
//     the text blocks are joined by newlines into one value: the first
//     becomes its stub, saying that several blocks were joined, the
//     others go;
//   - images, audio, resource links and blob resources stay;
//   - structuredContent goes once anything was retained (a client that
//     shows it instead of the content would show the model all of it
//     again); what it held besides the retained text — members of an
//     object that are not a copy of it, or the whole of it when it is not
//     a copy — is kept as a text block of its JSON, or that text's stub
//     when it is big;
//   - isError, _meta and any other member of the result stay.
package mcpresult

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
)

// Keep retains text as a value — suffix tells the values of one result
// apart ("" for the first, then "-2", …; "-s" for structured content),
// note follows the stub — and returns the stub to show, or ok false when
// the text is to be shown as it is (within the threshold, or not kept).
type Keep func(text Text, suffix, tool, note string) (stub string, ok bool)

// Text is a text the rule hands to Keep: a block's, read from its JSON in
// the result as it is retained (a 20 MB text is never built in memory),
// or several small blocks' joined.
type Text struct {
	lit []byte // a JSON string literal, when s is not the text
	s   string
	n   int64
}

// TextOf is the text s.
func TextOf(s string) Text { return Text{s: s, n: int64(len(s))} }

// textOfLiteral is the text of a JSON string literal (valid JSON).
func textOfLiteral(lit []byte) Text {
	return Text{lit: lit, n: jsonstr.UnquotedLen(lit)}
}

// Len is the text's length in bytes.
func (t Text) Len() int64 { return t.n }

// Reader reads the text.
func (t Text) Reader() io.Reader {
	if t.lit != nil {
		return jsonstr.NewUnquoter(t.lit)
	}
	return strings.NewReader(t.s)
}

// String builds the text.
func (t Text) String() string {
	if t.lit == nil {
		return t.s
	}
	var b strings.Builder
	b.Grow(int(t.n))
	io.Copy(&b, t.Reader())
	return b.String()
}

// block is one content block: its members as they came, and what the
// rule reads of them.
type block struct {
	raw     json.RawMessage
	members map[string]json.RawMessage
	// text is the block's text (a text block's, or an embedded
	// resource's); hasText says there is one.
	text    Text
	hasText bool
	// resource members, for a text resource.
	resource  map[string]json.RawMessage
	uri, mime string
}

func decode(raw json.RawMessage) block {
	b := block{raw: raw}
	var ok bool
	if b.members, ok = Members(raw); !ok {
		return b
	}
	var typ string
	json.Unmarshal(b.members["type"], &typ)
	switch typ {
	case "text":
		b.text, b.hasText = literal(b.members["text"])
	case "resource":
		if b.resource, ok = Members(b.members["resource"]); !ok {
			return b
		}
		if _, blob := b.resource["blob"]; blob {
			return b
		}
		b.text, b.hasText = literal(b.resource["text"])
		json.Unmarshal(b.resource["uri"], &b.uri)
		json.Unmarshal(b.resource["mimeType"], &b.mime)
	}
	return b
}

// withText is the block with its text replaced by s, every other member
// kept.
func (b block) withText(s string) json.RawMessage {
	text, _ := jsonstr.Marshal(s)
	if b.resource != nil {
		r := make(map[string]json.RawMessage, len(b.resource))
		for k, v := range b.resource {
			r[k] = v
		}
		r["text"] = text
		m := b.copy()
		m["resource"], _ = jsonstr.Marshal(r)
		out, _ := jsonstr.Marshal(m)
		return out
	}
	m := b.copy()
	m["text"] = text
	out, _ := jsonstr.Marshal(m)
	return out
}

func (b block) copy() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(b.members))
	for k, v := range b.members {
		m[k] = v
	}
	return m
}

// note says what a retained block held, after its stub.
func (b block) note() string {
	if b.resource == nil {
		return ""
	}
	s := "[the value is the text of resource " + b.uri
	if b.mime != "" {
		s += " (" + b.mime + ")"
	}
	return s + "]\n"
}

// Rewrite applies the rule to result (a tools/call result object) and
// returns the rewritten result, or nil when it is to be relayed unchanged
// (nothing over the threshold, nothing kept, or not a result with
// content). threshold is retain's; 0 retains any text.
func Rewrite(result json.RawMessage, threshold int64, tool string, keep Keep) json.RawMessage {
	if !json.Valid(result) {
		return nil
	}
	m, ok := Members(result)
	if !ok {
		return nil
	}
	raws, ok := Elements(m["content"])
	if !ok {
		return nil
	}
	blocks := make([]block, len(raws))
	var total int64
	var big, texts int
	for i, raw := range raws {
		blocks[i] = decode(raw)
		if !blocks[i].hasText {
			continue
		}
		texts++
		total += blocks[i].text.Len()
		if blocks[i].text.Len() > threshold {
			big++
		}
	}
	if texts == 0 || total <= threshold {
		return nil
	}
	out := make([]json.RawMessage, 0, len(raws))
	var retained []Text // the texts now held as values
	n := 0
	suffix := func() string {
		n++
		if n == 1 {
			return ""
		}
		return fmt.Sprintf("-%d", n)
	}
	if big > 0 {
		for _, b := range blocks {
			if !b.hasText || b.text.Len() <= threshold {
				out = append(out, b.raw)
				continue
			}
			stub, ok := keep(b.text, suffix(), tool, b.note())
			if !ok {
				out = append(out, b.raw)
				continue
			}
			retained = append(retained, b.text)
			out = append(out, b.withText(stub))
		}
	} else {
		var all []string
		var each []Text
		first := -1
		for i, b := range blocks {
			if b.hasText {
				all = append(all, b.text.String()) // each within the threshold
				each = append(each, b.text)
				if first < 0 {
					first = i
				}
			}
		}
		joined := TextOf(strings.Join(all, "\n"))
		note := fmt.Sprintf("[the value is the result's %d text blocks joined by newlines]\n", len(all))
		stub, ok := keep(joined, suffix(), tool, note)
		if !ok {
			return nil
		}
		retained = append(retained, joined)
		retained = append(retained, each...)
		for i, b := range blocks {
			switch {
			case i == first:
				out = append(out, b.withText(stub))
			case !b.hasText:
				out = append(out, b.raw)
			}
		}
	}
	if len(retained) == 0 {
		return nil
	}
	if sc, ok := m["structuredContent"]; ok {
		delete(m, "structuredContent")
		if rest := remainder(sc, retained); rest != nil {
			text := string(rest)
			if stub, ok := keep(TextOf(text), "-s", tool+" structuredContent", ""); ok {
				text = stub
			}
			b, _ := jsonstr.Marshal(map[string]string{"type": "text", "text": text})
			out = append(out, b)
		}
	}
	var err error
	if m["content"], err = jsonstr.Marshal(out); err != nil {
		return nil
	}
	b, err := jsonstr.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// remainder is what structured content holds besides the retained texts,
// as JSON, or nil when it holds nothing else: a string that is one of
// them; an object's members that are not (the object of the others); a
// document whose JSON one of them is; anything else whole.
func remainder(sc json.RawMessage, retained []Text) json.RawMessage {
	sc = bytes.TrimSpace(sc)
	if len(sc) == 0 || string(sc) == "null" {
		return nil
	}
	isCopy := func(v json.RawMessage) bool {
		if len(v) == 0 || v[0] != '"' {
			return false
		}
		// The same JSON is the same text, and needs no decoding (a copy
		// of a 20 MB text is usually written exactly as the text was);
		// else the two texts are read side by side.
		t := textOfLiteral(v)
		for _, r := range retained {
			if r.lit != nil && bytes.Equal(v, r.lit) || sameText(t, r) {
				return true
			}
		}
		return false
	}
	if isCopy(sc) || isJSONOf(sc, retained) {
		return nil
	}
	if sc[0] != '{' {
		return sc
	}
	obj, ok := Members(sc)
	if !ok {
		return sc
	}
	kept := false
	for k, v := range obj {
		if isCopy(v) {
			delete(obj, k)
			kept = true
		}
	}
	if !kept {
		return sc // no member copies the text: all of it is other
	}
	if len(obj) == 0 {
		return nil
	}
	b, _ := jsonstr.Marshal(obj)
	return b
}

// isJSONOf reports whether one of the texts is the JSON of sc (its
// compact forms equal).
func isJSONOf(sc json.RawMessage, texts []Text) bool {
	var compact bytes.Buffer
	for _, h := range texts {
		if !startsWith(h, sc[0]) {
			continue
		}
		t := strings.TrimSpace(h.String())
		if t == "" || t[0] != sc[0] {
			continue
		}
		if compact.Len() == 0 && json.Compact(&compact, sc) != nil {
			return false
		}
		var tc bytes.Buffer
		if json.Compact(&tc, []byte(t)) == nil && bytes.Equal(tc.Bytes(), compact.Bytes()) {
			return true
		}
	}
	return false
}

// literal is the text of a JSON string literal, false when v is not one.
func literal(v json.RawMessage) (Text, bool) {
	if len(v) < 2 || v[0] != '"' {
		return Text{}, false
	}
	return textOfLiteral(v), true
}

// sameText reports whether a and b are the same text, reading both.
func sameText(a, b Text) bool {
	if a.Len() != b.Len() {
		return false
	}
	ra, rb := a.Reader(), b.Reader()
	var ba, bb [32 << 10]byte
	for {
		na, ea := io.ReadFull(ra, ba[:])
		nb, _ := io.ReadFull(rb, bb[:na])
		if nb != na || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil {
			return true
		}
	}
}

// startsWith reports whether the first byte of t after white space is c.
func startsWith(t Text, c byte) bool {
	r := bufio.NewReader(t.Reader())
	for {
		b, err := r.ReadByte()
		switch {
		case err != nil:
			return false
		case b != ' ' && b != '\t' && b != '\r' && b != '\n':
			return b == c
		}
	}
}
