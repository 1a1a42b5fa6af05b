package object

import (
	"errors"
	"fmt"
	"path"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// Object storage's own checks beside those verify makes of every value
// (retain.Store.Verify): a run's listing in place of lstat, content read by one
// streaming GET (a compressed one through its seek table, as every
// read), and the read log as one object per record. There is no lock to
// hold gc off: a run in which something went missing while it was
// checked, and which is gone or being collected afterwards, was collected
// meanwhile and is left out, as locally.

// VerifyHold holds nothing: gc may collect the run meanwhile
// (collectedSince).
func (o *Backend) VerifyHold(format.ID) (func(), bool, []format.Problem, error) {
	return func() {}, false, nil, nil
}

// CollectedSince reports whether gc is collecting run, or has.
func (o *Backend) CollectedSince(run format.ID) bool {
	if _, err := o.b.Stat(o.ctx, CollectingKey(run)); err == nil {
		return true
	}
	ok, err := o.runExists(run)
	return err == nil && !ok
}

func (o *Backend) CommittedIn(ri *format.RunInfo) func(format.ID) (*format.Descriptor, *format.ValueProblem) {
	objs := entryObjects(ri)
	return func(id format.ID) (*format.Descriptor, *format.ValueProblem) { return o.objCommitted(ri.Run, id, objs) }
}

func (o *Backend) ReadIndex(run format.ID, d *format.Descriptor) (*format.Index, error) {
	b, _, err := o.b.Get(o.ctx, Key(run, format.LinesName(d.ID)), format.MaxIndexSize)
	if err != nil {
		return nil, err
	}
	return format.ParseIndex(b, d)
}

// OpenForVerify opens a plain value's content as one streaming GET, and
// a compressed one for ranged GETs (its frames are decoded through its
// seek table).
func (o *Backend) OpenForVerify(run format.ID, d *format.Descriptor) (backend.VerifyContent, *format.ValueProblem) {
	key := Key(run, format.ContentName(d.ID, d.Compression))
	if d.Compression == format.CompressZstd {
		st, err := o.b.Stat(o.ctx, key)
		switch {
		case errors.Is(err, s3store.ErrNotFound):
			return backend.VerifyContent{}, backend.ContentMissing(d)
		case err != nil:
			return backend.VerifyContent{}, backend.ContentCorrupt(d, "cannot open content: %v", err)
		case st.Size != d.StoredBytes:
			return backend.VerifyContent{}, backend.ContentCorrupt(d, "content file holds %d bytes, descriptor says %d", st.Size, d.StoredBytes)
		}
		return backend.VerifyContent{At: newObjReaderAt(o, key, st.Size), Close: func() {}}, nil
	}
	body, st, err := o.b.Open(o.ctx, key)
	switch {
	case errors.Is(err, s3store.ErrNotFound):
		return backend.VerifyContent{}, backend.ContentMissing(d)
	case err != nil:
		return backend.VerifyContent{}, backend.ContentCorrupt(d, "cannot open content: %v", err)
	}
	if st.Size != d.StoredBytes {
		body.Close()
		return backend.VerifyContent{}, backend.ContentCorrupt(d, "content file holds %d bytes, descriptor says %d", st.Size, d.StoredBytes)
	}
	return backend.VerifyContent{R: body, Close: func() { body.Close() }}, nil
}

// VerifyReads is verifyReads on object storage: every record of the read
// log (an object under .reads/) is one well-formed record.
func (o *Backend) VerifyReads(ri *format.RunInfo, _ format.RunEntry) (format.Problem, bool) {
	p := format.Problem{File: format.ReadsDir, Kind: format.ProblemCorrupt}
	var first string
	info, err := o.scanReadObjects(ri.Run, func(*format.Read) {}, func(key string) {
		if first == "" {
			first = key
		}
	})
	switch {
	case errors.Is(err, format.ErrNotFound) || errors.Is(err, format.ErrCollected):
		return p, false // collected meanwhile: the caller leaves the run out
	case err != nil:
		p.Message = fmt.Sprintf("read log unreadable: %v", err)
	case info.Malformed > 0:
		p.Message = fmt.Sprintf("the read log has %d objects that are not records (the first is %s): stats skips them; delete them to drop them", info.Malformed, path.Base(first))
	default:
		return p, false
	}
	return p, true
}
