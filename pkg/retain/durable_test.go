package retain

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retval/retval/internal/fsx"
)

// TestNewRunIsDurable checks the fsync order of a retain into a new run
// in a new runs-dir: the runs-dir's parent after the runs-dir is made, the
// runs-dir after the run directory is made, and the run directory after
// the descriptor is renamed in — all before the stub is returned. A power
// loss after the stub was printed then cannot take the run away.
func TestNewRunIsDurable(t *testing.T) {
	parent := t.TempDir()
	s := Open(filepath.Join(parent, "runs"))
	var synced []string
	fsx.TestHookSync = func(dir string) { synced = append(synced, filepath.Clean(dir)) }
	defer func() { fsx.TestHookSync = nil }()
	L := DefaultLimits()
	L.Threshold = Unlimited
	res, err := s.Retain(bytes.NewReader([]byte(strings.Repeat("x\n", 10))), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L})
	if err != nil || !res.Retained {
		t.Fatal(res, err)
	}
	checkOrder(t, synced, []string{parent, s.Dir, s.RunDir("r")})
	// A second value in the same run creates no directory: only the run
	// directory is synced.
	synced = nil
	if _, err := s.Retain(bytes.NewReader([]byte("y\n")), io.Discard, RetainOptions{Run: "r", Call: "d", Limits: L}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(synced, parent) || slices.Contains(synced, s.Dir) || !slices.Contains(synced, s.RunDir("r")) {
		t.Errorf("second retain synced %q", synced)
	}
}

// checkOrder fails unless synced holds want in that order.
func checkOrder(t *testing.T, synced, want []string) {
	t.Helper()
	at := 0
	for _, d := range synced {
		if at < len(want) && d == want[at] {
			at++
		}
	}
	if at != len(want) {
		t.Errorf("synced %q; want %q in that order", synced, want)
	}
}

// TestNestedRunsDirIsDurable: a runs-dir made several levels deep at once
// (as ~/.local/state/retval/runs often is) has every new level synced into
// its parent.
func TestNestedRunsDirIsDurable(t *testing.T) {
	top := t.TempDir()
	s := Open(filepath.Join(top, "a", "b", "runs"))
	var synced []string
	fsx.TestHookSync = func(dir string) { synced = append(synced, filepath.Clean(dir)) }
	defer func() { fsx.TestHookSync = nil }()
	L := DefaultLimits()
	L.Threshold = Unlimited
	if _, err := s.Retain(bytes.NewReader([]byte("x\n")), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L}); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(top, "a")
	checkOrder(t, synced, []string{top, a, filepath.Join(a, "b"), s.Dir, s.RunDir("r")})
}
