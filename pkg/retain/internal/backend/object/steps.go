package object

import (
	"encoding/json"
	"errors"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// OpenStepLedger reads step's ledger of run from object storage, with the
// ETag that Save swaps against.
func (o *Backend) OpenStepLedger(run, step format.ID) (backend.LedgerHold, format.StepSpent, error, error) {
	if err := o.MustExist(run); err != nil {
		return nil, format.StepSpent{}, nil, err
	}
	h := &objLedger{o: o, run: run, key: Key(run, format.StepsDirName+"/"+format.StepName(step))}
	b, ob, err := o.b.Get(o.ctx, h.key, format.MaxLedgerSize)
	switch {
	case errors.Is(err, s3store.ErrNotFound):
		return h, format.StepSpent{}, nil, nil
	case errors.Is(err, s3store.ErrTooLarge):
		return nil, format.StepSpent{}, nil, format.Errorf(format.CodeCorrupt, "step ledger %s is unreadable (over %d bytes, and retval writes %d); start a new step with another --step id", o.where(h.key), format.MaxLedgerSize, format.LedgerSize)
	case err != nil:
		return nil, format.StepSpent{}, nil, o.ioErr(err)
	}
	var rec format.LedgerRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Step != step || rec.Lookups < 0 || rec.Bytes < 0 {
		return nil, format.StepSpent{}, nil, format.Errorf(format.CodeCorrupt, "step ledger %s is unreadable; start a new step with another --step id", o.where(h.key))
	}
	h.etag = ob.ETag
	return h, rec.StepSpent, nil, nil
}

// objLedger is a ledger's object and the ETag it was read with ("" for a
// new step): save is a compare-and-swap against it.
type objLedger struct {
	o    *Backend
	run  format.ID
	key  string
	etag string
}

// Save writes the record if the ledger is still what was read: created
// only if absent for a new step, else replaced only if its ETag is the one
// read. A lost race is ErrLedgerChanged.
func (l *objLedger) Save(rec []byte) error {
	o := l.o
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
		return format.ErrLedgerChanged
	}
	if err != nil {
		return o.ioErr(err)
	}
	l.etag = etag
	return nil
}

func (l *objLedger) Close() {} // nothing held
