package retain

import (
	"errors"
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
	descAbsent bool
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

// Runs scans every run of the store, sorted by run id. A run is Active
// when a writer holds its lock or its last activity is within grace of the
// store's clock. A runs-dir that does not exist is an error.
func (s *Store) Runs(grace time.Duration) ([]*RunInfo, error) {
	ids, err := s.RunIDs()
	if err != nil {
		return nil, err
	}
	var out []*RunInfo
	for _, id := range ids {
		ri, err := s.ScanRun(id)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected) {
			continue // collected while we looked
		}
		if errors.Is(err, ErrCorrupt) {
			// One refused run must not hide the others.
			out = append(out, &RunInfo{Run: id, Refused: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		ri.Busy, err = s.RunBusy(id)
		if errors.Is(err, ErrCorrupt) {
			// A lock retval did not make (a symlink): refused, as a run
			// directory that is not ours; the other runs are listed.
			out = append(out, &RunInfo{Run: id, Refused: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		ri.Active = ri.Busy || s.now().Sub(ri.LastActivity) < grace
		out = append(out, ri)
	}
	return out, nil
}

// RunIDs lists the runs of the store, sorted. Other names and plain files
// are left out; a symlink with a run's name is listed (it is never
// followed: opening it as a run is refused as corrupt), so that verify,
// catalogue and gc report it instead of passing over it in silence.
func (s *Store) RunIDs() ([]ID, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.runIDs()
}

// ScanRun lists a run directory with sizes, modification times and what
// each entry is. It reads directories, file metadata and the descriptors
// of values that have content (to count committed values by the one
// rule), never content.
func (s *Store) ScanRun(run ID) (*RunInfo, error) {
	ri, err := s.ScanRunEntries(run)
	if err != nil {
		return nil, err
	}
	s.CountValues(ri)
	return ri, nil
}

// ScanRunEntries is ScanRun without the count of values (Values is left
// 0), so it reads no descriptor but in the rare case a value has both a
// plain and a compressed content file: for a caller that needs the count
// of only some runs (gc, of the runs it removes), with CountValues.
func (s *Store) ScanRunEntries(run ID) (*RunInfo, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.scanRunEntries(run)
}

// CountValues sets ri.Values to the number of the run's committed values,
// by the one rule (committedValue): it reads every descriptor
// ScanRunEntries found.
func (s *Store) CountValues(ri *RunInfo) {
	b, err := s.backend()
	if err != nil {
		return
	}
	committed := b.committedIn(ri)
	ri.Values = 0
	for _, e := range ri.Entries {
		if e.Kind == KindValue && e.Name == metaName(e.Value) {
			if _, prob := committed(e.Value); prob == nil {
				ri.Values++
			}
		}
	}
}

// RunBusy reports whether a writer holds run's lock: it tries to take the
// lock exclusively without waiting and lets go at once. A run without a
// lock file has never had a writer and is not busy; one whose lock is not
// a regular file is a corrupt *BadLockError.
func (s *Store) RunBusy(run ID) (bool, error) {
	b, err := s.backend()
	if err != nil {
		return false, err
	}
	return b.runBusy(run)
}
