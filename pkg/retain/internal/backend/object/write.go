package object

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// objWrite is a retain into a run on object storage: the call's
// descriptor as it was when the retain began, and the content spooled to
// a local temporary file (memory stays bounded), uploaded at commit.
type objWrite struct {
	o    *Backend
	prev *format.Descriptor
}

func (o *Backend) BeginWrite(run, id format.ID) (backend.ValueWrite, error) {
	ow := &objWrite{o: o}
	if old, _, err := o.getDescriptor(run, id); err == nil {
		ow.prev = old
	}
	return ow, nil
}

func (ow *objWrite) Old() *format.Descriptor { return ow.prev }

func (ow *objWrite) Close() {}

// Spool creates the spool file: this process's alone, unlinked at once,
// so that a writer killed half-way leaves nothing in $TMPDIR; it is
// never written out before the upload reads it.
func (ow *objWrite) Spool() (*os.File, func(f *os.File, off, n int64), error) {
	tmp, err := format.CreateTemp(os.TempDir(), "retval-")
	if err != nil {
		return nil, nil, err
	}
	os.Remove(tmp.Name())
	return tmp, nil, nil
}

// Commit makes the value exist on object storage: content uploaded
// only if absent (so no writer ever replaces bytes another committed),
// then its index, then the descriptor created only if absent — the commit
// point. A stub is returned only once no collection of the run is in
// progress and the content the descriptor names is there; otherwise the
// descriptor this writer made is taken back and the input goes out
// verbatim, as on a full disk.
func (ow *objWrite) Commit(c *backend.CommitReq) backend.CommitResult {
	d, stored := c.Desc, c.Stored
	o := ow.o
	index := c.Index
	metaKey := Key(c.Run, format.MetaName(c.ID))
	// The same value again comes before every limit: it is a no-op. The
	// descriptor was read when the retain began; one that arrived since
	// is met at the descriptor's create, which only one writer wins.
	if old := ow.prev; old != nil {
		if old.SHA256 != d.SHA256 || old.Size != d.Size {
			return backend.CommitResult{Conflict: old}
		}
		return ow.objAgain(c, old, index)
	}
	if c.Limits.MaxValueSize > 0 && d.Size > c.Limits.MaxValueSize {
		return backend.CommitResult{Full: fmt.Sprintf("%d bytes exceed max-value-size %d", d.Size, c.Limits.MaxValueSize)}
	}
	// The run's room and gc's marker, asked at once.
	var marked error
	var wg sync.WaitGroup
	wg.Go(func() { _, marked = o.b.Stat(o.ctx, CollectingKey(c.Run)) })
	reason, err := ow.objCapacity(c, d)
	wg.Wait()
	switch {
	case err != nil:
		return backend.CommitResult{Failed: err}
	case reason != "":
		return backend.CommitResult{Full: reason}
	case marked == nil:
		return backend.CommitResult{Failed: fmt.Errorf("run %q is being collected by gc (it was idle; retain into a new run)", c.Run)}
	}

	d.Created = c.Now().UTC().Truncate(1e9)
	d.StoredBytes = stored
	body, err := format.MarshalDescriptor(d)
	if err != nil {
		return backend.CommitResult{Err: err}
	}
	contentKey := Key(c.Run, format.ContentName(c.ID, c.Comp))
	linesKey := Key(c.Run, format.LinesName(c.ID))
	_, err = o.b.Upload(o.ctx, contentKey, io.NewSectionReader(c.Content, 0, stored), s3store.UploadOptions{IfAbsent: true})
	if errors.Is(err, s3store.ErrExists) {
		// Another writer of this call is committing, or one died here.
		return ow.objRaced(c, d)
	}
	if err != nil {
		return backend.CommitResult{Failed: err}
	}
	mine := []string{contentKey}
	undo := func(err error) backend.CommitResult {
		o.b.Delete(o.ctx, mine...)
		return backend.CommitResult{Failed: err}
	}
	if index != nil {
		// An index already there is another writer's of the same id: the
		// same bytes index the same, other bytes lose at the descriptor.
		if _, err := o.b.Create(o.ctx, linesKey, index); err == nil {
			mine = append(mine, linesKey)
		} else if !errors.Is(err, s3store.ErrExists) {
			return undo(err)
		}
	}
	etag, err := o.b.Create(o.ctx, metaKey, body)
	if errors.Is(err, s3store.ErrExists) {
		// Another writer's descriptor — or this one's, whose answer was
		// lost and which the client's retry found there: the very bytes
		// sent name this content, which is then committed, not deleted.
		if got, ob, gerr := o.b.Get(o.ctx, metaKey, format.MaxDescriptorSize); gerr == nil && bytes.Equal(got, body) {
			etag, err = ob.ETag, nil
		} else {
			o.b.Delete(o.ctx, mine...)
			return ow.objRaced(c, d)
		}
	}
	var refused *s3store.StatusError
	switch {
	case errors.As(err, &refused):
		return undo(err) // the server answered: it made nothing
	case err != nil:
		// No answer: the descriptor may be there, naming this content,
		// which is left in place (without a descriptor it is debris,
		// which gc removes after the grace period).
		return backend.CommitResult{Failed: err}
	}
	// Committed. Before a stub names it: no gc may be collecting the run
	// (its marker is written before it lists the run again), and the
	// content must still be there after that — asked once the marker's
	// answer is in: asked at once, the server may answer the content
	// before a collection's deletions and the marker after it is gone. A
	// tombstone of the run is asked beside the content: once both checks
	// pass, the run lives again, and its tombstone goes, as locally when
	// the run's directory is made anew.
	var tomb s3store.Object
	var terr error
	check := func() error {
		if err := ow.objMarked(c); err != nil {
			return err
		}
		var st s3store.Object
		var serr error
		var wg sync.WaitGroup
		wg.Go(func() { tomb, terr = o.b.Stat(o.ctx, TombstoneKey(c.Run)) })
		st, serr = o.b.Stat(o.ctx, contentKey)
		wg.Wait()
		switch {
		case serr != nil:
			return serr
		case st.Size != stored:
			return fmt.Errorf("content %s holds %d bytes, %d were written", o.where(contentKey), st.Size, stored)
		}
		return nil
	}
	if err := check(); err != nil {
		// The descriptor is taken back before its content; while it may
		// still be there (the delete failed, or its answer was lost),
		// the content it names stays: a whole value no stub names, never
		// a descriptor without its content.
		if derr := o.b.DeleteIf(o.ctx, metaKey, etag); derr != nil && !errors.Is(derr, s3store.ErrChanged) {
			return backend.CommitResult{Failed: err}
		}
		return undo(err)
	}
	if terr == nil && !TestHookDiesBeforeTombstone {
		// The tombstone asked about, never one written since.
		o.b.DeleteIf(o.ctx, TombstoneKey(c.Run), tomb.ETag)
	}
	if TestHookCommitted != nil {
		TestHookCommitted()
	}
	return backend.CommitResult{Value: d}
}

// TestHookCommitted, when set, runs once a value is committed to object
// storage and checked, before its stub is made.
var TestHookCommitted func()

// TestHookDiesBeforeTombstone, when set, makes a writer on object
// storage leave the run's tombstone in place and write no read record,
// as one that died right after its checks.
var TestHookDiesBeforeTombstone bool

// RacedWait is how objRaced waits before it looks for the other
// writer's descriptor again (a variable so that a test can wait for that
// writer instead of a time).
var RacedWait = time.Sleep

// objRaced settles a retain that found another writer's content or
// descriptor in its way: the descriptor, once there, says whether it is
// this value (the stub) or other bytes (conflict). A content without a
// descriptor that stays so is another writer's unfinished work, or the
// debris of one that died (gc removes it after the grace period): the
// input goes out verbatim.
func (ow *objWrite) objRaced(c *backend.CommitReq, d *format.Descriptor) backend.CommitResult {
	o := ow.o
	wait := 20 * time.Millisecond
	for range 8 {
		old, _, err := o.getDescriptor(c.Run, c.ID)
		if err == nil {
			if old.SHA256 != d.SHA256 || old.Size != d.Size {
				return backend.CommitResult{Conflict: old}
			}
			return backend.CommitResult{Value: old}
		}
		if !errors.Is(err, s3store.ErrNotFound) {
			return backend.CommitResult{Failed: err}
		}
		RacedWait(wait)
		wait *= 2
	}
	return backend.CommitResult{Failed: fmt.Errorf("value %q of run %q has content but no descriptor: another writer of the call did not finish (retain again once it has, or under a new call id; gc removes content left by a writer that died)", c.ID, c.Run)}
}

// objMarked is the error of a retain into a run that gc is collecting
// (its marker is there), nil when it is not.
func (ow *objWrite) objMarked(c *backend.CommitReq) error {
	o := ow.o
	_, err := o.b.Stat(o.ctx, CollectingKey(c.Run))
	switch {
	case err == nil:
		return fmt.Errorf("run %q is being collected by gc (it was idle; retain into a new run)", c.Run)
	case errors.Is(err, s3store.ErrNotFound):
		return nil
	}
	return err
}

// objGone is why a value that was there when the retain began is not
// now: gc collected its run (its tombstone says when), or its writer took
// it back.
func (ow *objWrite) objGone(c *backend.CommitReq) error {
	if t, ok := ow.o.ReadTombstone(c.Run); ok {
		return fmt.Errorf("%w while the same bytes were retained again (retain into a new run)", format.CollectedError(t))
	}
	return fmt.Errorf("value %q of run %q is gone: its writer took it back while the same bytes were retained again (retain again)", c.ID, c.Run)
}

// objAgain is again on object storage: the stored value is taken as it is
// when its content is there at the recorded size (every read checks its
// bytes); content that is missing or of another size is uploaded again
// from this input, which has the same SHA-256. As for a new value, no
// stub names it while gc collects the run. The run's activity is written
// first (locally the retain touches the run under its lock): a
// collection that marks the run after the marker is asked below lists it
// after that, and stops, as for a new value's descriptor. Then the
// marker, and only after its answer the descriptor and the content, so
// that a collection that began before had finished, and what it deleted
// is seen gone (nothing is restored into a collected run).
func (ow *objWrite) objAgain(c *backend.CommitReq, old *format.Descriptor, index []byte) backend.CommitResult {
	stored := c.Stored
	o := ow.o
	stamp := Key(c.Run, format.ActivityName)
	etag, err := o.b.Put(o.ctx, stamp, nil)
	if err != nil {
		return backend.CommitResult{Failed: err}
	}
	fallback := func(err error) backend.CommitResult {
		o.undoIfCollected(c.Run, stamp, etag)
		return backend.CommitResult{Failed: err}
	}
	if err := ow.objMarked(c); err != nil {
		return fallback(err)
	}
	oldKey := Key(c.Run, format.ContentName(c.ID, old.Compression))
	var st s3store.Object
	var serr error
	var wg sync.WaitGroup
	wg.Go(func() { st, serr = o.b.Stat(o.ctx, oldKey) })
	_, derr := o.b.Stat(o.ctx, Key(c.Run, format.MetaName(c.ID)))
	wg.Wait()
	switch {
	case errors.Is(derr, s3store.ErrNotFound):
		return fallback(ow.objGone(c))
	case derr != nil:
		return fallback(derr)
	case serr == nil && st.Size == old.StoredBytes:
		return backend.CommitResult{Value: old}
	case serr != nil && !errors.Is(serr, s3store.ErrNotFound):
		return fallback(serr)
	}
	restore := func() error {
		key := Key(c.Run, format.ContentName(c.ID, c.Comp))
		if _, err := o.b.Upload(o.ctx, key, io.NewSectionReader(c.Content, 0, stored), s3store.UploadOptions{}); err != nil {
			return err
		}
		if index != nil {
			if _, err := o.b.Put(o.ctx, Key(c.Run, format.LinesName(c.ID)), index); err != nil {
				return err
			}
		}
		if d, body, changed, err := c.RestoredDescriptor(old); err != nil {
			return err
		} else if changed {
			if _, err := o.b.Put(o.ctx, Key(c.Run, format.MetaName(c.ID)), body); err != nil {
				if c.Comp != old.Compression {
					// The new representation's content names no value: no debris.
					o.b.Delete(o.ctx, key)
				}
				return err
			}
			if c.Comp != old.Compression {
				o.b.Delete(o.ctx, oldKey)
			}
			*old = d
		}
		return nil
	}
	if err := restore(); err != nil {
		return fallback(fmt.Errorf("value %q of run %q is damaged and could not be restored: %w (run retval verify; retain under a new call id)", c.ID, c.Run, err))
	}
	return backend.CommitResult{Value: old}
}

// objCapacity is capacity on object storage, from one listing of the run:
// a value counts when its descriptor and content are both listed, with
// the content's listed size as its bytes (a compressed value's descriptor
// is read for its uncompressed size).
func (ow *objWrite) objCapacity(c *backend.CommitReq, d *format.Descriptor) (string, error) {
	L := c.Limits
	if L.MaxRunValues == 0 && L.MaxRunBytes == 0 {
		return "", nil
	}
	o := ow.o
	objs, err := o.runObjects(c.Run)
	if err != nil {
		return "", err
	}
	var n, total int64
	for name := range objs {
		id, ok := strings.CutSuffix(name, format.MetaExt)
		if !ok || !format.IsClean(id) {
			continue
		}
		if ob, ok := objs[format.ContentName(format.ID(id), format.CompressNone)]; ok {
			n++
			total += ob.Size
		} else if _, ok := objs[format.ContentName(format.ID(id), format.CompressZstd)]; ok {
			if old, _, err := o.getDescriptor(c.Run, format.ID(id)); err == nil {
				n++
				total += old.Size
			}
		}
	}
	return c.Full(n, total), nil
}
