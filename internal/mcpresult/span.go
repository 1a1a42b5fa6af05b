package mcpresult

import (
	"encoding/json"
	"math"

	"github.com/retval/retval/internal/jsonscan"
)

// A result may be tens of megabytes: the rule reads its members and
// blocks as slices of the result's own bytes rather than decoding them
// into copies (encoding/json copies every json.RawMessage it fills), so
// that retaining a 20 MB text holds the frame and the one decoded text,
// not a copy per level of nesting. The functions below skip values with
// jsonscan, reading raw where it lies (jsonscan.NewBytes). They assume
// raw is valid JSON (Rewrite checks it once); on anything else they say
// no.

// Members returns the members of the JSON object raw, each value a slice
// of raw; false when raw is not an object. A name given twice keeps its
// last value, as encoding/json does.
func Members(raw []byte) (map[string]json.RawMessage, bool) {
	m, _, ok := MembersRepeats(raw)
	return m, ok
}

// MembersRepeats is Members, also saying whether a name is given twice:
// encoding/json then decodes each value in turn, so an object or array
// given twice is not its last value alone.
func MembersRepeats(raw []byte) (m map[string]json.RawMessage, repeats, ok bool) {
	s := jsonscan.NewBytes(raw, 0)
	if _, err := s.Expect("{"); err != nil {
		return nil, false, false
	}
	m = map[string]json.RawMessage{}
	c, err := s.Peek()
	if err != nil {
		return nil, false, false
	}
	if c == '}' {
		return m, false, true
	}
	n := 0
	for {
		if _, err := s.Expect(`"`); err != nil {
			return nil, false, false
		}
		name, _, _, err := s.Name(math.MaxInt64)
		if err != nil {
			return nil, false, false
		}
		key := string(name)
		if _, err := s.Expect(":"); err != nil {
			return nil, false, false
		}
		v, ok := value(s, raw)
		if !ok {
			return nil, false, false
		}
		m[key] = v
		n++
		c, err := s.Expect(",}")
		if err != nil {
			return nil, false, false
		}
		if c == '}' {
			return m, n > len(m), true
		}
	}
}

// Elements returns the elements of the JSON array raw, each a slice of
// raw; false when raw is not an array.
func Elements(raw []byte) ([]json.RawMessage, bool) {
	s := jsonscan.NewBytes(raw, 0)
	if _, err := s.Expect("["); err != nil {
		return nil, false
	}
	out := []json.RawMessage{}
	c, err := s.Peek()
	if err != nil {
		return nil, false
	}
	if c == ']' {
		return out, true
	}
	for {
		v, ok := value(s, raw)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		c, err := s.Expect(",]")
		if err != nil {
			return nil, false
		}
		if c == ']' {
			return out, true
		}
	}
}

// value skips the value at s's next non-space byte and returns it, a
// slice of raw.
func value(s *jsonscan.Scanner, raw []byte) (json.RawMessage, bool) {
	if _, err := s.Peek(); err != nil {
		return nil, false
	}
	start := s.Off()
	if _, err := s.SkipValue(); err != nil {
		return nil, false
	}
	end := s.Off()
	return raw[start:end:end], true
}
