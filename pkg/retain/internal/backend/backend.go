// Package backend is the seam between retval's store (package retain) and
// the storage it lives on: the Backend interface, with exactly two
// implementations (backend/local, backend/object), and what crosses it —
// an opened value, a commit and its outcome, a ledger's hold, a
// collection — beside the rules both backends apply alike (MissingRun,
// MissingValue, RememberCollected).
package backend

import (
	"time"

	"github.com/retval/retval/pkg/retain/internal/format"
)

// Backend is the storage a retain.Store lives on, and the one place that
// knows which: a runs-dir on the local file system (backend/local) or a
// prefix of an S3-compatible bucket (backend/object). The store picks one
// from its address, once, and every operation goes through it; what is
// the same on both — the rule of a committed value, stubs, limits, the
// checks of verify, the read log's records — is written once above it,
// in the store, and in package format.
//
// A backend keeps the contract of SPEC §1 with its own primitives: rename,
// flock and fsync in a runs-dir; a create with exactly one winner, a
// compare-and-swap and a lease on object storage (docs/design.md,
// "Object storage").
type Backend interface {
	// Runs.

	// RunIDs lists the runs, sorted.
	RunIDs() ([]format.ID, error)
	// RunsDirMissing reports whether the store holds nothing yet (no
	// runs-dir; no key under the prefix).
	RunsDirMissing() (bool, error)
	// ScanRunEntries lists a run's entries, classified (ScanRunEntries).
	ScanRunEntries(run format.ID) (*format.RunInfo, error)
	// CommittedIn is the one rule of a committed value (committedValue)
	// over the run as ri lists it: what CountValues and verify ask.
	CommittedIn(ri *format.RunInfo) func(format.ID) (*format.Descriptor, *format.ValueProblem)
	// RunBusy reports whether a writer holds the run (RunBusy).
	RunBusy(run format.ID) (bool, error)
	// HoldRun holds run for a writer (LockRun) or, exclusive, for gc
	// (LockRunExclusive).
	HoldRun(run format.ID, exclusive bool) (*RunLock, error)
	// MustExist is nil when run is there, else the error of a run that
	// is not: collected or unknown (missingRun).
	MustExist(run format.ID) error
	// Touch records read activity on run, at most once an hour (Touch).
	Touch(run format.ID)

	// Values.

	// Taken reports whether run holds a descriptor for id (Taken).
	Taken(run, id format.ID) bool
	// Values lists run's committed values, in no order (Values).
	Values(run format.ID) ([]format.Descriptor, error)
	// BeginWrite begins a retain of value id into run (made if needed).
	BeginWrite(run, id format.ID) (ValueWrite, error)
	// OpenValue opens value vid of run (typed as run and id were given).
	OpenValue(run format.ID, typedRun, typedID string, vid format.ID, touch bool) (*OpenedValue, error)

	// The read log.

	// LogRead appends one record to run's read log; a run that is not
	// there is not made by it.
	LogRead(run format.ID, r format.Read) error
	// ScanReads calls f with each record, oldest first (ScanReads).
	ScanReads(run format.ID, f func(*format.Read)) (format.ReadLogInfo, error)

	// OpenStepLedger opens step's ledger in run (OpenStepLedger): the
	// hold on it, what it recorded, and why the step is counted in memory
	// (a store that cannot be written), if it is.
	OpenStepLedger(run, step format.ID) (held LedgerHold, spent format.StepSpent, inMemory error, err error)

	// Tombstones and gc's other records (retain.Store.WriteTombstone ...).

	WriteTombstone(t format.Tombstone) error
	ReadTombstone(run format.ID) (*format.Tombstone, bool)
	RemoveTombstone(run format.ID) error
	// ReadTombstoneEntry reads an entry of the tombstones, at most max
	// bytes; none is an error matching fs.ErrNotExist.
	ReadTombstoneEntry(name string, max int64) ([]byte, error)
	WriteTombstoneEntry(name string, b []byte) error
	TombstoneFiles() ([]format.TombstoneFile, error)
	RemoveTombstoneFile(name string) error

	// verify (retain.Store.Verify), beside what it checks of every value.

	// VerifyHold holds run while verify checks it, so gc leaves it be;
	// held is false where nothing can, and verify then leaves out a run
	// collected meanwhile (collectedSince). probs are what is wrong with
	// the hold itself (a lock retval never makes).
	VerifyHold(run format.ID) (release func(), held bool, probs []format.Problem, err error)
	CollectedSince(run format.ID) bool
	// ReadIndex reads and checks the line index of d, a value of run.
	ReadIndex(run format.ID, d *format.Descriptor) (*format.Index, error)
	// OpenForVerify opens the stored bytes of d, a value of run, checking
	// what can be checked before they are read (there, the size d
	// records; locally, a regular file).
	OpenForVerify(run format.ID, d *format.Descriptor) (VerifyContent, *format.ValueProblem)
	// VerifyReads checks run's read log, e its first entry.
	VerifyReads(ri *format.RunInfo, e format.RunEntry) (format.Problem, bool)

	// gc.

	// LockCollector takes the one collector's hold on the store
	// (LockCollector); release is nil when nothing is held.
	LockCollector(create bool) (release func(), err error)
	// OpenCollection opens the store for collection (OpenCollection).
	OpenCollection(create bool) (Collection, error)
}

// RunLock is a writer's shared hold on a run: while it is held, gc (which
// takes the run's lock exclusively, without waiting) leaves the run alone.
type RunLock struct {
	Run     format.ID
	Dir     string
	release func() error // nil: nothing held
}

// NewRunLock is a hold on run (in dir) that release lets go.
func NewRunLock(run format.ID, dir string, release func() error) *RunLock {
	return &RunLock{Run: run, Dir: dir, release: release}
}

// Unlock releases the hold.
func (l *RunLock) Unlock() error {
	if l.release == nil {
		return nil // a read-only store: nothing to release
	}
	return l.release()
}

// LedgerHold is a backend's hold on an open step ledger.
type LedgerHold interface {
	// Save writes rec, the ledger's whole record, durably: once it
	// returns nil, a crash cannot make the step forget it.
	Save(rec []byte) error
	// Close lets the ledger (and whatever it holds) go.
	Close()
}

// Collection is a backend's side of a store opened for collection
// (retain.Collection): what gc changes the store through.
type Collection interface {
	Close()
	Trash() ([]format.TrashEntry, error)
	EmptyTrash(name string) error
	CollectRun(ri *format.RunInfo, t format.Tombstone) error
	RemoveDebris(run format.ID, entries []format.RunEntry, now time.Time, grace time.Duration) ([]bool, []format.DebrisError, error)
}
