package mcpresult

import (
	"bytes"
	"encoding/json"
	"testing"
)

var spanCases = []string{
	`{}`, `[]`, ` { "a" : 1 , "b":[1,{"c":"]}\""}], "a": "last" } `, `[1, "x\\", {"y": [2]}, null, true, -0.5e3]`,
	`{"\u0061": {"n": [[]]}}`, `"s"`, `1`, `{"a" 1}`, `[1,]`, `{"a":1`,
}

// Members and Elements read what json.Unmarshal reads, as slices of
// the document, never copies.
func checkSpans(t *testing.T, doc string) {
	if !json.Valid([]byte(doc)) {
		return // Rewrite checks validity first: nothing is promised
	}
	raw := []byte(doc)
	var wantM map[string]json.RawMessage
	gotM, ok := Members(raw)
	if (json.Unmarshal(raw, &wantM) == nil && wantM != nil) != ok {
		t.Fatalf("Members(%q): ok %v, want %v", doc, ok, !ok)
	}
	for k, v := range wantM {
		if !bytes.Equal(gotM[k], v) {
			t.Errorf("Members(%q)[%q] = %s, want %s", doc, k, gotM[k], v)
		}
	}
	if len(gotM) != len(wantM) {
		t.Errorf("Members(%q): %d members, want %d", doc, len(gotM), len(wantM))
	}
	if _, repeats, _ := MembersRepeats(raw); ok && repeats != (countMembers(raw) > len(wantM)) {
		t.Errorf("MembersRepeats(%q): repeats %v, want %v", doc, repeats, !repeats)
	}
	var wantE []json.RawMessage
	gotE, ok := Elements(raw)
	if (json.Unmarshal(raw, &wantE) == nil && wantE != nil) != ok {
		t.Fatalf("Elements(%q): ok %v, want %v", doc, ok, !ok)
	}
	for i := range wantE {
		if i >= len(gotE) || !bytes.Equal(gotE[i], wantE[i]) {
			t.Errorf("Elements(%q)[%d] = %s, want %s", doc, i, gotE, wantE[i])
		}
	}
	for _, v := range append(gotE, mapValues(gotM)...) {
		if len(v) > 0 && !within(raw, v) {
			t.Errorf("%q: %s is a copy, not a slice of the document", doc, v)
		}
	}
}

// countMembers counts the members of the valid JSON object raw, a name
// given twice twice.
func countMembers(raw []byte) int {
	d := json.NewDecoder(bytes.NewReader(raw))
	n, depth := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			return n
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		default:
			if _, name := tok.(string); name && depth == 1 && d.More() {
				n++ // a name; its value follows, so skip it
				var v json.RawMessage
				d.Decode(&v)
			}
		}
	}
}

func mapValues(m map[string]json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// within reports whether v's bytes lie inside raw's.
func within(raw, v []byte) bool {
	for i := range raw {
		if &raw[i] == &v[0] {
			return i+len(v) <= len(raw)
		}
	}
	return false
}

func TestSpans(t *testing.T) {
	for _, doc := range spanCases {
		checkSpans(t, doc)
	}
}

func FuzzSpans(f *testing.F) {
	for _, doc := range spanCases {
		f.Add(doc)
	}
	f.Fuzz(checkSpans)
}
