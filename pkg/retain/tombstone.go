package retain

import (
	"errors"
	"time"
)

// Tombstone is what gc leaves of a collected run.
type Tombstone struct {
	Run       ID        `json:"run"`
	Collected time.Time `json:"collected"`
	Values    int       `json:"values"`
	Bytes     int64     `json:"bytes"`
}

// MaxTombstoneBytes bounds what is read of a tombstone: gc writes about a
// hundred bytes, so anything larger is not one (a link to /dev/zero, say)
// and is never read whole.
const MaxTombstoneBytes = 64 << 10

const tombstoneExt = ".json"

// WriteTombstone records, durably, that run was collected: the file is
// written and synced under a temporary name, renamed, and its directory
// synced. A symlink in place of .retval or .retval/tombstones is refused
// (an *fsx.PathError), never written through.
func (s *Store) WriteTombstone(t Tombstone) error {
	b, err := s.backend()
	if err != nil {
		return err
	}
	return b.writeTombstone(t)
}

// ReadTombstone returns the tombstone of run, if gc left one. It never
// follows a symlink (at .retval, at tombstones or at the file), never
// opens anything but a regular file, and reads at most MaxTombstoneBytes:
// anything else, or a file that is not a tombstone of run, counts as no
// tombstone.
func (s *Store) ReadTombstone(run ID) (*Tombstone, bool) {
	b, err := s.backend()
	if err != nil {
		return nil, false
	}
	return b.readTombstone(run)
}

// errNotTombstone says a file in the tombstone directory does not hold
// one.
var errNotTombstone = errors.New("is not a tombstone")

// RemoveTombstone forgets a tombstone (a new run of that name was written,
// or the tombstone expired). It removes the entry itself, never what a
// symlink there points at. No tombstone is no error.
func (s *Store) RemoveTombstone(run ID) error {
	b, err := s.backend()
	if err != nil {
		return err
	}
	return b.removeTombstone(run)
}

// TombstoneFile is an entry of the tombstone directory as gc sees it.
type TombstoneFile struct {
	Name  string
	Path  string // relative to the runs-dir
	Bytes int64  // apparent size (of the whole tree, for a directory)
	// Temp: a writer's temporary file. Only gc writes tombstones, under
	// its lock, so one found by a gc holding the lock is debris.
	Temp bool
	// Tombstone is nil when the entry is not a readable tombstone: a
	// symlink, a FIFO, a directory, larger than MaxTombstoneBytes, or not
	// a tombstone's JSON under its run's name.
	Tombstone *Tombstone
	// IDs is the entry when it is a run's collected-ids record
	// (<run>.ids.json, read within MaxCollectedIDsBytes), in place of a
	// tombstone.
	IDs *CollectedIDs
	// Problem says why neither Tombstone nor IDs is set.
	Problem error
}

// TombstoneFiles lists the tombstone directory, reading each tombstone
// within its bound. No directory (no gc collected anything yet) is an
// empty list; a symlink in place of .retval or of the directory is a
// *RefusedError (wrapping an *fsx.PathError), and nothing behind it is
// read.
func (s *Store) TombstoneFiles() ([]TombstoneFile, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.tombstoneFiles()
}

// RemoveTombstoneFile removes the entry name of the tombstone directory
// (a file, a link, or a directory and everything in it) without following
// any symlink. A missing entry is no error.
func (s *Store) RemoveTombstoneFile(name string) error {
	b, err := s.backend()
	if err != nil {
		return err
	}
	return b.removeTombstoneFile(name)
}
