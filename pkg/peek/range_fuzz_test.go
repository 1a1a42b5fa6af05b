package peek

import (
	"fmt"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// FuzzParseRange: "A-B" is accepted exactly when it is the canonical
// decimal form of two non-negative integers, and then reads back as them;
// anything else is a usage error naming the input.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"1-40", "0-0", "401-800", "1-", "-1", "1--2", "01-2", "+1-2", "1-2 ", " 1-2", "1-2-3",
		"9223372036854775807-9223372036854775807", "9223372036854775808-1", "1_000-2", "１-２", "", "\x00", "1-2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b, err := ParseRange(s)
		if err != nil {
			if a != 0 || b != 0 {
				t.Fatalf("%q: error with %d-%d", s, a, b)
			}
			if retain.CodeOf(err) != retain.CodeUsage {
				t.Fatalf("%q: code %q, want usage", s, retain.CodeOf(err))
			}
			return
		}
		if a < 0 || b < 0 || fmt.Sprintf("%d-%d", a, b) != s {
			t.Fatalf("%q accepted as %d-%d", s, a, b)
		}
	})
}

// FuzzParseRangeRoundTrip: every pair of non-negative integers, written
// as A-B, reads back as itself.
func FuzzParseRangeRoundTrip(f *testing.F) {
	f.Add(int64(1), int64(40))
	f.Add(int64(0), int64(1<<62))
	f.Fuzz(func(t *testing.T, a, b int64) {
		if a < 0 || b < 0 {
			return
		}
		s := fmt.Sprintf("%d-%d", a, b)
		ga, gb, err := ParseRange(s)
		if err != nil || ga != a || gb != b {
			t.Fatalf("%q read as %d-%d, %v", s, ga, gb, err)
		}
	})
}

// FuzzParseRangeForms: the forms people type either fail as usage errors
// or give a range whose own text reads back as the same range.
func FuzzParseRangeForms(f *testing.F) {
	for _, s := range []string{"1-40", "670", "670-", "-50", "-0", "-", "0", "07", "1-", "-1-2", "9223372036854775807-", "-9223372036854775807", "", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []struct {
			parse func(string) (RangeArg, error)
			text  func(RangeArg) string
		}{{ParseLines, RangeArg.LineString}, {ParseBytes, RangeArg.String}} {
			r, err := p.parse(s)
			if err != nil {
				if retain.CodeOf(err) != retain.CodeUsage || r != (RangeArg{}) {
					t.Fatalf("%q: %+v, %v", s, r, err)
				}
				continue
			}
			if r.Tail < 0 || r.First < 0 || r.Last < 0 || r.Tail > 0 && (r.First != 0 || r.Last != 0) {
				t.Fatalf("%q read as %+v", s, r)
			}
			back, err := p.parse(p.text(r))
			if err != nil || back != r {
				t.Fatalf("%q = %+v, written %q, reads back as %+v, %v", s, r, p.text(r), back, err)
			}
		}
	})
}
