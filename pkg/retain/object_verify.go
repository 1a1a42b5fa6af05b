package retain

import (
	"errors"
	"fmt"
	"path"

	"github.com/retval/retval/pkg/retain/s3store"
)

// Object storage's own checks beside those verify makes of every value
// (verify.go): a run's listing in place of lstat, content read by one
// streaming GET (a compressed one through its seek table, as every
// read), and the read log as one object per record. There is no lock to
// hold gc off: a run in which something went missing while it was
// checked, and which is gone or being collected afterwards, was collected
// meanwhile and is left out, as locally.

// verifyHold holds nothing: gc may collect the run meanwhile
// (collectedSince).
func (o *objStore) verifyHold(ID) (func(), bool, []Problem, error) {
	return func() {}, false, nil, nil
}

// collectedSince reports whether gc is collecting run, or has.
func (o *objStore) collectedSince(run ID) bool {
	if _, err := o.b.Stat(o.ctx, collectingKey(run)); err == nil {
		return true
	}
	ok, err := o.runExists(run)
	return err == nil && !ok
}

func (o *objStore) committedIn(ri *RunInfo) func(ID) (*Descriptor, *valueProblem) {
	objs := entryObjects(ri)
	return func(id ID) (*Descriptor, *valueProblem) { return o.objCommitted(ri.Run, id, objs) }
}

func (o *objStore) readIndex(run ID, d *Descriptor) (*Index, error) {
	b, _, err := o.b.Get(o.ctx, objKey(run, linesName(d.ID)), maxIndexSize)
	if err != nil {
		return nil, err
	}
	return parseIndex(b, d)
}

// openForVerify opens a plain value's content as one streaming GET, and
// a compressed one for ranged GETs (its frames are decoded through its
// seek table).
func (o *objStore) openForVerify(run ID, d *Descriptor) (verifyContent, *valueProblem) {
	key := objKey(run, contentName(d.ID, d.Compression))
	if d.Compression == CompressZstd {
		st, err := o.b.Stat(o.ctx, key)
		switch {
		case errors.Is(err, s3store.ErrNotFound):
			return verifyContent{}, contentMissing(d)
		case err != nil:
			return verifyContent{}, contentCorrupt(d, "cannot open content: %v", err)
		case st.Size != d.StoredBytes:
			return verifyContent{}, contentCorrupt(d, "content file holds %d bytes, descriptor says %d", st.Size, d.StoredBytes)
		}
		return verifyContent{at: newObjReaderAt(o, key, st.Size), close: func() {}}, nil
	}
	body, st, err := o.b.Open(o.ctx, key)
	switch {
	case errors.Is(err, s3store.ErrNotFound):
		return verifyContent{}, contentMissing(d)
	case err != nil:
		return verifyContent{}, contentCorrupt(d, "cannot open content: %v", err)
	}
	if st.Size != d.StoredBytes {
		body.Close()
		return verifyContent{}, contentCorrupt(d, "content file holds %d bytes, descriptor says %d", st.Size, d.StoredBytes)
	}
	return verifyContent{r: body, close: func() { body.Close() }}, nil
}

// verifyReads is verifyReads on object storage: every record of the read
// log (an object under .reads/) is one well-formed record.
func (o *objStore) verifyReads(ri *RunInfo, _ RunEntry) (Problem, bool) {
	p := Problem{File: readsDir, Kind: ProblemCorrupt}
	var first string
	info, err := o.scanReadObjects(ri.Run, func(*Read) {}, func(key string) {
		if first == "" {
			first = key
		}
	})
	switch {
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected):
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
