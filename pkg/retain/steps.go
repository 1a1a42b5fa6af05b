package retain

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/retval/retval/pkg/retain/internal/backend"
)

// StepLedger is one step's ledger, held: the run's lock shared (gc leaves
// the run alone) and the ledger's own lock exclusive (another process
// spending on the same step waits), until Close.
type StepLedger struct {
	step  ID
	spent StepSpent
	// held is how the backend keeps the ledger: a locked file in a
	// runs-dir, a compare-and-swap on object storage.
	held backend.LedgerHold

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
	if l.held, l.spent, l.inMemory, err = b.OpenStepLedger(run, step); err != nil {
		return nil, err
	}
	return l, nil
}

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
	if err := l.held.Save(rec); err != nil {
		return err
	}
	l.spent = sp
	return nil
}

// Close lets the ledger and the run go.
func (l *StepLedger) Close() { l.held.Close() }
