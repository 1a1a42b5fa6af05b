package mcpresult

import (
	"bytes"
	"encoding/json"
)

// A result may be tens of megabytes: the rule reads its members and
// blocks as slices of the result's own bytes rather than decoding them
// into copies (encoding/json copies every json.RawMessage it fills), so
// that retaining a 20 MB text holds the frame and the one decoded text,
// not a copy per level of nesting. The functions below assume raw is
// valid JSON (Rewrite checks it once); on anything else they say no.

// Members returns the members of the JSON object raw, each value a slice
// of raw; false when raw is not an object. A name given twice keeps its
// last value, as encoding/json does.
func Members(raw []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		if end < 0 || raw[i] != '"' {
			return nil, false
		}
		var name string
		if json.Unmarshal(raw[i:end], &name) != nil {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		end = skipValue(raw, i)
		if end < 0 {
			return nil, false
		}
		m[name] = raw[i:end:end]
		i = skipSpace(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return m, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// Elements returns the elements of the JSON array raw, each a slice of
// raw; false when raw is not an array.
func Elements(raw []byte) ([]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	var out []json.RawMessage
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return []json.RawMessage{}, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, raw[i:end:end])
		i = skipSpace(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value that starts at b[i], or -1. A
// string is skipped by searching for its quotes and backslashes; a
// container by counting brackets outside strings.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	// A number, true, false or null: up to the next delimiter.
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// skipString returns the end of the string whose quote is b[i], or -1.
func skipString(b []byte, i int) int {
	i++
	for {
		k := bytes.IndexAny(b[i:], `"\`)
		if k < 0 {
			return -1
		}
		i += k
		if b[i] == '"' {
			return i + 1
		}
		i += 2 // a backslash and the byte it escapes
		if i > len(b) {
			return -1
		}
	}
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
