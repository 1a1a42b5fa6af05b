package format

import (
	"io/fs"
	"time"
)

// EntryKind says what an entry of a run directory is to the store.
type EntryKind int

const (
	// KindOwn is the run's own bookkeeping: .lock, .activity, the read
	// log .reads, .steps and the ledgers in it.
	KindOwn EntryKind = iota
	// KindValue is a descriptor, or the content or index of a value whose
	// descriptor exists.
	KindValue
	// KindTemp is a writer's temporary file (isTemp).
	KindTemp
	// KindOrphan is content or an index whose descriptor does not exist.
	KindOrphan
	// KindStray is anything else: not a file retval writes.
	KindStray
)

var kindNames = [...]string{"own", "value", "temp", "orphan", "stray"}

func (k EntryKind) String() string { return kindNames[k] }

// Debris reports whether an entry of this kind belongs to no committed
// value and is not the run's own bookkeeping: what gc removes (once old).
func (k EntryKind) Debris() bool { return k >= KindTemp }

// RunEntry is one entry of a run directory. Entries of .steps appear as
// ".steps/<name>".
type RunEntry struct {
	Name string
	// Path is the entry's path relative to the runs-dir.
	Path string
	Kind EntryKind
	// Value is the value an entry of KindValue or KindOrphan is named for.
	Value ID
	// Bytes is the apparent size (as du -sb counts it), the whole tree for a
	// directory.
	Bytes int64
	// ModTime is the newest modification time, of the whole tree for a
	// directory.
	ModTime time.Time
	IsDir   bool
	// Special is the type of an entry with a value file's name that is a
	// FIFO, a device or a socket (0 otherwise). retval never makes one, so
	// verify reports it as corrupt; gc removes it as a stray.
	Special fs.FileMode
	// descAbsent: an orphan whose value had no descriptor when scanned
	// (not a content file its descriptor does not name); RemoveDebris
	// leaves it if one has arrived since.
	DescAbsent bool
}

// RunInfo describes a run as a whole: what `catalogue --all` lists and what
// gc decides on.
type RunInfo struct {
	Run ID `json:"run"`
	// Values counts the run's committed values: descriptors that read as
	// their value's, whose content file is there at the size they record
	// (the rule Values and retain's capacity use; verify also checks the
	// SHA-256).
	Values int `json:"values"`
	// Bytes is the run directory's apparent size, as `du -sb` counts it.
	Bytes int64 `json:"bytes"`
	// LastActivity is the newest modification time of the run's files,
	// .activity (read stamps) included.
	LastActivity time.Time `json:"last_activity"`
	// Active: a writer holds the run's lock, or its last activity is within
	// the grace period given to Runs.
	Active bool `json:"active"`
	// Busy: a writer held the run's lock when it was looked at.
	Busy bool `json:"-"`
	// Refused says why the run directory was not looked into (another
	// user's, or not a plain directory); the other fields are then zero.
	Refused string `json:"refused,omitempty"`

	Dir string `json:"-"`
	// DirModTime and StepsModTime are the modification times of the run
	// directory and of its .steps directory (zero when there is none): a
	// new file in either changes them, so a caller can tell cheaply
	// whether a run changed since it was scanned.
	DirModTime   time.Time  `json:"-"`
	StepsModTime time.Time  `json:"-"`
	Entries      []RunEntry `json:"-"`
}
