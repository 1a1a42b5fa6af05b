package retain

import (
	"sync"
)

// backend is the storage a Store lives on, and the one place that knows
// which: a runs-dir on the local file system (localBackend, local*.go) or
// a prefix of an S3-compatible bucket (objStore, object*.go). The store
// picks one from its address, once, and every operation goes through it;
// what is the same on both — the rule of a committed value, stubs, limits,
// the checks of verify, the read log's records — is written once above
// it, in the store's own files.
//
// A backend keeps the contract of SPEC §1 with its own primitives: rename,
// flock and fsync in a runs-dir; a create with exactly one winner, a
// compare-and-swap and a lease on object storage (docs/design.md,
// "Object storage").
type backend interface {
	// Runs.

	// runIDs lists the runs, sorted.
	runIDs() ([]ID, error)
	// runsDirMissing reports whether the store holds nothing yet (no
	// runs-dir; no key under the prefix).
	runsDirMissing() (bool, error)
	// scanRunEntries lists a run's entries, classified (ScanRunEntries).
	scanRunEntries(run ID) (*RunInfo, error)
	// committedIn is the one rule of a committed value (committedValue)
	// over the run as ri lists it: what CountValues and verify ask.
	committedIn(ri *RunInfo) func(ID) (*Descriptor, *valueProblem)
	// runBusy reports whether a writer holds the run (RunBusy).
	runBusy(run ID) (bool, error)
	// holdRun holds run for a writer (LockRun) or, exclusive, for gc
	// (LockRunExclusive).
	holdRun(run ID, exclusive bool) (*RunLock, error)
	// mustExist is nil when run is there, else the error of a run that
	// is not: collected or unknown (missingRun).
	mustExist(run ID) error
	// touch records read activity on run, at most once an hour (Touch).
	touch(run ID)

	// Values.

	// taken reports whether run holds a descriptor for id (Taken).
	taken(run, id ID) bool
	// values lists run's committed values, in no order (Values).
	values(run ID) ([]Descriptor, error)
	// beginWrite begins a retain of value id into run (made if needed).
	beginWrite(run, id ID) (valueWrite, error)
	// openValue opens value vid of run (typed as run and id were given).
	openValue(run ID, typedRun, typedID string, vid ID, touch bool) (*openedValue, error)

	// The read log.

	// logRead appends one record to run's read log; a run that is not
	// there is not made by it.
	logRead(run ID, r Read) error
	// scanReads calls f with each record, oldest first (ScanReads).
	scanReads(run ID, f func(*Read)) (ReadLogInfo, error)

	// openStepLedger opens step's ledger in run (OpenStepLedger): the
	// hold on it, what it recorded, and why the step is counted in memory
	// (a store that cannot be written), if it is.
	openStepLedger(run, step ID) (held ledgerHold, spent StepSpent, inMemory error, err error)

	// Tombstones and gc's other records (tombstone.go).

	writeTombstone(t Tombstone) error
	readTombstone(run ID) (*Tombstone, bool)
	removeTombstone(run ID) error
	// readTombstoneEntry reads an entry of the tombstones, at most max
	// bytes; none is an error matching fs.ErrNotExist.
	readTombstoneEntry(name string, max int64) ([]byte, error)
	writeTombstoneEntry(name string, b []byte) error
	tombstoneFiles() ([]TombstoneFile, error)
	removeTombstoneFile(name string) error

	// verify (verify.go), beside what it checks of every value.

	// verifyHold holds run while verify checks it, so gc leaves it be;
	// held is false where nothing can, and verify then leaves out a run
	// collected meanwhile (collectedSince). probs are what is wrong with
	// the hold itself (a lock retval never makes).
	verifyHold(run ID) (release func(), held bool, probs []Problem, err error)
	collectedSince(run ID) bool
	// readIndex reads and checks the line index of d, a value of run.
	readIndex(run ID, d *Descriptor) (*Index, error)
	// openForVerify opens the stored bytes of d, a value of run, checking
	// what can be checked before they are read (there, the size d
	// records; locally, a regular file).
	openForVerify(run ID, d *Descriptor) (verifyContent, *valueProblem)
	// verifyReads checks run's read log, e its first entry.
	verifyReads(ri *RunInfo, e RunEntry) (Problem, bool)

	// gc.

	// lockCollector takes the one collector's hold on the store
	// (LockCollector); release is nil when nothing is held.
	lockCollector(create bool) (release func(), err error)
	// openCollection opens the store for collection (OpenCollection).
	openCollection(create bool) (collection, error)
}

// chosenBackend is a Store's backend, chosen on first use from Dir.
type chosenBackend struct {
	once sync.Once
	b    backend
	err  error
}

// backend returns the store's backend, chosen once from its address: an
// s3://BUCKET/PREFIX address is object storage, anything else a runs-dir.
// An s3:// address that could not be opened (no credentials, a bad
// address) is its error, returned by every operation.
func (s *Store) backend() (backend, error) {
	s.be.once.Do(func() {
		if IsObjectStore(s.Dir) {
			var o *objStore
			o, s.be.err = openObject(s.Dir, s.now)
			if s.be.err == nil {
				s.be.b = o
			}
			return
		}
		s.be.b = &localBackend{dir: s.Dir, now: s.now, cache: func() *ValueCache { return s.Cache }}
	})
	return s.be.b, s.be.err
}
