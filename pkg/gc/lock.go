package gc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain"
)

// gc's own names under the runs-dir's .retval directory.
const (
	lockName  = "gc.lock"
	trashName = "trash"
	dirMode   = 0o700
)

// storeDir is the runs-dir and its own .retval directory, both open; own
// is nil when .retval does not exist (and was not to be made).
type storeDir struct {
	root *fsx.Dir
	own  *fsx.Dir
}

func (sd *storeDir) Close() {
	sd.own.Close()
	sd.root.Close()
}

// storeMissing reports whether the runs-dir does not exist yet: an empty
// store, not an error.
func storeMissing(s *retain.Store) (bool, error) {
	root, err := fsx.OpenRoot(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, runsDirErr(s, err)
	}
	root.Close()
	return false, nil
}

func runsDirErr(s *retain.Store, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return retain.Errorf(retain.CodeIO, "runs-dir %s does not exist (check --runs-dir or RETVAL_RUNS_DIR)", s.Dir)
	}
	if errors.Is(err, fsx.ErrNotDir) {
		return retain.Errorf(retain.CodeIO, "runs-dir %s is not a directory (check --runs-dir or RETVAL_RUNS_DIR)", s.Dir)
	}
	return err
}

// openStoreDir opens the runs-dir and its .retval, never following a
// symlink at .retval; with create, .retval is made (and the runs-dir
// synced) when missing. A .retval that is a symlink or not a directory is
// a corrupt error that says what to do: gc keeps its lock there, so it
// cannot work at all.
func openStoreDir(s *retain.Store, create bool) (*storeDir, error) {
	root, err := fsx.OpenRoot(s.Dir)
	if err != nil {
		return nil, runsDirErr(s, err)
	}
	var own *fsx.Dir
	if create {
		own, err = root.MkdirOpen(retain.StoreDir, dirMode)
	} else {
		own, err = root.OpenDir(retain.StoreDir)
		if errors.Is(err, fs.ErrNotExist) {
			own, err = nil, nil
		}
	}
	if err != nil {
		root.Close()
		if fsx.Refused(err) || errors.Is(err, fsx.ErrNotDir) {
			return nil, retain.Errorf(retain.CodeCorrupt, "%v; gc keeps its lock, trash and tombstones there and never follows a link: remove it (what it points at is left alone) and run gc again", err)
		}
		return nil, err
	}
	return &storeDir{root: root, own: own}, nil
}

// refusedEntry is the failure for an entry of .retval gc will not use.
func refusedEntry(name string, err error, what string) Failure {
	return Failure{Path: filepath.Join(retain.StoreDir, name),
		Error: fmt.Sprintf("%v; %s: remove it (what it points at is left alone) and run gc again", err, what)}
}

// isRefusal reports whether err is fsx's refusal of an entry that is not
// what the store holds there.
func isRefusal(err error) bool { return fsx.Refused(err) || errors.Is(err, fsx.ErrNotDir) }

// StoreLock is gc's hold on a runs-dir.
type StoreLock struct{ f *os.File }

// Unlock lets the next gc in.
func (l *StoreLock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
	}
}

// LockStore takes the runs-dir's gc lock (.retval/gc.lock) exclusively
// without waiting; another gc holding it is a CodeBusy error. With create
// unset nothing is created: a store where no gc ever ran is not locked
// (that is how a dry run changes nothing). A symlink in place of .retval
// or of gc.lock, or a gc.lock that is not a regular file, is refused with
// a corrupt error that says what to do.
func LockStore(s *retain.Store, create bool) (*StoreLock, error) {
	sd, err := openStoreDir(s, create)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	if sd.own == nil {
		return &StoreLock{}, nil
	}
	flags := os.O_RDONLY
	if create {
		flags = os.O_RDWR | os.O_CREATE
	}
	f, err := sd.own.OpenFile(lockName, flags, 0o600)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return &StoreLock{}, nil
	}
	if isRefusal(err) {
		return nil, retain.Errorf(retain.CodeCorrupt, "%v; gc never locks through a link or a special file: remove it and run gc again", err)
	}
	if err != nil {
		return nil, err
	}
	if err := flock.TryExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrBusy) {
			return nil, retain.Errorf(CodeBusy, "another gc is running on %s; try again when it is done", s.Dir)
		}
		return nil, err
	}
	return &StoreLock{f: f}, nil
}
