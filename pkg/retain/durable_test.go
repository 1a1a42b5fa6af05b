package retain

import (
	"bytes"
	"io"
	"os"
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

// TestRetainAgainSyncsNothing: a retain syncs its content and line index
// before they become the value's — a first retain, and a retain of the
// same bytes that restores what was lost — and not when the call already
// holds those bytes intact: the temporary files are dropped then, and
// their fsyncs (most of such a call's time on a disk that flushes) were
// for nothing.
func TestRetainAgainSyncsNothing(t *testing.T) {
	s := Open(t.TempDir())
	var synced []string
	fsx.TestHookSyncFile = func(name string) { synced = append(synced, filepath.Base(name)) }
	fsx.TestHookSync = func(dir string) { synced = append(synced, filepath.Clean(dir)) }
	defer func() { fsx.TestHookSyncFile, fsx.TestHookSync = nil, nil }()
	L := DefaultLimits()
	L.Threshold = Unlimited
	data := strings.Repeat("some output\n", IndexMinSize/10) // with a line index
	retain := func() {
		t.Helper()
		synced = nil
		res, err := s.Retain(strings.NewReader(data), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L})
		if err != nil || !res.Retained {
			t.Fatal(res, err)
		}
	}
	isIndex := func(name string) bool { return strings.HasPrefix(name, ".tmp-c-lines-") }
	isContent := func(name string) bool { return strings.HasPrefix(name, ".tmp-c-") && !isIndex(name) }

	retain()
	if !slices.ContainsFunc(synced, isContent) || !slices.ContainsFunc(synced, isIndex) {
		t.Errorf("a first retain synced %q: not its content file and its index", synced)
	}
	retain()
	if len(synced) > 0 {
		t.Errorf("a retain of the bytes the call holds synced %q", synced)
	}
	// The content lost: the same bytes again restore it, synced before it
	// is renamed into place.
	if err := os.Remove(filepath.Join(s.RunDir("r"), "c.txt")); err != nil {
		t.Fatal(err)
	}
	retain()
	if !slices.ContainsFunc(synced, isContent) || !slices.Contains(synced, s.RunDir("r")) {
		t.Errorf("restoring lost content synced %q: not the content file and the run directory", synced)
	}
	if got, err := readValue(s, "r", "c"); err != nil || string(got) != data {
		t.Errorf("after restoring, the value reads %d bytes (%v), want %d", len(got), err, len(data))
	}
	// The index lost: restored the same way, the content left as it is.
	if err := os.Remove(filepath.Join(s.RunDir("r"), "c.lines")); err != nil {
		t.Fatal(err)
	}
	retain()
	if !slices.ContainsFunc(synced, isIndex) || slices.ContainsFunc(synced, isContent) {
		t.Errorf("restoring a lost index synced %q: want its index, not the content", synced)
	}
	if _, err := os.Stat(filepath.Join(s.RunDir("r"), "c.lines")); err != nil {
		t.Errorf("the index was not restored: %v", err)
	}
}
