package expand

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// FuzzExpand: for any input, ParseTemplate accepts exactly what
// encoding/json calls valid; expansion never panics; what it outputs (and
// its summary) is valid JSON; a document without nodes comes out
// byte-identical; a refusal always lists at least one failure, each with a
// path that is an RFC 6901 pointer and a code.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		`{"a": {"$ref": "nl"}}`,
		`[{"$concat": ["x", {"$ref": "crlf", "lines": [1, 2]}, {"$ref": "utf", "bytes": [1, 3]}]}]`,
		`{"v": {"$ref": "json", "pointer": "/a", "as": "value"}, "s": {"$ref": "json", "pointer": "/a/1", "as": "string"}}`,
		`{"l": {"$literal": {"$ref": "nl"}}, "n": 1.00000000000000000001}`,
		`{"$ref": "refish", "pointer": "", "as": "value"}`,
		"{\"a\" : [ 1 , \"\\u00e9\" ] }\n",
	} {
		f.Add([]byte(s))
	}
	x := newExpander(f, expandValues)
	x.MaxBytes = 1 << 10
	f.Fuzz(func(t *testing.T, src []byte) {
		tm, err := ParseTemplate(src)
		if (err == nil) != json.Valid(src) {
			t.Fatalf("ParseTemplate: %v; json.Valid: %v", err, json.Valid(src))
		}
		if err != nil {
			if retain.CodeOf(err) != retain.CodeUsage {
				t.Fatalf("code %s", retain.CodeOf(err))
			}
			return
		}
		// Each node's path leads to the node: its span is what the pointer
		// selects in the template (unless a name on the way is repeated).
		for _, n := range tm.Nodes {
			p, err := ParsePointer(n.Path)
			if err != nil {
				t.Fatalf("node path %q: %v", n.Path, err)
			}
			sp, err := FindPointer(bytes.NewReader(src), int64(len(src)), p)
			if retain.CodeOf(err) == retain.CodeAmbiguousJSON {
				continue
			}
			if err != nil || sp.Start != int64(n.Start) || sp.End != int64(n.End) {
				t.Fatalf("node at %q is bytes %d-%d; the pointer selects %+v (%v)", n.Path, n.Start, n.End, sp, err)
			}
		}
		r, err := x.Expand(src, true)
		if err != nil {
			var ref *Refusal
			if !errors.As(err, &ref) || len(ref.Failures) == 0 {
				t.Fatalf("not a refusal: %v", err)
			}
			for _, fl := range ref.Failures {
				if fl.Path != "" && fl.Path[0] != '/' || fl.Code == "" || fl.Message == "" {
					t.Fatalf("failure %+v", fl)
				}
				if _, err := ParsePointer(fl.Path); err != nil {
					t.Fatalf("failure path %q: %v", fl.Path, err)
				}
			}
			return
		}
		out := r.Bytes()
		if !json.Valid(out) {
			t.Fatalf("output is not JSON: %q", out)
		}
		if !json.Valid(r.Summary) {
			t.Fatalf("summary is not JSON: %q", r.Summary)
		}
		if len(tm.Nodes) == 0 && (!bytes.Equal(out, src) || !bytes.Equal(r.Summary, src)) {
			t.Fatalf("a document without nodes changed: %q -> %q", src, out)
		}
	})
}
