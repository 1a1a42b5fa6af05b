package expand

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// BenchmarkStepLedger is one lookup under a --step ledger: lock the run,
// lock and read the ledger, answer, write it back with fsync.
func BenchmarkStepLedger(b *testing.B) {
	s := retain.Open(filepath.Join(b.TempDir(), "runs"))
	L := retain.DefaultLimits()
	L.Threshold = retain.Unlimited
	if _, err := s.Retain(bytes.NewReader([]byte("hello\nworld\n")), io.Discard, retain.RetainOptions{Run: "r", Call: "c", Limits: L, Policy: retain.PolicyLegacy}); err != nil {
		b.Fatal(err)
	}
	rs := &Resolver{Store: s, Run: "r"}
	ref, err := ParseRef([]byte(`{"$ref": "c", "lines": [1, 1]}`))
	if err != nil {
		b.Fatal(err)
	}
	budget := Budget{Lookups: 1 << 40, LookupBytes: 8 << 10, StepBytes: 1 << 40}
	i := 0
	for b.Loop() {
		i++
		if _, err := rs.Step(fmt.Sprint("s", i%4), []Lookup{{Ref: ref}}, budget); err != nil {
			b.Fatal(err)
		}
	}
}
