package stats

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// BenchmarkComputeAll sums a store of 10,000 runs, each with a value's
// stub and ten lookups in its log, in one pass (the target: well under a
// second an operation).
func BenchmarkComputeAll(b *testing.B) {
	s := retain.Open(b.TempDir())
	s.Now = func() time.Time { return t0 }
	for i := range 10_000 {
		run := retain.ID(fmt.Sprintf("run-%05d", i))
		if err := os.Mkdir(s.RunDir(run), 0o700); err != nil {
			b.Fatal(err)
		}
		s.LogRead(run, retain.Read{Op: retain.OpStub, Via: "hook", Value: "c1", Size: 50_000, Bytes: 900, Tool: "Bash"})
		for range 10 {
			s.LogRead(run, retain.Read{Op: retain.OpRead, Via: "peek", Value: "c1", Bytes: 2_000, Call: true})
		}
	}
	for _, by := range []By{ByNone, ByRun} {
		b.Run("by="+string(by), func(b *testing.B) {
			for b.Loop() {
				rep, err := Compute(Options{Store: s, All: true, By: by})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Runs != 10_000 || rep.Records != 110_000 {
					b.Fatalf("%d runs, %d records", rep.Runs, rep.Records)
				}
			}
		})
	}
}
