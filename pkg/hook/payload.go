package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Payload picks what to retain of an MCP tool's result. Servers often
// answer with the JSON text of a structured result, e.g. server-filesystem's
// {"content":"line 1\nline 2…"}: retained as it is, a 100 KB text file
// would be one 100 KB JSON line that peek can only show cut. So when the
// result is
//   - a JSON object with exactly one member, a string or an array of text
//     content blocks, or
//   - an array of text content blocks ({"type":"text","text":…} and nothing
//     else),
//
// the value is that text, decoded (several blocks joined by newlines), and
// from says where it came from ("the text of member \"content\""). Any
// other result is retained as it is, from "" (a JSON one is then one
// document, which pointers read).
func Payload(result []byte) (value []byte, from string) {
	trimmed := bytes.TrimSpace(result)
	if len(trimmed) == 0 || !json.Valid(trimmed) {
		return result, ""
	}
	switch trimmed[0] {
	case '{':
		name, raw, ok := onlyMember(trimmed)
		if !ok {
			return result, ""
		}
		if s, ok := decodeString(raw); ok {
			return []byte(s), fmt.Sprintf("the text of member %q", name)
		}
		if s, n, ok := textBlocks(raw); ok {
			return []byte(s), fmt.Sprintf("the text of member %q (%s)", name, blocksPhrase(n))
		}
	case '[':
		if s, n, ok := textBlocks(trimmed); ok {
			return []byte(s), "the text of the result's " + blocksPhrase(n)
		}
	}
	return result, ""
}

func blocksPhrase(n int) string {
	if n == 1 {
		return "1 text block"
	}
	return fmt.Sprintf("%d text blocks joined by newlines", n)
}

// onlyMember returns the name and raw value of an object's single member;
// ok is false for any other object, and for one whose key repeats (which
// member a reader would take is not certain).
func onlyMember(obj []byte) (name string, raw json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return "", nil, false
	}
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", nil, false
		}
		n++
		name, raw = t.(string), v
	}
	return name, raw, n == 1
}

// decodeString decodes a JSON string exactly; ok is false for any other
// value and for a string whose escapes do not decode to the text they
// stand for (a lone surrogate, which decoding would replace).
func decodeString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	if strings.ContainsRune(s, utf8.RuneError) && !bytes.ContainsRune(raw, utf8.RuneError) &&
		!bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
		return "", false
	}
	return s, true
}

// textBlocks joins an array of text content blocks, each exactly
// {"type":"text","text":"…"}, with newlines; ok is false for anything else
// (an empty array, other block types, other members such as annotations,
// which the text alone would lose).
func textBlocks(raw json.RawMessage) (string, int, bool) {
	var blocks []map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &blocks) != nil || len(blocks) == 0 {
		return "", 0, false
	}
	texts := make([]string, len(blocks))
	for i, b := range blocks {
		if len(b) != 2 || string(b["type"]) != `"text"` {
			return "", 0, false
		}
		s, ok := decodeString(b["text"])
		if !ok {
			return "", 0, false
		}
		texts[i] = s
	}
	return strings.Join(texts, "\n"), len(blocks), true
}
