package human

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dustin/go-humanize"
)

func TestMatchesHumanize(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sizes := []uint64{0, 1, 9, 10, 82, 999, 1000, 1023, 1024, 1025, 1536, 10239, 10240, 10 << 20, 1<<30 - 1, 1 << 30, 82854982, math.MaxUint64}
	for range 5000 {
		sizes = append(sizes, r.Uint64()>>r.IntN(64))
	}
	for _, s := range sizes {
		if got, want := IBytes(s), humanize.IBytes(s); got != want {
			t.Errorf("IBytes(%d) = %q, humanize %q", s, got, want)
		}
	}
	ns := []int64{0, 1, -1, 999, 1000, -1000, 123456, 1234567, math.MaxInt64, math.MinInt64 + 1}
	for range 2000 {
		ns = append(ns, r.Int64()>>r.IntN(63)*int64(1-2*r.IntN(2)))
	}
	for _, n := range ns {
		if got, want := Comma(n), humanize.Comma(n); got != want {
			t.Errorf("Comma(%d) = %q, humanize %q", n, got, want)
		}
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ds := []time.Duration{0, time.Second - 1, time.Second, 2 * time.Second, time.Minute, 90 * time.Minute, 2 * time.Hour, 25 * time.Hour, 8 * 24 * time.Hour, 400 * 24 * time.Hour, 100 * 365 * 24 * time.Hour}
	for range 2000 {
		ds = append(ds, time.Duration(r.Int64N(int64(50*365*24*time.Hour))))
	}
	for _, d := range ds {
		for _, lbl := range [][2]string{{"ago", "from now"}, {"", ""}} {
			for _, a := range []time.Time{now.Add(-d), now.Add(d)} {
				if got, want := RelTime(a, now, lbl[0], lbl[1]), humanize.RelTime(a, now, lbl[0], lbl[1]); got != want {
					t.Errorf("RelTime(%v, %q) = %q, humanize %q", a.Sub(now), lbl, got, want)
				}
			}
		}
	}
}
