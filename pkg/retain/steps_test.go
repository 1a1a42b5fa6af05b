package retain

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

// The step ledger is retain's: a Go harness opens it, spends, and a later
// open (another process) sees what was saved, in the fixed-size record of
// SPEC §1 (.steps/<step>.json).
func TestStepLedgerRoundTrip(t *testing.T) {
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("x"))
	l, err := s.OpenStepLedger("r", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if l.Step() != "s1" || l.Spent() != (StepSpent{}) {
		t.Fatal(l.Step(), l.Spent())
	}
	if err := l.Save(StepSpent{Lookups: 3, Bytes: 42}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	b, err := os.ReadFile(filepath.Join(s.Dir, "r.values", ".steps", "s1.json"))
	if err != nil || len(b) != 256 || string(b[:36]) != `{"step":"s1","lookups":3,"bytes":42}` || b[255] != '\n' {
		t.Fatalf("%q %v", b, err)
	}
	l, err = s.OpenStepLedger("r", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if l.Spent() != (StepSpent{Lookups: 3, Bytes: 42}) {
		t.Fatal(l.Spent())
	}
	l.Close()

	// A ledger of another step, or one that does not read, is corrupt,
	// never silently reset; a symlink in its place is never followed.
	os.WriteFile(filepath.Join(s.Dir, "r.values", ".steps", "s2.json"), b, 0o600)
	if _, err := s.OpenStepLedger("r", "s2"); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	testenv.Symlink(t, "s1.json", filepath.Join(s.Dir, "r.values", ".steps", "s3.json"))
	if _, err := s.OpenStepLedger("r", "s3"); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	// An unknown run has no ledger, and gets none made.
	if _, err := s.OpenStepLedger("nope", "s1"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, "nope.values")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}
