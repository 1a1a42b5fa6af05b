package retain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain/internal/backend/local"
)

// TestValuesWholeOrCollected has gc collect the run just after Values has
// listed it: Values must answer the whole run or collected, never a part.
// Here the "gc" does what pkg/gc does: take the run's lock exclusively
// without waiting, skip the run when busy, else write the tombstone and
// rename the run away.
func TestValuesWholeOrCollected(t *testing.T) {
	s := testStore(t)
	for i := range 5 {
		retainAll(t, s, "r", fmt.Sprint("v", i), []byte("value\n"))
	}
	collected := false
	local.TestHookValuesListed = func() {
		l, err := s.LockRunExclusive("r")
		if err != nil {
			return // busy: a real gc skips the run
		}
		s.WriteTombstone(Tombstone{Run: "r", Collected: time.Now()})
		if err := os.Rename(s.RunDir("r"), filepath.Join(t.TempDir(), "trash")); err != nil {
			t.Error(err)
		}
		l.Unlock()
		collected = true
	}
	defer func() { local.TestHookValuesListed = nil }()
	vals, err := s.Values("r")
	switch {
	case err == nil && len(vals) == 5:
		if collected {
			t.Errorf("the whole run was listed although it was collected meanwhile")
		}
	case errors.Is(err, ErrCollected):
	default:
		t.Errorf("Values gave %d values, %v: want all 5 or collected (gc collected it: %v)", len(vals), err, collected)
	}
}
