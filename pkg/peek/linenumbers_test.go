package peek

import (
	"bytes"
	"testing"
)

// LineNumbers is the inverse of LineOffsets on a large indexed value:
// the first and last byte of every line sampled map back to that line.
func TestLineNumbers(t *testing.T) {
	b := bigLog(120_000) // indexed by retain
	_, v := retainValue(t, b)
	if v.Index() == nil {
		t.Fatal("a large value has no index")
	}
	total := int64(bytes.Count(b, []byte("\n")))
	var want []int64
	for l := int64(1); l <= total; l += 977 {
		want = append(want, l)
	}
	want = append(want, total)
	var at []int64 // each line sampled and the one after it
	for _, l := range want {
		at = append(at, l, l+1)
	}
	starts, err := LineOffsets(v, at)
	if err != nil {
		t.Fatal(err)
	}
	var offs, lines []int64
	for i, l := range want {
		start, next := starts[2*i], starts[2*i+1]
		offs = append(offs, start, start+1, next-1) // its first bytes and its newline
		lines = append(lines, l, l, l)
	}
	got, err := LineNumbers(v, offs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range offs {
		if got[i] != lines[i] {
			t.Fatalf("offset %d: line %d, want %d", offs[i], got[i], lines[i])
		}
	}
	if _, err := LineNumbers(v, []int64{v.Size()}); err == nil {
		t.Error("an offset at the end is taken")
	}
}
