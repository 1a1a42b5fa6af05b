package retain

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
)

// The collector's names under the runs-dir's .retval directory.
const (
	collectorLockName = "gc.lock"
	trashDirName      = "trash"
)

// gcReadOnly is what a gc on a store it cannot write is told.
const gcReadOnly = "gc can collect nothing there; run it where the store is writable (gc --dry-run shows what it would do)"

// CodeBusy is the code of a lock somebody else holds: a writer's on a run
// gc wanted, or another collector's on the runs-dir.
const CodeBusy Code = "busy"

// ErrBusy matches (errors.Is) every error with CodeBusy.
var ErrBusy = &Error{Code: CodeBusy}

// RunsDirMissing reports whether the runs-dir does not exist yet: an empty
// store (nothing was ever retained there), not an error.
func (s *Store) RunsDirMissing() (bool, error) {
	if missing, ok, err := s.objRunsDirMissing(); ok {
		return missing, err
	}
	root, err := fsx.OpenRoot(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, s.runsDirErr(err)
	}
	root.Close()
	return false, nil
}

func (s *Store) runsDirErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return Errorf(CodeIO, "runs-dir %s does not exist (check --runs-dir or RETVAL_RUNS_DIR)", s.Dir)
	}
	if errors.Is(err, fsx.ErrNotDir) {
		return Errorf(CodeIO, "runs-dir %s is not a directory (check --runs-dir or RETVAL_RUNS_DIR)", s.Dir)
	}
	return err
}

// Collection is a runs-dir opened for collection: the runs-dir and its
// own .retval directory, both held open, so that every directory gc works
// in is reached relative to them without following a symlink.
type Collection struct {
	s    *Store
	root *fsx.Dir
	own  *fsx.Dir  // nil when .retval does not exist (and was not to be made)
	obj  *objStore // the object backend, nil for a local runs-dir
}

// OpenCollection opens the runs-dir and its .retval, never following a
// symlink at .retval; with create, .retval is made (and the runs-dir
// synced) when missing. A .retval that is a symlink or not a directory is
// a corrupt error that says what to do: the collector keeps its lock
// there, so it cannot work at all.
func (s *Store) OpenCollection(create bool) (*Collection, error) {
	if o, ok, err := s.objBackend(); ok {
		return &Collection{s: s, obj: o}, err
	}
	root, err := fsx.OpenRoot(s.Dir)
	if err != nil {
		return nil, s.runsDirErr(err)
	}
	var own *fsx.Dir
	if create {
		own, err = root.MkdirOpen(storeDirName, dirMode)
	} else {
		own, err = root.OpenDir(storeDirName)
		if errors.Is(err, fs.ErrNotExist) {
			own, err = nil, nil
		}
	}
	if err != nil {
		root.Close()
		if isRefusal(err) {
			return nil, Errorf(CodeCorrupt, "%v; gc keeps its lock, trash and tombstones there and never follows a link: remove it (what it points at is left alone) and run gc again", err)
		}
		if readOnly(err) {
			return nil, readOnlyErr(s.Dir, err, gcReadOnly)
		}
		return nil, err
	}
	return &Collection{s: s, root: root, own: own}, nil
}

// Close lets the directories go.
func (c *Collection) Close() {
	c.own.Close()
	c.root.Close()
}

// isRefusal reports whether err is fsx's refusal of an entry that is not
// what the store holds there.
func isRefusal(err error) bool { return fsx.Refused(err) || errors.Is(err, fsx.ErrNotDir) }

// RefusedError is a part of the runs-dir's own .retval that the collector
// will not work in (a symlink in place of trash or tombstones, say).
type RefusedError struct {
	Path string // relative to the runs-dir
	Err  error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// CollectorLock is the hold of the one collector of a runs-dir.
type CollectorLock struct {
	f     *os.File
	lease *objLease // on object storage
}

// Unlock lets the next collector in.
func (l *CollectorLock) Unlock() {
	if l != nil {
		l.unlockLease()
	}
	if l != nil && l.f != nil {
		l.f.Close()
	}
}

// LockCollector takes the runs-dir's collector lock (.retval/gc.lock)
// exclusively without waiting; another collector holding it is an ErrBusy
// error. With create unset nothing is created: a store where no gc ever
// ran is not locked (that is how a dry run changes nothing). A symlink in
// place of .retval or of the lock, or a lock that is not a regular file,
// is refused with a corrupt error that says what to do.
func (s *Store) LockCollector(create bool) (*CollectorLock, error) {
	if o, ok, err := s.objBackend(); ok {
		if err != nil {
			return nil, err
		}
		return o.lockCollector(s, create)
	}
	c, err := s.OpenCollection(create)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if c.own == nil {
		return &CollectorLock{}, nil
	}
	flags := os.O_RDONLY
	if create {
		flags = os.O_RDWR | os.O_CREATE
	}
	f, err := c.own.OpenFile(collectorLockName, flags, fileMode)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return &CollectorLock{}, nil
	}
	if isRefusal(err) {
		return nil, Errorf(CodeCorrupt, "%v; gc never locks through a link or a special file: remove it and run gc again", err)
	}
	if create && readOnly(err) {
		return nil, readOnlyErr(s.Dir, err, gcReadOnly)
	}
	if err != nil {
		return nil, err
	}
	if err := flock.TryExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrBusy) {
			return nil, Errorf(CodeBusy, "another gc is running on %s; try again when it is done", s.Dir)
		}
		return nil, err
	}
	return &CollectorLock{f: f}, nil
}

// TrashEntry is what an interrupted collection left in .retval/trash.
type TrashEntry struct {
	Name  string // in the trash
	Path  string // relative to the runs-dir
	Bytes int64  // apparent size of the whole tree
}

// Trash lists the trash, sorted by name. No .retval or no trash is an
// empty list; a trash gc refuses is a *RefusedError.
func (c *Collection) Trash() ([]TrashEntry, error) {
	if c.obj != nil {
		return c.trash()
	}
	if c.own == nil {
		return nil, nil
	}
	trash, err := c.own.OpenDir(trashDirName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case isRefusal(err):
		return nil, &RefusedError{Path: filepath.Join(storeDirName, trashDirName), Err: err}
	case err != nil:
		return nil, err
	}
	defer trash.Close()
	names, err := trash.Names()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []TrashEntry
	for _, n := range names {
		b, err := trash.TreeSize(n)
		if err != nil {
			return nil, err
		}
		out = append(out, TrashEntry{Name: n, Path: filepath.Join(storeDirName, trashDirName, n), Bytes: b})
	}
	return out, nil
}

// EmptyTrash deletes the trash entry name and everything in it, never
// following a symlink.
func (c *Collection) EmptyTrash(name string) error {
	if c.obj != nil {
		return c.emptyTrash(name)
	}
	trash, err := c.openOwn(trashDirName, false)
	if err != nil {
		return err
	}
	defer trash.Close()
	return trash.RemoveAll(name)
}

// openOwn opens (or, with create, makes) an entry of .retval as a
// directory, never following a symlink there.
func (c *Collection) openOwn(name string, create bool) (*fsx.Dir, error) {
	if c.own == nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(c.root.Path(), storeDirName), fs.ErrNotExist)
	}
	if create {
		return c.own.MkdirOpen(name, dirMode)
	}
	return c.own.OpenDir(name)
}

// RunChangedError says a run changed between its scan and its collection:
// the reason to collect it may no longer hold.
type RunChangedError struct {
	Run  ID
	What string // "c3.txt appeared", "it was read", ...
}

func (e *RunChangedError) Error() string {
	return fmt.Sprintf("run %s changed since it was scanned: %s", e.Run, e.What)
}

// CollectRun collects the run ri describes, as it was scanned: under its
// exclusive lock (taken without waiting: an ErrBusy error when a writer
// holds it), it re-checks that the run has not changed since the scan
// (a *RunChangedError otherwise), writes t as its tombstone, renames it
// into the trash (syncing the runs-dir and the trash), lets the lock go
// and deletes the files, never following a symlink among them. A run gone
// meanwhile is ErrNotFound or ErrCollected. Readers see the whole run or
// collected, never half a run.
//
// On a full disk the tombstone is written after the run's files are
// deleted: collection is what frees the disk, so it must not need room
// first. Until then a lookup in the run says unknown_reference.
func (c *Collection) CollectRun(ri *RunInfo, t Tombstone) error {
	if c.obj != nil {
		return c.collectRun(ri, t)
	}
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
		return &RunChangedError{Run: ri.Run, What: changed}
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
func runChanged(root *fsx.Dir, name string, ri *RunInfo) (string, error) {
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
		if !had[n] && n != lockName { // the lock may be ours, just made
			return fmt.Sprintf("%s appeared", n), nil
		}
		delete(had, n)
	}
	for n := range had {
		return fmt.Sprintf("%s disappeared", n), nil
	}
	if fi, err := dir.Lstat(activityName); err == nil && fi.ModTime().After(ri.LastActivity) {
		return "it was read", nil
	}
	if fi, err := dir.Lstat(stepsDirName); err == nil && !fi.ModTime().Equal(ri.StepsModTime) {
		return "a lookup ledger was written", nil
	}
	return "", nil
}

// DebrisError is a debris file that could not be removed.
type DebrisError struct {
	Path string // relative to the runs-dir
	Err  error
}

// RemoveDebris removes debris entries of run (as ScanRun listed them),
// under the run's exclusive lock, taken without waiting (an ErrBusy error
// when a writer holds it; ErrNotFound or ErrCollected when the run is
// gone), which proves their writer is gone. Each entry is re-checked: still
// there, not modified since it was scanned, still older than grace, and
// (for content or an index without a descriptor when scanned) still
// without one. The run directory (and its .steps) is opened without
// following a symlink, and each entry removed relative to it, a symlink as
// itself. removed[i] says whether entries[i] was removed.
func (c *Collection) RemoveDebris(run ID, entries []RunEntry, now time.Time, grace time.Duration) (removed []bool, fails []DebrisError, err error) {
	if c.obj != nil {
		return c.removeDebris(run, entries, now, grace)
	}
	l, err := c.s.LockRunExclusive(run)
	if err != nil {
		return nil, nil, err
	}
	defer l.Unlock()
	base := filepath.Base(l.Dir)
	runDir, err := c.root.OpenDir(base)
	if err != nil {
		return nil, []DebrisError{{base, err}}, nil
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
						fails = append(fails, DebrisError{path, err})
					}
					continue
				}
				subdirs[parts[0]] = sub
			}
			dir = sub
		} else if len(parts) != 1 {
			fails = append(fails, DebrisError{path, fmt.Errorf("%s: not an entry of a run directory", path)})
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
		if e.descAbsent {
			if _, err := runDir.Lstat(metaName(e.Value)); err == nil {
				continue // its descriptor arrived: a value now
			}
		}
		if err := dir.RemoveAll(name); err != nil {
			fails = append(fails, DebrisError{path, err})
			continue
		}
		removed[i] = true
	}
	return removed, fails, nil
}
