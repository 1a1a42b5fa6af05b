package expand

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// storeAs is newStore with every value stored in the given representation.
func storeAs(t testing.TB, values map[string]string, comp string) *Resolver {
	t.Helper()
	s := retain.Open(t.TempDir())
	lim := retain.DefaultLimits()
	lim.Threshold, lim.MaxValueSize, lim.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
	for id, v := range values {
		res, err := s.Retain(strings.NewReader(v), io.Discard, retain.RetainOptions{Run: "r", Call: id, Limits: lim, Policy: retain.PolicyLegacy, Compress: comp})
		if err != nil {
			t.Fatal(err)
		}
		if comp == "zstd" && res.Descriptor.Compression != retain.CompressZstd {
			t.Fatalf("%s not stored as zstd", id)
		}
	}
	return &Resolver{Store: s, Run: "r"}
}

// TestZstdSameAsPlain: resolve selections and expand output are
// byte-identical whether the values are stored plain or as seekable zstd,
// including a multi-frame value read across frame boundaries.
func TestZstdSameAsPlain(t *testing.T) {
	values := map[string]string{}
	for k, v := range expandValues {
		values[k] = v
	}
	var big strings.Builder
	for i := 1; big.Len() < 3<<20; i++ {
		fmt.Fprintf(&big, "%d frame-crossing line ünïcode %s\n", i, strings.Repeat("q", i%70))
	}
	values["big"] = big.String()
	values["lock"] = string(packageLock(20000))

	plain := storeAs(t, values, "none")
	z := storeAs(t, values, "zstd")
	refs := []string{
		`{"$ref": "crlf"}`, `{"$ref": "crlf", "lines": [2, 3]}`, `{"$ref": "utf", "bytes": [1, 7]}`,
		`{"$ref": "json", "pointer": ""}`, `{"$ref": "str", "pointer": "/s", "as": "string"}`,
		`{"$ref": "big", "lines": [1000, 1400]}`, `{"$ref": "big", "bytes": [262000, 263000]}`,
		`{"$ref": "big", "lines": [40000, 40010]}`, `{"$ref": "lock", "pointer": "/packages/node_modules~1pkg-19999/version"}`,
		`{"$ref": "dup", "pointer": "/a"}`, `{"$ref": "text", "pointer": "/x"}`, `{"$ref": "big", "lines": [999999, 999999]}`,
	}
	for _, js := range refs {
		ref := mustRef(t, js)
		var outs [2]string
		for i, rs := range []*Resolver{plain, z} {
			sel, err := rs.Open(ref)
			if err != nil {
				outs[i] = "error " + string(retain.CodeOf(err))
				continue
			}
			b, err := sel.Text(1 << 30)
			sel.Close()
			if err != nil {
				outs[i] = "error " + string(retain.CodeOf(err))
				continue
			}
			outs[i] = string(b)
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: plain and zstd differ: %.80q vs %.80q", js, outs[0], outs[1])
		}
	}

	tmpl := `{"a": {"$concat": [{"$ref": "big", "lines": [1, 5000]}, "NEW\n", {"$ref": "big", "lines": [5006, 30000]}]},
	 "b": {"$ref": "lock", "pointer": "/packages/node_modules~1pkg-7", "as": "value"}, "c": {"$ref": "crlf"}}`
	var outs [2][]byte
	for i, rs := range []*Resolver{plain, z} {
		x := &Expander{Store: rs.Store, Run: rs.Run, MaxBytes: 16 << 20}
		res, err := x.Expand([]byte(tmpl), true)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = append(res.Bytes(), res.Summary...)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("expand output differs between plain and zstd values")
	}
}
