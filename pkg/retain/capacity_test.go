package retain

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/retval/retval/pkg/retain/internal/backend/local"
)

// countDescriptorReads counts the descriptors read until the test ends
// (by any goroutine: the count is atomic).
func countDescriptorReads(t *testing.T) *atomic.Int64 {
	n := new(atomic.Int64)
	local.TestHookReadDescriptor = func() { n.Add(1) }
	t.Cleanup(func() { local.TestHookReadDescriptor = nil })
	return n
}

// A commit into a run well inside its limits reads no other value's
// descriptor: the capacity check bounds the run by its files' sizes. It
// read every descriptor of the run, so a long session's every result
// cost a read of all the results before it.
func TestCommitWellInsideLimitsReadsNoDescriptors(t *testing.T) {
	s := testStore(t)
	L := DefaultLimits()
	L.Threshold = 10
	data := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "value %d\n", i), 20) }
	for i := range 50 {
		if res, err := s.Retain(bytes.NewReader(data(i)), new(bytes.Buffer), RetainOptions{Run: "r", Call: fmt.Sprint("c", i), Limits: L, Policy: PolicyBounded}); err != nil || !res.Retained {
			t.Fatal(err, res)
		}
	}
	reads := countDescriptorReads(t)
	if res, err := s.Retain(bytes.NewReader(data(50)), new(bytes.Buffer), RetainOptions{Run: "r", Call: "c50", Limits: L, Policy: PolicyBounded}); err != nil || !res.Retained {
		t.Fatal(err, res)
	}
	// Its own, looked for before and read back after: two, whatever the
	// run holds (it was 52 here).
	if n := reads.Load(); n > 2 {
		t.Errorf("the 51st retain into a run read %d descriptors", n)
	}
}

// Near a limit the run is counted exactly: a descriptor that is not a
// committed value's (unreadable, or without its content) counts for
// nothing, though the bound counted it.
func TestCapacityNearTheLimitCountsCommittedValues(t *testing.T) {
	s := testStore(t)
	L := DefaultLimits()
	L.Threshold = 10
	L.MaxRunValues = 3
	data := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "value %d\n", i), 20) }
	for i := range 2 {
		if res, err := s.Retain(bytes.NewReader(data(i)), new(bytes.Buffer), RetainOptions{Run: "r", Call: fmt.Sprint("c", i), Limits: L, Policy: PolicyBounded}); err != nil || !res.Retained {
			t.Fatal(err, res)
		}
	}
	dir := filepath.Join(s.Dir, "r.values")
	for name, body := range map[string]string{
		"junk.meta.json":   "not json",
		"junk.txt":         "x",
		"nobody.meta.json": `{"id":"nobody"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reads := countDescriptorReads(t)
	if res, err := s.Retain(bytes.NewReader(data(2)), new(bytes.Buffer), RetainOptions{Run: "r", Call: "c2", Limits: L, Policy: PolicyBounded}); err != nil || !res.Retained {
		t.Fatalf("third value with two committed and two stray descriptors: %v %+v", err, res)
	}
	if n := reads.Load(); n < 4 {
		t.Errorf("a run at its limit was decided on %d descriptor reads, not counted exactly", n)
	}
	if _, err := s.Retain(bytes.NewReader(data(3)), new(bytes.Buffer), RetainOptions{Run: "r", Call: "c3", Limits: L, Policy: PolicyBounded}); CodeOf(err) != CodeCapacity {
		t.Fatalf("fourth value: %v, want a capacity error", err)
	}
}
