package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// gc in a runs-dir: the collector's lock .retval/gc.lock, each run's lock
// Taken exclusively, and a rename into .retval/trash before a run's
// files are deleted, so that no reader sees half a run.

// The collector's names under the runs-dir's .retval directory.
const (
	collectorLockName = "gc.lock"
	trashDirName      = "trash"
)

func (s *Backend) runsDirErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return format.Errorf(format.CodeIO, "runs-dir %s does not exist (check --runs-dir or RETVAL_RUNS_DIR)", s.dir)
	}
	if errors.Is(err, fsx.ErrNotDir) {
		return format.Errorf(format.CodeIO, "runs-dir %s is not a directory (check --runs-dir or RETVAL_RUNS_DIR)", s.dir)
	}
	return err
}

// localCollection is a runs-dir opened for collection: the runs-dir and
// its own .retval directory, both held open.
type localCollection struct {
	s    *Backend
	root *fsx.Dir
	own  *fsx.Dir // nil when .retval does not exist (and was not to be made)
}

func (b *Backend) OpenCollection(create bool) (backend.Collection, error) {
	c, err := b.openLocalCollection(create)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (b *Backend) openLocalCollection(create bool) (*localCollection, error) {
	s := b
	root, err := fsx.OpenRoot(s.dir)
	if err != nil {
		return nil, s.runsDirErr(err)
	}
	var own *fsx.Dir
	if create {
		own, err = root.MkdirOpen(format.StoreDirName, format.DirMode)
	} else {
		own, err = root.OpenDir(format.StoreDirName)
		if errors.Is(err, fs.ErrNotExist) {
			own, err = nil, nil
		}
	}
	if err != nil {
		root.Close()
		if format.IsRefusal(err) {
			return nil, format.Errorf(format.CodeCorrupt, "%v; gc keeps its lock, trash and tombstones there and never follows a link: remove it (what it points at is left alone) and run gc again", err)
		}
		if readOnly(err) {
			return nil, format.ReadOnlyErr(s.dir, err, gcReadOnly)
		}
		return nil, err
	}
	return &localCollection{s: s, root: root, own: own}, nil
}

func (c *localCollection) Close() {
	c.own.Close()
	c.root.Close()
}

func (b *Backend) LockCollector(create bool) (release func(), err error) {
	s := b
	c, err := b.openLocalCollection(create)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if c.own == nil {
		return nil, nil
	}
	flags := os.O_RDONLY
	if create {
		flags = os.O_RDWR | os.O_CREATE
	}
	f, err := c.own.OpenFile(collectorLockName, flags, format.FileMode)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if format.IsRefusal(err) {
		return nil, format.Errorf(format.CodeCorrupt, "%v; gc never locks through a link or a special file: remove it and run gc again", err)
	}
	if create && readOnly(err) {
		return nil, format.ReadOnlyErr(s.dir, err, gcReadOnly)
	}
	if err != nil {
		return nil, err
	}
	if err := flock.TryExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrBusy) {
			return nil, format.Errorf(format.CodeBusy, "another gc is running on %s; try again when it is done", s.dir)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (c *localCollection) Trash() ([]format.TrashEntry, error) {
	if c.own == nil {
		return nil, nil
	}
	trash, err := c.own.OpenDir(trashDirName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case format.IsRefusal(err):
		return nil, &format.RefusedError{Path: filepath.Join(format.StoreDirName, trashDirName), Err: err}
	case err != nil:
		return nil, err
	}
	defer trash.Close()
	names, err := trash.Names()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []format.TrashEntry
	for _, n := range names {
		b, err := trash.TreeSize(n)
		if err != nil {
			return nil, err
		}
		out = append(out, format.TrashEntry{Name: n, Path: filepath.Join(format.StoreDirName, trashDirName, n), Bytes: b})
	}
	return out, nil
}

func (c *localCollection) EmptyTrash(name string) error {
	trash, err := c.openOwn(trashDirName, false)
	if err != nil {
		return err
	}
	defer trash.Close()
	return trash.RemoveAll(name)
}

// openOwn opens (or, with create, makes) an entry of .retval as a
// directory, never following a symlink there.
func (c *localCollection) openOwn(name string, create bool) (*fsx.Dir, error) {
	if c.own == nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(c.root.Path(), format.StoreDirName), fs.ErrNotExist)
	}
	if create {
		return c.own.MkdirOpen(name, format.DirMode)
	}
	return c.own.OpenDir(name)
}

func (c *localCollection) CollectRun(ri *format.RunInfo, t format.Tombstone) error {
	s := c.s
	trash, err := c.openOwn(trashDirName, true)
	if err != nil {
		return fmt.Errorf("moving run %s out of the store: %w (run left in place)", ri.Run, err)
	}
	defer trash.Close()
	l, err := s.LockRunExclusive(ri.Run)
	if err != nil {
		return err
	}
	locked := true
	defer func() {
		if locked {
			l.Unlock()
		}
	}()
	name := filepath.Base(ri.Dir)
	if changed, err := runChanged(c.root, name, ri); err != nil {
		return err
	} else if changed != "" {
		return &format.RunChangedError{Run: ri.Run, What: changed}
	}
	// The ids first, then the tombstone (rememberCollected); on a full
	// disk, whichever did not fit is written once the run's files are gone.
	late, lateIDs := false, false
	if err := s.rememberCollected(ri, t.Collected); err != nil {
		if !noSpace(err) {
			return fmt.Errorf("recording the values of run %s: %w (run left in place)", ri.Run, err)
		}
		lateIDs = true
	}
	if err := s.WriteTombstone(t); err != nil {
		if !noSpace(err) {
			return fmt.Errorf("writing the tombstone of run %s: %w (run left in place)", ri.Run, err)
		}
		s.RemoveTombstone(ri.Run) // no half-written one
		late = true
	}
	dst, err := trashEntry(name)
	if err == nil {
		err = c.root.Rename(name, trash, dst)
	}
	if err != nil {
		if !late {
			s.RemoveTombstone(ri.Run)
		}
		return fmt.Errorf("moving run %s out of the store: %w (run left in place)", ri.Run, err)
	}
	locked = false
	l.Unlock()
	if err := trash.RemoveAll(dst); err != nil {
		return fmt.Errorf("run %s is collected, but deleting its files failed: %w (the next gc finishes it)", ri.Run, err)
	}
	if lateIDs {
		// Without them a lookup in the run written again says
		// unknown_reference, as before there were records: no reason
		// to fail a collection that is done.
		s.rememberCollected(ri, t.Collected)
	}
	if late {
		if err := s.WriteTombstone(t); err != nil {
			return fmt.Errorf("run %s is collected, but its tombstone could not be written: %w (lookups in it say unknown_reference)", ri.Run, err)
		}
	}
	return nil
}

// noSpace reports whether err says the disk (or the user's quota) is full.
func noSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) }

// trashEntry is a fresh name in the trash for the run directory name.
func trashEntry(name string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return name + "." + hex.EncodeToString(b[:]), nil
}

// runChanged tells, under the run's exclusive lock, whether the run gained
// or lost entries, was read, or had a ledger written since ScanRun made
// ri: then a collector's reason to remove it may no longer hold.
func runChanged(root *fsx.Dir, name string, ri *format.RunInfo) (string, error) {
	dir, err := root.OpenDir(name)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	names, err := dir.Names()
	if err != nil {
		return "", err
	}
	had := map[string]bool{}
	for _, e := range ri.Entries {
		if !strings.Contains(e.Name, "/") {
			had[e.Name] = true
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if !had[n] && n != format.LockName { // the lock may be ours, just made
			return fmt.Sprintf("%s appeared", n), nil
		}
		delete(had, n)
	}
	for n := range had {
		return fmt.Sprintf("%s disappeared", n), nil
	}
	if fi, err := dir.Lstat(format.ActivityName); err == nil && fi.ModTime().After(ri.LastActivity) {
		return "it was read", nil
	}
	if fi, err := dir.Lstat(format.StepsDirName); err == nil && !fi.ModTime().Equal(ri.StepsModTime) {
		return "a lookup ledger was written", nil
	}
	return "", nil
}

func (c *localCollection) RemoveDebris(run format.ID, entries []format.RunEntry, now time.Time, grace time.Duration) (removed []bool, fails []format.DebrisError, err error) {
	l, err := c.s.LockRunExclusive(run)
	if err != nil {
		return nil, nil, err
	}
	defer l.Unlock()
	base := filepath.Base(l.Dir)
	runDir, err := c.root.OpenDir(base)
	if err != nil {
		return nil, []format.DebrisError{{Path: base, Err: err}}, nil
	}
	defer runDir.Close()
	removed = make([]bool, len(entries))
	subdirs := map[string]*fsx.Dir{}
	defer func() {
		for _, d := range subdirs {
			d.Close()
		}
	}()
	for i, e := range entries {
		path := e.Path
		// e.Name is <name> or <subdir>/<name>.
		parts := strings.Split(e.Name, "/")
		dir := runDir
		if len(parts) == 2 {
			sub, ok := subdirs[parts[0]]
			if !ok {
				sub, err = runDir.OpenDir(parts[0])
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						fails = append(fails, format.DebrisError{Path: path, Err: err})
					}
					continue
				}
				subdirs[parts[0]] = sub
			}
			dir = sub
		} else if len(parts) != 1 {
			fails = append(fails, format.DebrisError{Path: path, Err: fmt.Errorf("%s: not an entry of a run directory", path)})
			continue
		}
		name := parts[len(parts)-1]
		fi, err := dir.Lstat(name)
		if err != nil {
			continue // gone already
		}
		if fi.ModTime().After(e.ModTime) || now.Sub(fi.ModTime()) < grace {
			continue // touched since the scan: not ours to judge now
		}
		if e.DescAbsent {
			if _, err := runDir.Lstat(format.MetaName(e.Value)); err == nil {
				continue // its descriptor arrived: a value now
			}
		}
		if err := dir.RemoveAll(name); err != nil {
			fails = append(fails, format.DebrisError{Path: path, Err: err})
			continue
		}
		removed[i] = true
	}
	return removed, fails, nil
}

// gcReadOnly is what a gc on a store it cannot write is told.
const gcReadOnly = "gc can collect nothing there; run it where the store is writable (gc --dry-run shows what it would do)"
