package format

import (
	"errors"
	"fmt"
	"syscall"
)

// StepName is the file name, inside a run's .steps, of the lookup-budget
// ledger of a step.
func StepName(step ID) string { return string(step) + ".json" }

// LedgerSize is a ledger file's fixed size: each update overwrites the
// whole record in place with one write, never changing the file's length.
const LedgerSize = 256

// MaxLedgerSize bounds a ledger's read: a file longer than a few records
// is not one retval wrote.
const MaxLedgerSize = 4 * LedgerSize

// StepSpent is what a step has used of its lookup budget, as its ledger
// records it: lookups answered or failed, and bytes of their results after
// JSON escaping.
type StepSpent struct {
	Lookups int64 `json:"lookups"`
	Bytes   int64 `json:"bytes"` // after JSON escaping
}

type LedgerRecord struct {
	Step ID `json:"step"`
	StepSpent
}

// ErrLedgerChanged is Save's error when another process saved the step's
// ledger since this one was opened (object storage has no locks: the
// ledger is updated by compare-and-swap). Nothing was written; open the
// ledger again and redo the arithmetic.
var ErrLedgerChanged = errors.New("the step's ledger changed since it was read")

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

// ReadOnlyErr is the read_only error of a command that can do nothing on
// a store it cannot write: what was not writable, and what to do.
func ReadOnlyErr(dir string, err error, what string) error {
	return &Error{Code: CodeReadOnly, Err: fmt.Errorf("the runs-dir %w: %s", &ReadOnlyError{Dir: dir, Err: err}, what)}
}

func (e *ReadOnlyError) Unwrap() error { return e.Err }
