package retain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/s3store"
)

// stepName is the file name, inside a run's .steps, of the lookup-budget
// ledger of a step.
func stepName(step ID) string { return string(step) + ".json" }

// ledgerSize is a ledger file's fixed size: each update overwrites the
// whole record in place with one write, never changing the file's length.
const ledgerSize = 256

// maxLedgerSize bounds a ledger's read: a file longer than a few records
// is not one retval wrote.
const maxLedgerSize = 4 * ledgerSize

// StepSpent is what a step has used of its lookup budget, as its ledger
// records it: lookups answered or failed, and bytes of their results after
// JSON escaping.
type StepSpent struct {
	Lookups int64 `json:"lookups"`
	Bytes   int64 `json:"bytes"` // after JSON escaping
}

type ledgerRecord struct {
	Step ID `json:"step"`
	StepSpent
}

// StepLedger is one step's ledger, held: the run's lock shared (gc leaves
// the run alone) and the ledger's own lock exclusive (another process
// spending on the same step waits), until Close.
type StepLedger struct {
	lock  *RunLock
	f     *os.File
	step  ID
	spent StepSpent

	// On object storage: the ledger's run and key and the ETag it was
	// read with ("" for a new step); Save is a compare-and-swap against it.
	obj  *objStore
	run  ID
	key  string
	etag string

	// inMemory: the store cannot be written (ReadOnlyError): the step is
	// counted here alone, from what its ledger recorded, if anything.
	inMemory error
}

// InMemory returns why the step's spending is held in memory for this
// invocation, nil when its ledger keeps it: the store cannot be written
// (a read-only mount or snapshot), so nothing a step spends can be carried
// to the next invocation. The ledger's record, when there is one, is where
// the count starts; Save then only updates the count in memory.
func (l *StepLedger) InMemory() error { return l.inMemory }

// ErrLedgerChanged is Save's error when another process saved the step's
// ledger since this one was opened (object storage has no locks: the
// ledger is updated by compare-and-swap). Nothing was written; open the
// ledger again and redo the arithmetic.
var ErrLedgerChanged = errors.New("the step's ledger changed since it was read")

// OpenStepLedger opens and locks step's ledger in run, creating .steps and
// the ledger as needed; the run must exist. Neither is ever followed
// through a symlink, and the ledger is opened so that a FIFO or a device in
// its place neither blocks nor is read: each is corrupt, saying what to do.
// A ledger is read through a bound of a few records' size. A new step's
// ledger entry is made durable before OpenStepLedger returns, so nothing
// is answered under a step a crash could forget.
func (s *Store) OpenStepLedger(run, step ID) (*StepLedger, error) {
	if o, err := s.object(); err != nil {
		return nil, err
	} else if o != nil {
		return o.openStepLedger(s, run, step)
	}
	lock, err := s.LockRun(run)
	if err != nil {
		return nil, err
	}
	l := &StepLedger{lock: lock, step: step}
	if err := l.open(); err != nil {
		lock.Unlock()
		return nil, err
	}
	return l, nil
}

func (l *StepLedger) open() error {
	root, err := fsx.OpenRoot(l.lock.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	steps, err := root.MkdirOpen(stepsDirName, dirMode)
	if readOnly(err) {
		return l.openInMemory(root, err)
	}
	if err != nil {
		if fsx.Refused(err) || errors.Is(err, fsx.ErrNotDir) {
			return Errorf(CodeCorrupt, "step ledgers' directory %s cannot hold ledgers: remove it and retval makes it again, or resolve without --step; it is not a directory (symlinks are never followed)", root.Join(stepsDirName))
		}
		return err
	}
	defer steps.Close()
	name := stepName(l.step)
	p := steps.Join(name)
	f, err := steps.OpenFile(name, os.O_RDWR|os.O_CREATE, fileMode)
	if readOnly(err) {
		return l.openInMemory(root, err)
	}
	switch {
	case errors.Is(err, fsx.ErrSymlink):
		return Errorf(CodeCorrupt, "step ledger %s is a symlink and is never followed; start a new step with another --step id", p)
	case errors.Is(err, fsx.ErrNotRegular):
		return Errorf(CodeCorrupt, "step ledger %s is not a regular file (a FIFO, a device or a directory) and is never read; remove it, or start a new step with another --step id", p)
	case err != nil:
		return err
	}
	if err := flock.Exclusive(f); err != nil {
		f.Close()
		return err
	}
	l.f = f
	b, err := fsx.ReadAll(f, p, maxLedgerSize)
	if err != nil {
		f.Close()
		if fsx.Refused(err) {
			return Errorf(CodeCorrupt, "step ledger %s is unreadable (over %d bytes, and retval writes %d); start a new step with another --step id", p, maxLedgerSize, ledgerSize)
		}
		return err
	}
	if len(b) == 0 {
		// A new step: make its ledger's entry durable before anything is
		// answered under it.
		if err := steps.Sync(); err != nil {
			f.Close()
			return err
		}
		return nil
	}
	var rec ledgerRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Step != l.step || rec.Lookups < 0 || rec.Bytes < 0 {
		f.Close()
		return Errorf(CodeCorrupt, "step ledger %s is unreadable; start a new step with another --step id", p)
	}
	l.spent = rec.StepSpent
	return nil
}

// openInMemory is open on a store that cannot be written (why is the
// failed write): the step's ledger, if there is one, is read (never
// through a link, within its bound) and the step counted on from it in
// memory.
func (l *StepLedger) openInMemory(root *fsx.Dir, why error) error {
	l.inMemory = &ReadOnlyError{Dir: root.Path(), Err: why}
	steps, err := root.OpenDir(stepsDirName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no step was ever kept here
	}
	if err != nil {
		return err
	}
	defer steps.Close()
	p := steps.Join(stepName(l.step))
	b, err := steps.ReadFile(stepName(l.step), maxLedgerSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case fsx.Refused(err):
		return Errorf(CodeCorrupt, "step ledger %s is not a regular file or is over %d bytes, and is never read; start a new step with another --step id", p, maxLedgerSize)
	case err != nil:
		return err
	}
	var rec ledgerRecord
	if len(b) > 0 {
		if err := json.Unmarshal(b, &rec); err != nil || rec.Step != l.step || rec.Lookups < 0 || rec.Bytes < 0 {
			return Errorf(CodeCorrupt, "step ledger %s is unreadable; start a new step with another --step id", p)
		}
	}
	l.spent = rec.StepSpent
	return nil
}

// ReadOnlyError says the store cannot be written where a command needed
// to (Dir, the directory it could not write in). It is the Err of an
// *Error with CodeReadOnly, or why a step is counted in memory
// (StepLedger.InMemory).
type ReadOnlyError struct {
	Dir string
	Err error // the failed write
}

func (e *ReadOnlyError) Error() string {
	why := e.Err
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		why = errno
	}
	return fmt.Sprintf("%s cannot be written (%v)", e.Dir, why)
}

// readOnlyErr is the read_only error of a command that can do nothing on
// a store it cannot write: what was not writable, and what to do.
func readOnlyErr(dir string, err error, what string) error {
	return &Error{Code: CodeReadOnly, Err: fmt.Errorf("the runs-dir %w: %s", &ReadOnlyError{Dir: dir, Err: err}, what)}
}

func (e *ReadOnlyError) Unwrap() error { return e.Err }

// Step is the ledger's step.
func (l *StepLedger) Step() ID { return l.step }

// Spent is what the ledger recorded when it was opened (or last saved).
func (l *StepLedger) Spent() StepSpent { return l.spent }

// Save overwrites the record in place, with one write that never changes
// the file's length, and syncs it: once Save returns, a crash cannot make
// the step forget what it spent.
func (l *StepLedger) Save(sp StepSpent) error {
	b, err := json.Marshal(ledgerRecord{Step: l.step, StepSpent: sp})
	if err != nil {
		return err
	}
	if len(b) >= ledgerSize {
		return fmt.Errorf("step ledger record of %d bytes does not fit in %d", len(b), ledgerSize)
	}
	rec := append(b, bytes.Repeat([]byte{' '}, ledgerSize-1-len(b))...)
	rec = append(rec, '\n')
	if l.obj != nil {
		return l.objSave(rec, sp)
	}
	if l.inMemory != nil {
		l.spent = sp
		return nil
	}
	if _, err := l.f.WriteAt(rec, 0); err != nil {
		return err
	}
	if err := fsx.SyncFile(l.f); err != nil {
		return err
	}
	l.spent = sp
	return nil
}

// Close lets the ledger and the run go.
func (l *StepLedger) Close() {
	if l.obj != nil {
		return // nothing held
	}
	if l.f != nil {
		l.f.Close()
	}
	l.lock.Unlock()
}

// openStepLedger reads step's ledger of run from object storage, with the
// ETag that Save swaps against.
func (o *objStore) openStepLedger(s *Store, run, step ID) (*StepLedger, error) {
	if err := o.mustExist(s, run); err != nil {
		return nil, err
	}
	l := &StepLedger{step: step, run: run, obj: o, key: objKey(run, stepsDirName+"/"+stepName(step))}
	b, ob, err := o.b.Get(o.ctx, l.key, maxLedgerSize)
	switch {
	case errors.Is(err, s3store.ErrNotFound):
		return l, nil
	case errors.Is(err, s3store.ErrTooLarge):
		return nil, Errorf(CodeCorrupt, "step ledger %s is unreadable (over %d bytes, and retval writes %d); start a new step with another --step id", o.where(l.key), maxLedgerSize, ledgerSize)
	case err != nil:
		return nil, o.ioErr(err)
	}
	var rec ledgerRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Step != step || rec.Lookups < 0 || rec.Bytes < 0 {
		return nil, Errorf(CodeCorrupt, "step ledger %s is unreadable; start a new step with another --step id", o.where(l.key))
	}
	l.spent, l.etag = rec.StepSpent, ob.ETag
	return l, nil
}

// objSave writes the record if the ledger is still what was read: created
// only if absent for a new step, else replaced only if its ETag is the one
// read. A lost race is ErrLedgerChanged.
func (l *StepLedger) objSave(rec []byte, sp StepSpent) error {
	o := l.obj
	var etag string
	var err error
	if l.etag == "" {
		// A new ledger, like a read record, must not bring a collected
		// run back; its lookups then find the run collected. (A ledger
		// that is replaced was there: gc deletes it, and the replace
		// fails.)
		etag, err = o.b.Create(o.ctx, l.key, rec)
		if err == nil {
			o.undoIfCollected(l.run, l.key, etag)
		}
	} else {
		etag, err = o.b.Replace(o.ctx, l.key, rec, l.etag)
	}
	if errors.Is(err, s3store.ErrExists) || errors.Is(err, s3store.ErrChanged) {
		return ErrLedgerChanged
	}
	if err != nil {
		return o.ioErr(err)
	}
	l.spent, l.etag = sp, etag
	return nil
}
