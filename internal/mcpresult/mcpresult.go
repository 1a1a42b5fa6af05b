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
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
)

// Keep retains text as a value — suffix tells the values of one result
// apart ("" for the first, then "-2", …; "-s" for structured content),
// note follows the stub — and returns the stub to show, or ok false when
// the text is to be shown as it is (within the threshold, or not kept).
type Keep func(text, suffix, tool, note string) (stub string, ok bool)

// block is one content block: its members as they came, and what the
// rule reads of them.
type block struct {
	raw     json.RawMessage
	members map[string]json.RawMessage
	// text is the block's text (a text block's, or an embedded
	// resource's); hasText says there is one.
	text    string
	hasText bool
	// resource members, for a text resource.
	resource  map[string]json.RawMessage
	uri, mime string
}

func decode(raw json.RawMessage) block {
	b := block{raw: raw}
	if json.Unmarshal(raw, &b.members) != nil {
		return b
	}
	var typ string
	json.Unmarshal(b.members["type"], &typ)
	switch typ {
	case "text":
		b.hasText = json.Unmarshal(b.members["text"], &b.text) == nil
	case "resource":
		if json.Unmarshal(b.members["resource"], &b.resource) != nil {
			return b
		}
		if _, blob := b.resource["blob"]; blob {
			return b
		}
		b.hasText = json.Unmarshal(b.resource["text"], &b.text) == nil
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
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(m["content"], &raws) != nil {
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
		total += int64(len(blocks[i].text))
		if int64(len(blocks[i].text)) > threshold {
			big++
		}
	}
	if texts == 0 || total <= threshold {
		return nil
	}
	out := make([]json.RawMessage, 0, len(raws))
	var retained []string // the texts now held as values
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
			if !b.hasText || int64(len(b.text)) <= threshold {
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
		first := -1
		for i, b := range blocks {
			if b.hasText {
				all = append(all, b.text)
				if first < 0 {
					first = i
				}
			}
		}
		joined := strings.Join(all, "\n")
		note := fmt.Sprintf("[the value is the result's %d text blocks joined by newlines]\n", len(all))
		stub, ok := keep(joined, suffix(), tool, note)
		if !ok {
			return nil
		}
		retained = append(retained, joined)
		retained = append(retained, all...)
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
			if stub, ok := keep(text, "-s", tool+" structuredContent", ""); ok {
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
func remainder(sc json.RawMessage, retained []string) json.RawMessage {
	sc = bytes.TrimSpace(sc)
	if len(sc) == 0 || string(sc) == "null" {
		return nil
	}
	isCopy := func(v json.RawMessage) bool {
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return false
		}
		for _, r := range retained {
			if s == r {
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
	var obj map[string]json.RawMessage
	if json.Unmarshal(sc, &obj) != nil {
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
func isJSONOf(sc json.RawMessage, texts []string) bool {
	var compact bytes.Buffer
	for _, t := range texts {
		t = strings.TrimSpace(t)
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
