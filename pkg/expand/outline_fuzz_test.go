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
		// Pages of every shape: from the first member or later, a short head
		// and a tail, so the filter and the ring are tried too.
		o := jsonscan.OutlineOptions{After: int64(chunk%4) - 1, Head: 1 + int(chunk/4%4), Tail: int(chunk / 16 % 3)}
		ol, err := findOutline(bytes.NewReader(doc), 0, int64(len(doc)), p, o, 1+int(chunk))
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
		if ol.Count != int64(len(want.vals)) {
			t.Fatalf("outline %q: %d children, want %d", ptr, ol.Count, len(want.vals))
		}
		from := max(o.After+1, 0)
		wantHead := min(int64(o.Head), max(ol.Count-from, 0))
		wantTail := min(int64(o.Tail), max(ol.Count-from-wantHead, 0))
		if int64(len(ol.Head)) != wantHead || int64(len(ol.Tail)) != wantTail {
			t.Fatalf("outline %q: kept %d+%d, want %d+%d", ptr, len(ol.Head), len(ol.Tail), wantHead, wantTail)
		}
		kept := append(append([]jsonscan.Child(nil), ol.Head...), ol.Tail...)
		for k, c := range kept {
			i := int(from) + k
			if k >= len(ol.Head) {
				i = int(ol.Count) - len(kept) + k
			}
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
