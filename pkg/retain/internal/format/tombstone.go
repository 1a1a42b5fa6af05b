package format

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

const TombstoneExt = ".json"

// ErrNotTombstone says a file in the tombstone directory does not hold
// one.
var ErrNotTombstone = errors.New("is not a tombstone")

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
