package retain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
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
	step  ID
	spent StepSpent
	// held is how the backend keeps the ledger: a locked file in a
	// runs-dir, a compare-and-swap on object storage.
	held ledgerHold

	// inMemory: the store cannot be written (ReadOnlyError): the step is
	// counted here alone, from what its ledger recorded, if anything.
	inMemory error
}

// ledgerHold is a backend's hold on an open step ledger.
type ledgerHold interface {
	// save writes rec, the ledger's whole record, durably: once it
	// returns nil, a crash cannot make the step forget it.
	save(rec []byte) error
	// close lets the ledger (and whatever it holds) go.
	close()
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
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	l := &StepLedger{step: step}
	if l.held, l.spent, l.inMemory, err = b.openStepLedger(run, step); err != nil {
		return nil, err
	}
	return l, nil
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
	if l.inMemory != nil {
		l.spent = sp
		return nil
	}
	if err := l.held.save(rec); err != nil {
		return err
	}
	l.spent = sp
	return nil
}

// Close lets the ledger and the run go.
func (l *StepLedger) Close() { l.held.close() }
