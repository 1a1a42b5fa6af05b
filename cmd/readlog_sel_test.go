package cmd

import (
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// Each peek and each lookup of a resolve records what it selected in the
// run's read log, ranges as resolved in the value (peek's lines within
// its line cap), so that retval ui can show which lines were read back.
func TestReadLogKeepsSelections(t *testing.T) {
	dir := storeWithValue(t) // r1/c1: 3000 lines
	for _, args := range [][]string{
		{"peek", "--run", "r1", "c1", "--lines", "5-9"},
		{"peek", "--run", "r1", "c1"},
		{"peek", "--run", "r1", "c1", "--lines", "-3"},
		{"peek", "--run", "r1", "c1", "--bytes", "10-20"},
		{"peek", "--run", "r1", "c1", "--query", "xx", "--ignore-case"},
		{"resolve", "--run", "r1", "c1", "--lines", "7-8"},
		{"resolve", "--run", "r1", "c1", "--bytes", "-4"},
	} {
		if code, _, stderr := run(t, "", args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
	var got []string
	if _, err := retain.Open(dir).ScanReads("r1", func(r *retain.Read) {
		if r.Op == retain.OpRead {
			got = append(got, r.Via+" "+r.Sel)
		}
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"peek --lines 5-9",
		"peek --lines 1-400",
		"peek --lines 2998-3000",
		"peek --bytes 10-20",
		"peek --ignore-case --query xx",
		"resolve --lines 7-8",
		"resolve --bytes -4",
	}
	if len(got) != len(want) {
		t.Fatalf("read log: %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
}
