//go:build unix

package local

import (
	"os"

	"github.com/retval/retval/internal/flock"
)

// lockCommit takes the run directory dir's commit lock, which writers of
// the run take exclusively around a commit (beside the run lock they hold
// shared): on Unix, a flock(2) lock on the directory's own descriptor.
func lockCommit(dir string) (unlock func(), err error) {
	dirf, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := flock.Exclusive(dirf); err != nil {
		dirf.Close()
		return nil, err
	}
	return func() {
		flock.Unlock(dirf)
		dirf.Close()
	}, nil
}
