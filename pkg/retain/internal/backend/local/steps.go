package local

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// OpenStepLedger holds the run's lock shared (gc leaves the run alone)
// and the ledger's own lock exclusive (another process spending on the
// same step waits), until Close.
func (b *Backend) OpenStepLedger(run, step format.ID) (backend.LedgerHold, format.StepSpent, error, error) {
	lock, err := b.LockRun(run)
	if err != nil {
		return nil, format.StepSpent{}, nil, err
	}
	h := &localLedger{lock: lock, step: step}
	if err := h.open(); err != nil {
		lock.Unlock()
		return nil, format.StepSpent{}, nil, err
	}
	return h, h.spent, h.inMemory, nil
}

// localLedger is a ledger file in the run's .steps, held locked.
type localLedger struct {
	lock *backend.RunLock
	f    *os.File // nil when the step is counted in memory
	step format.ID
	// What open found: the ledger's record, and why the step is counted
	// in memory (StepLedger.InMemory).
	spent    format.StepSpent
	inMemory error
}

func (h *localLedger) open() error {
	root, err := fsx.OpenRoot(h.lock.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	steps, err := root.MkdirOpen(format.StepsDirName, format.DirMode)
	if readOnly(err) {
		return h.openInMemory(root, err)
	}
	if err != nil {
		if fsx.Refused(err) || errors.Is(err, fsx.ErrNotDir) {
			return format.Errorf(format.CodeCorrupt, "step ledgers' directory %s cannot hold ledgers: remove it and retval makes it again, or resolve without --step; it is not a directory (symlinks are never followed)", root.Join(format.StepsDirName))
		}
		return err
	}
	defer steps.Close()
	name := format.StepName(h.step)
	p := steps.Join(name)
	f, err := steps.OpenFile(name, os.O_RDWR|os.O_CREATE, format.FileMode)
	if readOnly(err) {
		return h.openInMemory(root, err)
	}
	switch {
	case errors.Is(err, fsx.ErrSymlink):
		return format.Errorf(format.CodeCorrupt, "step ledger %s is a symlink and is never followed; start a new step with another --step id", p)
	case errors.Is(err, fsx.ErrNotRegular):
		return format.Errorf(format.CodeCorrupt, "step ledger %s is not a regular file (a FIFO, a device or a directory) and is never read; remove it, or start a new step with another --step id", p)
	case err != nil:
		return err
	}
	if err := flock.Exclusive(f); err != nil {
		f.Close()
		return err
	}
	h.f = f
	b, err := fsx.ReadAll(f, p, format.MaxLedgerSize)
	if err != nil {
		f.Close()
		if fsx.Refused(err) {
			return format.Errorf(format.CodeCorrupt, "step ledger %s is unreadable (over %d bytes, and retval writes %d); start a new step with another --step id", p, format.MaxLedgerSize, format.LedgerSize)
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
	var rec format.LedgerRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Step != h.step || rec.Lookups < 0 || rec.Bytes < 0 {
		f.Close()
		return format.Errorf(format.CodeCorrupt, "step ledger %s is unreadable; start a new step with another --step id", p)
	}
	h.spent = rec.StepSpent
	return nil
}

// openInMemory is open on a store that cannot be written (why is the
// failed write): the step's ledger, if there is one, is read (never
// through a link, within its bound) and the step counted on from it in
// memory.
func (h *localLedger) openInMemory(root *fsx.Dir, why error) error {
	h.inMemory = &format.ReadOnlyError{Dir: root.Path(), Err: why}
	steps, err := root.OpenDir(format.StepsDirName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no step was ever kept here
	}
	if err != nil {
		return err
	}
	defer steps.Close()
	p := steps.Join(format.StepName(h.step))
	b, err := steps.ReadFile(format.StepName(h.step), format.MaxLedgerSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case fsx.Refused(err):
		return format.Errorf(format.CodeCorrupt, "step ledger %s is not a regular file or is over %d bytes, and is never read; start a new step with another --step id", p, format.MaxLedgerSize)
	case err != nil:
		return err
	}
	var rec format.LedgerRecord
	if len(b) > 0 {
		if err := json.Unmarshal(b, &rec); err != nil || rec.Step != h.step || rec.Lookups < 0 || rec.Bytes < 0 {
			return format.Errorf(format.CodeCorrupt, "step ledger %s is unreadable; start a new step with another --step id", p)
		}
	}
	h.spent = rec.StepSpent
	return nil
}

// Save overwrites the record in place, with one write that never changes
// the file's length, and syncs it.
func (h *localLedger) Save(rec []byte) error {
	if _, err := h.f.WriteAt(rec, 0); err != nil {
		return err
	}
	return fsx.SyncFile(h.f)
}

func (h *localLedger) Close() {
	if h.f != nil {
		h.f.Close()
	}
	h.lock.Unlock()
}
