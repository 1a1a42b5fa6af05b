package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

func (s *Backend) HoldRun(run format.ID, exclusive bool) (*backend.RunLock, error) {
	if exclusive {
		return s.LockRunExclusive(run)
	}
	return s.LockRun(run)
}

// LockRun takes run's lock shared; the run must exist.
func (s *Backend) LockRun(run format.ID) (*backend.RunLock, error) {
	if _, err := s.lookupRun(run); err != nil {
		return nil, err
	}
	return s.lockRun(run, false)
}

// lockRun takes run's lock shared, creating the run first when create is
// set. gc renames a run away under its exclusive lock; a lock taken on a
// run that was renamed between our open and our flock guards nothing, so
// that is checked and retried.
func (s *Backend) lockRun(run format.ID, create bool) (*backend.RunLock, error) {
	if create {
		if err := s.makeRunsDir(); err != nil {
			return nil, err
		}
	}
	dir := s.runDir(run)
	for attempt := 0; ; attempt++ {
		created := false
		if !create {
			// nothing to make
		} else if err := os.Mkdir(dir, format.DirMode); err == nil {
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
			// The new run's entry must survive a power loss before any
			// stub names it.
			if err := syncDir(s.dir); err != nil {
				return nil, err
			}
			s.RemoveTombstone(run)
		}
		lp := filepath.Join(dir, format.LockName)
		f, err := openRunLock(run, dir, os.O_RDWR|os.O_CREATE)
		if !create && readOnly(err) {
			// A reader on a read-only store (a snapshot, a ro mount):
			// nobody can write or collect there, so a read lock is
			// enough, and no lock at all where none can be made.
			f, err = openRunLock(run, dir, os.O_RDONLY)
			if errors.Is(err, fs.ErrNotExist) {
				return backend.NewRunLock(run, dir, nil), nil
			}
		}
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
			return backend.NewRunLock(run, dir, f.Close), nil
		}
		f.Close()
		if attempt == 10 {
			return nil, fmt.Errorf("run %q keeps being collected while we write", run)
		}
	}
}

// BadLockError is a run whose .lock is not a file retval makes (a
// symlink, a FIFO, a directory): no writer and no gc can lock the run, so
// it is refused as corrupt wherever it is met — retain prints its input,
// gc skips the run as refused, catalogue --all lists it as refused, and
// verify reports the lock and still checks the run's values. It is the
// Err of an *Error with CodeCorrupt.
type BadLockError struct {
	Run  format.ID
	Path string
	Err  error // what fsx refused, or the file's type
}

func (e *BadLockError) Error() string {
	return fmt.Sprintf("run lock %s %v: retval never makes one, so nothing can lock run %s; remove it (what it points at is left alone) and the run is usable again", e.Path, e.Err, e.Run)
}

func (e *BadLockError) Unwrap() error { return e.Err }

// openRunLock opens the lock file of the run directory dir; a lock that
// is not a regular file is a *BadLockError (corrupt), never followed or
// waited on.
func openRunLock(run format.ID, dir string, flag int) (*os.File, error) {
	lp := filepath.Join(dir, format.LockName)
	f, err := fsx.OpenFile(lp, flag, format.FileMode)
	if fsx.Refused(err) {
		var pe *fsx.PathError
		why := err
		if errors.As(err, &pe) {
			why = pe.Err
		}
		return nil, &format.Error{Code: format.CodeCorrupt, Err: &BadLockError{Run: run, Path: lp, Err: why}}
	}
	return f, err
}

// readOnly reports whether err says the store cannot be written here.
func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// makeRunsDir creates the runs-dir if it is not there, syncing the
// directory that holds it, so that a power loss cannot take it away with
// the runs a stub already named.
func (s *Backend) makeRunsDir() error {
	return mkdirAllSynced(filepath.Clean(s.dir))
}

// mkdirAllSynced is os.MkdirAll that syncs the parent of every directory
// it creates (the agents' default store, ~/.local/state/retval/runs, is
// often made several levels deep at once).
func mkdirAllSynced(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, format.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// LockRunExclusive takes run's lock exclusively without waiting; the lock
// file is created if the run has none.
func (s *Backend) LockRunExclusive(run format.ID) (*backend.RunLock, error) {
	dir, err := s.lookupRun(run)
	if err != nil {
		return nil, err
	}
	lp := filepath.Join(dir, format.LockName)
	f, err := openRunLock(run, dir, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := flock.TryExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrBusy) {
			return nil, errRunBusy(run)
		}
		return nil, err
	}
	fi1, err1 := f.Stat()
	fi2, err2 := os.Lstat(lp)
	if err1 != nil || err2 != nil || !os.SameFile(fi1, fi2) {
		f.Close()
		return nil, errRunBusy(run)
	}
	return backend.NewRunLock(run, dir, f.Close), nil
}

func errRunBusy(run format.ID) error {
	return &format.Error{Code: format.CodeBusy, Err: fmt.Errorf("run %s: a writer holds its lock", run)}
}
