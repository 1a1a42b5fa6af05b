package peek

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// TestZstdSameAsPlain: every read of a value stored as seekable zstd gives
// byte-identical output to the same value stored plain — line ranges,
// searches (which stream through all frames) and byte ranges, at random
// places, with and without the index.
func TestZstdSameAsPlain(t *testing.T) {
	b := bigLog(60_000) // a few MiB: several frames, indexed
	s := retain.Open(t.TempDir())
	l := retain.DefaultLimits()
	l.Threshold, l.MaxValueSize, l.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
	for _, comp := range []string{"none", "zstd"} {
		if _, err := s.Retain(bytes.NewReader(b), new(bytes.Buffer), retain.RetainOptions{Run: "r", Call: comp, Limits: l, Policy: retain.PolicyLegacy, Compress: comp}); err != nil {
			t.Fatal(err)
		}
	}
	plain, err := s.OpenValue("r", "none")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	z, err := s.OpenValue("r", "zstd")
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if z.Desc.Compression != retain.CompressZstd {
		t.Fatal("value not stored as zstd")
	}
	n := plain.Desc.Lines
	r := rand.New(rand.NewPCG(11, 12))
	same := func(what string, f func(v *retain.Value) ([]byte, error)) {
		t.Helper()
		a, errA := f(plain)
		b, errB := f(z)
		if !bytes.Equal(a, b) || (errA == nil) != (errB == nil) {
			t.Fatalf("%s: plain and zstd differ (errors %v / %v)", what, errA, errB)
		}
	}
	for i := 0; i < 60; i++ {
		first := 1 + r.Int64N(n)
		last := first + r.Int64N(500)
		same("lines", func(v *retain.Value) ([]byte, error) {
			p, err := Lines(v, first, last, DefaultCaps)
			if err != nil {
				return nil, err
			}
			return p.Render(), nil
		})
		a := r.Int64N(plain.Size())
		e := min(plain.Size(), a+r.Int64N(20000))
		same("bytes", func(v *retain.Value) ([]byte, error) {
			p, err := Bytes(v, a, e, DefaultCaps)
			if err != nil {
				return nil, err
			}
			return p.Render(), nil
		})
	}
	for _, o := range []QueryOptions{
		{Query: "level=3"}, {Query: "rare-marker-7f3a"}, {Query: "日本語", Context: 2},
		{Query: `user=9\d+`, Regex: true}, {Query: "ERROR", IgnoreCase: true}, {Query: "level=1", AfterLine: n / 2},
	} {
		same("query "+o.Query, func(v *retain.Value) ([]byte, error) {
			p, err := Query(v, o, DefaultCaps)
			if err != nil {
				return nil, err
			}
			return p.Render(), nil
		})
	}
}
