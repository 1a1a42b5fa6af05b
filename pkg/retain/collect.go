package retain

import (
	"time"

	"github.com/retval/retval/pkg/retain/internal/backend"
)

// RunsDirMissing reports whether the runs-dir does not exist yet: an empty
// store (nothing was ever retained there), not an error.
func (s *Store) RunsDirMissing() (bool, error) {
	b, err := s.backend()
	if err != nil {
		return false, err
	}
	return b.RunsDirMissing()
}

// Collection is a store opened for collection: what gc changes it
// through, on either backend.
type Collection struct {
	c backend.Collection
}

// OpenCollection opens the store for collection. In a runs-dir that is
// the runs-dir and its own .retval directory, both held open, so that
// every directory gc works in is reached relative to them without
// following a symlink; with create, .retval is made (and the runs-dir
// synced) when missing. A .retval that is a symlink or not a directory
// is a corrupt error that says what to do: the collector keeps its lock
// there, so it cannot work at all.
func (s *Store) OpenCollection(create bool) (*Collection, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	c, err := b.OpenCollection(create)
	if err != nil {
		return nil, err
	}
	return &Collection{c: c}, nil
}

// Close lets the directories go.
func (c *Collection) Close() { c.c.Close() }

// CollectorLock is the hold of the one collector of a store.
type CollectorLock struct {
	release func() // nil: nothing held
}

// Unlock lets the next collector in.
func (l *CollectorLock) Unlock() {
	if l != nil && l.release != nil {
		l.release()
		l.release = nil
	}
}

// LockCollector takes the store's collector lock without waiting:
// another collector holding it is an ErrBusy error. In a runs-dir it is
// .retval/gc.lock, locked exclusively; on object storage, a lease
// (internal/backend/object). With create unset nothing is created: a store where no
// gc ever ran is not locked (that is how a dry run changes nothing). A
// symlink in place of .retval or of the lock, or a lock that is not a
// regular file, is refused with a corrupt error that says what to do.
func (s *Store) LockCollector(create bool) (*CollectorLock, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	release, err := b.LockCollector(create)
	if err != nil {
		return nil, err
	}
	return &CollectorLock{release: release}, nil
}

// Trash lists the trash, sorted by name. No .retval or no trash is an
// empty list; a trash gc refuses is a *RefusedError.
func (c *Collection) Trash() ([]TrashEntry, error) {
	return c.c.Trash()
}

// EmptyTrash deletes the trash entry name and everything in it, never
// following a symlink.
func (c *Collection) EmptyTrash(name string) error {
	return c.c.EmptyTrash(name)
}

// CollectRun collects the run ri describes, as it was scanned: it
// re-checks that the run has not changed since the scan (a
// *RunChangedError otherwise), writes t as its tombstone and deletes the
// run's files. A run gone meanwhile is ErrNotFound or ErrCollected.
// Readers see the whole run or collected, never half a run.
//
// In a runs-dir that is done under the run's exclusive lock (taken
// without waiting: an ErrBusy error when a writer holds it), renaming the
// run into the trash (syncing the runs-dir and the trash) before the lock
// goes and its files are deleted, never following a symlink among them.
// On a full disk the tombstone is written after the run's files are
// deleted: collection is what frees the disk, so it must not need room
// first. Until then a lookup in the run says unknown_reference. On object
// storage a marker stands in for the lock and the rename, and the
// tombstone is the commit (internal/backend/object).
func (c *Collection) CollectRun(ri *RunInfo, t Tombstone) error {
	return c.c.CollectRun(ri, t)
}

// RemoveDebris removes debris entries of run (as ScanRun listed them).
// Each entry is re-checked: still there, not modified since it was
// scanned, still older than grace, and (for content or an index without a
// descriptor when scanned) still without one. removed[i] says whether
// entries[i] was removed; ErrNotFound or ErrCollected when the run is
// gone.
//
// In a runs-dir it works under the run's exclusive lock, taken without
// waiting (an ErrBusy error when a writer holds it), which proves their
// writer is gone; the run directory (and its .steps) is opened without
// following a symlink, and each entry removed relative to it, a symlink
// as itself. On object storage the run is marked meanwhile, as for a
// collection (internal/backend/object).
func (c *Collection) RemoveDebris(run ID, entries []RunEntry, now time.Time, grace time.Duration) (removed []bool, fails []DebrisError, err error) {
	return c.c.RemoveDebris(run, entries, now, grace)
}
