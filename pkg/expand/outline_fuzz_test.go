package expand

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/pkg/retain"
)

// FuzzOutline compares outlines with encoding/json on valid documents:
// the kind and count of the value at the pointer, and for each child its
// name, kind, first-level count, exact lexeme and duplicate mark; a pointer
// encoding/json's tree says selects nothing, or ambiguously, fails the same
// way. Any suggestion an error makes resolves.
func FuzzOutline(f *testing.F) {
	f.Add([]byte(rfcDoc), "", uint8(3))
	f.Add([]byte(rfcDoc), "/foo", uint8(0))
	f.Add([]byte(`{"a": {"b": [1, {"c": []}, "x\"y"], "b": null}, "a": 2}`), "", uint8(1))
	f.Add([]byte(`{"x": {"b": [1, {"c": []}, "x\"y"], "b": null}}`), "/x", uint8(2))
	f.Add([]byte(`[[], {}, [[1]], {"k": {"j": 1}}, -1.5e3, true, false, null]`), "", uint8(4))
	f.Add([]byte(`{"a/b": 1, "ab": {"c": 2}}`), "/a/b", uint8(7))
	f.Add([]byte(`{"auth": {"oauth2": 1}}`), "/auth/oauth", uint8(7))
	f.Fuzz(func(t *testing.T, doc []byte, ptr string, chunk uint8) {
		p, err := ParsePointer(ptr)
		if err != nil {
			return
		}
		ol, err := findOutline(bytes.NewReader(doc), 0, int64(len(doc)), p, jsonscan.OutlineOptions{After: -1, Head: 1 << 16}, 1+int(chunk))
		if !json.Valid(doc) {
			return
		}
		var pe *PointerError
		if errors.As(err, &pe) {
			for _, s := range pe.Suggestions {
				sp, perr := ParsePointer(s)
				if perr == nil {
					_, perr = findPointer(bytes.NewReader(doc), int64(len(doc)), sp, 1+int(chunk))
				}
				if perr != nil {
					t.Fatalf("pointer %q: suggestion %q does not resolve: %v", ptr, s, perr)
				}
			}
		}
		root, terr := tree(doc)
		if terr != nil {
			t.Fatalf("tree of a valid document: %v", terr)
		}
		want, code := refFind(root, p.Tokens())
		if code != "" {
			if retain.CodeOf(err) != code {
				t.Fatalf("outline %q: got %v, want %s", ptr, err, code)
			}
			return
		}
		if err != nil {
			t.Fatalf("outline %q: %v", ptr, err)
		}
		if ol.Kind != want.kind {
			t.Fatalf("outline %q: kind %v, want %v", ptr, ol.Kind, want.kind)
		}
		if want.kind != KindObject && want.kind != KindArray {
			return
		}
		if ol.Count != int64(len(want.vals)) || len(ol.Head) != len(want.vals) {
			t.Fatalf("outline %q: %d children (%d kept), want %d", ptr, ol.Count, len(ol.Head), len(want.vals))
		}
		for i, c := range ol.Head {
			w := want.vals[i]
			if c.Pos != int64(i) || c.Kind != w.kind {
				t.Fatalf("outline %q child %d: %+v, want kind %v", ptr, i, c, w.kind)
			}
			lex := doc[c.Start:c.End]
			got, err := tree(lex)
			if err != nil || !reflect.DeepEqual(got, w) {
				t.Fatalf("outline %q child %d: lexeme %q, want %#v", ptr, i, lex, w)
			}
			if (c.Kind == KindObject || c.Kind == KindArray) && c.Count != int64(len(w.vals)) {
				t.Fatalf("outline %q child %d: count %d, want %d", ptr, i, c.Count, len(w.vals))
			}
			if want.kind == KindObject {
				n := 0
				for _, k := range want.keys {
					if k == want.keys[i] {
						n++
					}
				}
				if c.Name != want.keys[i] || c.Dup != (n > 1) {
					t.Fatalf("outline %q child %d: name %q dup %v, want %q (%d times)", ptr, i, c.Name, c.Dup, want.keys[i], n)
				}
			}
		}
	})
}
