package local

import (
	"os"
	"path/filepath"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// commitSlot is the lock slot of a run's .lock file that stands for its
// commit lock on Windows (slot 0 is the run lock itself).
const commitSlot = 1

// lockCommit takes the run directory dir's commit lock, which writers of
// the run take exclusively around a commit (beside the run lock they hold
// shared). Windows cannot lock a directory, so it is a second slot of the
// run's .lock file (flock.ExclusiveSlot), which the writer holds open
// already.
func lockCommit(dir string) (unlock func(), err error) {
	run, _ := format.RunFromDirName(filepath.Base(dir))
	f, err := openRunLock(run, dir, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := flock.ExclusiveSlot(f, commitSlot); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "lock", Path: filepath.Join(dir, format.LockName), Err: err}
	}
	return func() {
		flock.UnlockSlot(f, commitSlot)
		f.Close()
	}, nil
}
