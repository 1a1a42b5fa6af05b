package retain

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

// On a store nobody can write (a read-only bind mount: root cannot write
// it either), a step's ledger is held in memory for the invocation,
// starting from what the ledger recorded, and says why; gc's lock is
// refused as read_only, not as an I/O error of a mkdir.
func TestReadOnlyStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	w := Open(dir)
	retainAll(t, w, "r", "c1", toolOutput("c1", 100))
	l, err := w.OpenStepLedger("r", "old")
	if err != nil {
		t.Fatal(err)
	}
	if l.InMemory() != nil {
		t.Fatalf("a writable store's ledger is in memory: %v", l.InMemory())
	}
	if err := l.Save(StepSpent{Lookups: 3, Bytes: 30}); err != nil {
		t.Fatal(err)
	}
	l.Close()

	s := Open(testenv.MountReadOnly(t, dir))
	for _, tc := range []struct {
		step ID
		was  StepSpent
	}{{"old", StepSpent{Lookups: 3, Bytes: 30}}, {"new", StepSpent{}}} {
		l, err := s.OpenStepLedger("r", tc.step)
		if err != nil {
			t.Fatalf("%s: %v", tc.step, err)
		}
		var ro *ReadOnlyError
		if !errors.As(l.InMemory(), &ro) || l.Spent() != tc.was {
			t.Fatalf("%s: in memory %v, spent %+v; want a ReadOnlyError and %+v", tc.step, l.InMemory(), l.Spent(), tc.was)
		}
		if err := l.Save(StepSpent{Lookups: tc.was.Lookups + 1}); err != nil || l.Spent().Lookups != tc.was.Lookups+1 {
			t.Fatalf("%s: save in memory: %v, spent %+v", tc.step, err, l.Spent())
		}
		l.Close()
	}
	if _, err := os.Lstat(filepath.Join(dir, "r.values", stepsDirName, "new.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a ledger was written: %v", err)
	}
	if _, err := s.LockCollector(true); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("gc's lock on a read-only store: %v, want read_only", err)
	}
	if _, err := s.OpenCollection(true); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("gc's collection on a read-only store: %v, want read_only", err)
	}
	// A dry run creates nothing, so it plans.
	l2, err := s.LockCollector(false)
	if err != nil {
		t.Fatalf("a dry run's lock: %v", err)
	}
	l2.Unlock()
}
