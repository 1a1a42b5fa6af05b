package stats

import (
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// Series draws Compute's figures over time: its last point sums to
// Compute's total, each point's ledger is the records of its span, the
// spans are a power of two seconds, as few as fit the points asked for.
func TestSeries(t *testing.T) {
	s := store(t, logs())
	for _, o := range []Options{{Store: s, Run: "a"}, {Store: s, All: true}, {Store: s, All: true, Since: 2 * time.Hour}} {
		rep, err := Compute(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 3, 100} {
			pts, err := Series(o, n)
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) == 0 || len(pts) > n {
				t.Fatalf("%+v: %d points for at most %d", o, len(pts), n)
			}
			last := pts[len(pts)-1].UpTo
			want := rep.Total
			last.Ratio, want.Ratio = nil, nil
			if last != want {
				t.Errorf("%+v, %d points: up to the end\n got %+v\nwant %+v", o, n, last, want)
			}
			var sum int64
			for i, p := range pts {
				sum += p.In.RetainedBytes + p.In.LookupBytes
				if i > 0 && !p.Time.After(pts[i-1].Time) {
					t.Errorf("points out of order: %v then %v", pts[i-1].Time, p.Time)
				}
			}
			if sum != want.RetainedBytes+want.LookupBytes {
				t.Errorf("the spans sum to %d, want %d", sum, want.RetainedBytes+want.LookupBytes)
			}
		}
	}
	// Records an hour and a minute old, two days after the first: with 100
	// points they fall in spans of a second, the first and last apart.
	pts, err := Series(Options{Store: s, All: true}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if pts[0].Step != "1s" || !pts[0].Time.Equal(t0.Add(-48*time.Hour)) || !pts[len(pts)-1].Time.Equal(t0.Add(-time.Minute)) {
		t.Errorf("points: first %v (%s), last %v", pts[0].Time, pts[0].Step, pts[len(pts)-1].Time)
	}
	if _, err := Series(Options{Store: s, Run: "nope"}, 10); !retainNotFound(err) {
		t.Errorf("an unknown run: %v", err)
	}
}

func retainNotFound(err error) bool { return retain.CodeOf(err) == retain.CodeUnknownReference }
