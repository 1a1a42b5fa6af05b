package retain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/retval/retval/internal/flock"
)

// RunLock is a writer's shared hold on a run: while it is held, gc (which
// takes the run's lock exclusively, without waiting) leaves the run alone.
type RunLock struct {
	Run ID
	Dir string
	f   *os.File
}

// Unlock releases the hold.
func (l *RunLock) Unlock() error { return l.f.Close() }

// LockRun takes run's lock shared, for a writer other than retain (the
// lookup-budget ledger, say). The run must exist.
func (s *Store) LockRun(run ID) (*RunLock, error) {
	if _, err := s.lookupRun(run); err != nil {
		return nil, err
	}
	return s.lockRun(run, false)
}

// lockRun takes run's lock shared, creating the run first when create is
// set. gc renames a run away under its exclusive lock; a lock taken on a
// run that was renamed between our open and our flock guards nothing, so
// that is checked and retried.
func (s *Store) lockRun(run ID, create bool) (*RunLock, error) {
	if create {
		if err := os.MkdirAll(s.Dir, dirMode); err != nil {
			return nil, err
		}
	}
	dir := s.RunDir(run)
	for attempt := 0; ; attempt++ {
		created := false
		if !create {
			// nothing to make
		} else if err := os.Mkdir(dir, dirMode); err == nil {
			created = true
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !create {
				return nil, s.missingRun(run)
			}
			return nil, err
		}
		if err := checkRunDir(dir, fi); err != nil {
			return nil, err
		}
		if created {
			s.RemoveTombstone(run)
		}
		lp := filepath.Join(dir, lockName)
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, fileMode)
		if err != nil {
			return nil, err
		}
		if err := flock.Shared(f); err != nil {
			f.Close()
			return nil, err
		}
		fi1, err1 := f.Stat()
		fi2, err2 := os.Lstat(lp)
		if err1 == nil && err2 == nil && os.SameFile(fi1, fi2) {
			return &RunLock{Run: run, Dir: dir, f: f}, nil
		}
		f.Close()
		if attempt == 10 {
			return nil, fmt.Errorf("run %q keeps being collected while we write", run)
		}
	}
}
