// Package object is the backend of a store on S3-compatible object
// storage (s3://BUCKET/PREFIX; see package backend). It keeps the layout
// of SPEC §1 as keys under PREFIX, and the contract through three
// server-side primitives instead of rename and flock: a create that has
// exactly one winner (If-None-Match: *) commits a value's descriptor, a
// compare-and-swap (If-Match) updates a step's ledger, and a lease stands
// in for gc's lock. docs/design.md, "Object storage", is the protocol and
// the argument for why it loses nothing.
package object

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// Backend is a store on object storage: the backend of a retain.Store
// whose address is s3://….
type Backend struct {
	dir string // the store's address, as the user gave it
	now func() time.Time
	b   *s3store.Bucket
	ctx context.Context
	// gcLease is gc's lease, while this store holds it (gc.go).
	gcLease atomic.Pointer[Lease]
}

// The keys of the store's own: gc's lease and its markers.
const (
	LeaseKey      = format.StoreDirName + "/gc.lease"
	CollectingDir = format.StoreDirName + "/collecting/"
)

// Open parses an s3:// address and reads the credentials, region and
// endpoint from the standard AWS variables. It sends nothing.
func Open(addr string, now func() time.Time) (*Backend, error) {
	loc, err := s3store.ParseURL(addr)
	if err != nil {
		return nil, format.Errorf(format.CodeUsage, "%v", err)
	}
	c, err := s3store.ConfigFromEnv()
	if err != nil {
		return nil, format.Errorf(format.CodeUsage, "store %s: %v", loc, err)
	}
	return &Backend{dir: addr, now: now, b: s3store.Open(loc, c), ctx: context.Background()}, nil
}

// New returns the backend of a store on object storage through a Bucket
// its caller configured itself; dir is the store's address as messages
// name it, now its clock.
func New(b *s3store.Bucket, dir string, now func() time.Time) *Backend {
	return &Backend{dir: dir, now: now, b: b, ctx: context.Background()}
}

// Bucket is the bucket the backend works on.
func (o *Backend) Bucket() *s3store.Bucket { return o.b }

// Keys, relative to the store's prefix.
func RunPrefix(run format.ID) string        { return string(run) + format.RunSuffix + "/" }
func Key(run format.ID, name string) string { return RunPrefix(run) + name }
func TombstoneKey(run format.ID) string {
	return format.StoreDirName + "/" + format.TombstoneDir + "/" + string(run) + format.TombstoneExt
}
func CollectingKey(run format.ID) string   { return CollectingDir + string(run) }
func (o *Backend) where(key string) string { return o.b.Location().String() + "/" + key }

// ioErr wraps an object-storage failure as an I/O error naming the store.
func (o *Backend) ioErr(err error) error {
	if err == nil {
		return nil
	}
	var e *format.Error
	if errors.As(err, &e) {
		return err
	}
	return &format.Error{Code: format.CodeIO, Err: fmt.Errorf("%s: %w", o.b.Location(), err)}
}

// getDescriptor reads and parses the descriptor of id in run, with its ETag.
func (o *Backend) getDescriptor(run, id format.ID) (*format.Descriptor, string, error) {
	b, obj, err := o.b.Get(o.ctx, Key(run, format.MetaName(id)), format.MaxDescriptorSize)
	if errors.Is(err, s3store.ErrTooLarge) {
		return nil, "", format.Errorf(format.CodeCorrupt, "descriptor %s is over %d bytes: retval never writes one (run retval verify)", o.where(Key(run, format.MetaName(id))), format.MaxDescriptorSize)
	}
	if err != nil {
		return nil, "", err
	}
	var d format.Descriptor
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, "", format.Errorf(format.CodeCorrupt, "descriptor %s: %v", o.where(Key(run, format.MetaName(id))), err)
	}
	return &d, obj.ETag, nil
}

// runObjects lists every object of run, keyed by its name in the run.
func (o *Backend) runObjects(run format.ID) (map[string]s3store.Object, error) {
	objs := map[string]s3store.Object{}
	p := RunPrefix(run)
	err := o.b.List(o.ctx, p, func(ob s3store.Object) error {
		objs[strings.TrimPrefix(ob.Key, p)] = ob
		return nil
	})
	return objs, err
}

// errStop ends a listing early.
var errStop = errors.New("stop listing")

// runExists reports whether run holds any object.
func (o *Backend) runExists(run format.ID) (bool, error) {
	found := false
	err := o.b.List(o.ctx, RunPrefix(run), func(s3store.Object) error {
		found = true
		return errStop
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return found, err
}

// MustExist is nil when run holds anything, else the error of a run that
// is not there: collected when gc left a tombstone, or unknown.
func (o *Backend) MustExist(run format.ID) error {
	s := o
	ok, err := o.runExists(run)
	switch {
	case err != nil:
		return o.ioErr(err)
	case !ok:
		return s.missingRun(run)
	}
	return nil
}

// objCommitted is the one rule for a committed value (committedValue) on
// object storage: the descriptor reads as id's, with a known compression,
// and the listing holds its content at the size it records.
func (o *Backend) objCommitted(run, id format.ID, objs map[string]s3store.Object) (*format.Descriptor, *format.ValueProblem) {
	meta := format.MetaName(id)
	d, _, err := o.getDescriptor(run, id)
	if prob := format.Describes(id, d, err); prob != nil {
		return d, prob
	}
	name := format.ContentName(id, d.Compression)
	c, ok := objs[name]
	switch {
	case !ok:
		return d, &format.ValueProblem{File: name, Kind: format.ProblemMissing, Message: fmt.Sprintf("content file missing: %s has no %s", meta, name)}
	case c.Size != d.StoredBytes:
		return d, &format.ValueProblem{File: name, Kind: format.ProblemCorrupt, Message: fmt.Sprintf("content file holds %d bytes, descriptor says %d", c.Size, d.StoredBytes)}
	}
	return d, nil
}

// OpenValue opens value id of run: its descriptor, its content through
// ranged GETs, its index.
func (o *Backend) OpenValue(rid format.ID, run, id string, vid format.ID, touch bool) (*backend.OpenedValue, error) {
	s := o
	d, _, err := o.getDescriptor(rid, vid)
	if errors.Is(err, s3store.ErrNotFound) {
		return nil, o.gone(rid, run, s.missingValue(rid, id, vid, func() []format.ID { return o.nearestIDs(rid, id) }))
	}
	if err != nil {
		return nil, o.ioErr(err)
	}
	if d.ID != vid {
		return nil, format.Errorf(format.CodeCorrupt, "descriptor of %q names value %q", vid, d.ID)
	}
	// The activity stamp is written while the content is looked at (and,
	// for a compressed value, its seek table read): on a real server each
	// request is a round trip, and these need not wait for each other.
	var wg sync.WaitGroup
	if touch {
		wg.Go(func() { o.Touch(rid) })
	}
	op, err := o.openContent(rid, d)
	if err != nil {
		wg.Wait()
		return nil, err
	}
	op.Pending = wg.Wait
	return op, nil
}

// gone is the error of a value of run found missing — its descriptor, or
// its content after the descriptor was read: collected when gc left a
// tombstone (a collection writes it before it deletes anything, and a
// value written into the run again removes it), the unknown run when the
// run holds nothing, else err. typed is the run as the caller named it.
func (o *Backend) gone(run format.ID, typed string, err error) error {
	s := o
	if t, ok := s.ReadTombstone(run); ok {
		return format.CollectedError(t)
	}
	if ok, lerr := o.runExists(run); lerr == nil && !ok {
		return format.AsTyped(s.missingRun(run), typed)
	}
	return err
}

// contentGone is the error of value id's content found missing after
// its descriptor was read: gc deletes descriptors first, so a descriptor
// still there means the run was not collected, and the value is damaged
// (err), whatever tombstone an earlier collection left; else as gone.
func (o *Backend) contentGone(run, id format.ID, err error) error {
	if _, serr := o.b.Stat(o.ctx, Key(run, format.MetaName(id))); serr == nil {
		return err
	}
	return o.gone(run, string(run), err)
}

func (o *Backend) openContent(run format.ID, d *format.Descriptor) (*backend.OpenedValue, error) {
	if d.Compression != format.CompressNone && d.Compression != format.CompressZstd {
		return nil, format.Errorf(format.CodeCorrupt, "value %q: unsupported compression %q", d.ID, d.Compression)
	}
	key := Key(run, format.ContentName(d.ID, d.Compression))
	// The index is fetched while the content's size is asked: one round
	// trip, not two.
	var index []byte
	var wg sync.WaitGroup
	if d.Size > format.IndexMinSize {
		wg.Go(func() { index, _, _ = o.b.Get(o.ctx, Key(run, format.LinesName(d.ID)), format.MaxIndexSize) })
	}
	st, err := o.b.Stat(o.ctx, key)
	wg.Wait()
	if errors.Is(err, s3store.ErrNotFound) {
		return nil, o.contentGone(run, d.ID, format.Errorf(format.CodeCorrupt, "value %q: content %s is missing (run retval verify)", d.ID, o.where(key)))
	}
	if err != nil {
		return nil, o.ioErr(err)
	}
	if st.Size != d.StoredBytes {
		return nil, format.Errorf(format.CodeCorrupt, "value %q: content holds %d bytes, descriptor says %d (run retval verify)", d.ID, st.Size, d.StoredBytes)
	}
	if d.Size < 0 || d.Compression == format.CompressNone && d.Size != d.StoredBytes || d.Size == 0 && d.SHA256 != format.EmptySHA256 {
		return nil, format.Errorf(format.CodeCorrupt, "value %q: descriptor says %d bytes (sha256 %.12s…) of a %d-byte content object (run retval verify)", d.ID, d.Size, d.SHA256, st.Size)
	}
	r := newObjReaderAt(o, key, st.Size)
	// Content that disappears under a reader was deleted by gc.
	r.gone = func(err error) error { return o.contentGone(run, d.ID, err) }
	op := &backend.OpenedValue{Desc: *d, Raw: r}
	if index != nil {
		if ix, err := format.ParseIndex(index, d); err == nil {
			op.Index = ix
		}
	}
	return op, nil
}

// Touch records read activity on run at most once an hour (as Touch).
func (o *Backend) Touch(run format.ID) {
	s := o
	key := Key(run, format.ActivityName)
	now := s.now()
	if st, err := o.b.Stat(o.ctx, key); err == nil && now.Sub(st.Modified) < format.ActivityEvery && st.Modified.Before(now.Add(time.Minute)) {
		return
	}
	if etag, err := o.b.Put(o.ctx, key, nil); err == nil {
		o.undoIfCollected(run, key, etag)
	}
}

// undoIfCollected deletes key, which a reader has just written into run
// (its activity stamp, a read record, a step ledger), when the run's
// tombstone is there. gc may have listed the run for the last time before
// the write landed, and what a reader writes must not bring a collected
// run back (a run of one read record that says unknown_reference where it
// should say collected, and that the next gc collects again). A value
// written into the run again removes the tombstone (objCommit), so a live
// run keeps what its readers write; a reader whose write lands before
// gc's last listing has it deleted with the run, or makes the collection
// stop.
func (o *Backend) undoIfCollected(run format.ID, key, etag string) {
	if tomb, err := o.b.Stat(o.ctx, TombstoneKey(run)); err == nil && !o.staleTombstone(run, tomb) {
		o.b.DeleteIf(o.ctx, key, etag)
	}
}

// staleTombstone reports whether tomb, run's tombstone, was left by an
// earlier collection of a run written into again since, whose writer
// died before it removed the tombstone (objCommit): no collection of the
// run is in progress, and the run holds a descriptor written after the
// tombstone (by the server's clock, whole seconds: one of the same second
// is taken for collected) and at least SettledAfter before now, with its
// content beside it (a writer that died after its commit into a run
// being collected may leave a descriptor whose content gc deleted). A
// collection writes its tombstone before it deletes anything, and a
// writer that commits during one undoes its value — but only after its
// checks, and the collection's marker may be gone by then: a descriptor
// younger than that may yet be taken back, and tells nothing. An older
// one is of a live run. The stale tombstone is deleted, If-Match, as its
// writer would have: never one written since.
func (o *Backend) staleTombstone(run format.ID, tomb s3store.Object) bool {
	if _, err := o.b.Stat(o.ctx, CollectingKey(run)); !errors.Is(err, s3store.ErrNotFound) {
		return false
	}
	objs, err := o.runObjects(run)
	if err != nil {
		return false
	}
	var first time.Time // the oldest value written since
	for name, ob := range objs {
		id, ok := format.ValueOf(name)
		if !ok || name != format.MetaName(id) || !ob.Modified.After(tomb.Modified) || !first.IsZero() && !ob.Modified.Before(first) {
			continue
		}
		_, plain := objs[format.ContentName(id, format.CompressNone)]
		_, zstd := objs[format.ContentName(id, format.CompressZstd)]
		if plain || zstd {
			first = ob.Modified
		}
	}
	if first.IsZero() {
		return false
	}
	if now, err := o.b.Now(o.ctx); err != nil || now.Sub(first) < SettledAfter {
		return false
	}
	o.b.DeleteIf(o.ctx, TombstoneKey(run), tomb.ETag)
	return true
}

// SettledAfter is how long after its descriptor was written a writer has
// settled its value: one whose checks failed takes the descriptor back a
// round trip or two after them, so one still there this long after was
// kept, or left by a writer that died. (A writer stalled longer between
// its commit and taking it back is taken for dead, as gc is past its
// lease.) A variable so that a test need not wait that long.
var SettledAfter = LeaseTTL

// nearestIDs is nearestIDs over the run's descriptors.
func (o *Backend) nearestIDs(run format.ID, id string) []format.ID {
	var names []string
	p := RunPrefix(run)
	o.b.List(o.ctx, p, func(ob s3store.Object) error {
		names = append(names, strings.TrimPrefix(ob.Key, p))
		return nil
	})
	return format.NearestAmong(names, id)
}

// Values lists run's committed values (Values).
func (o *Backend) Values(run format.ID) ([]format.Descriptor, error) {
	s := o
	objs, err := o.runObjects(run)
	if err != nil {
		return nil, o.ioErr(err)
	}
	if len(objs) == 0 {
		return nil, s.missingRun(run)
	}
	var out []format.Descriptor
	descs := 0
	for name := range objs {
		id, ok := strings.CutSuffix(name, format.MetaExt)
		if !ok || !format.IsClean(id) {
			continue
		}
		descs++
		if d, prob := o.objCommitted(run, format.ID(id), objs); prob == nil {
			out = append(out, *d)
		}
	}
	// A descriptor listed that is no value now, or no value at all: gc
	// may have collected the run meanwhile (it deletes descriptors
	// first), or before (a key is left in it by a reader or a writer that
	// died). Then the answer is collected, never part of the run.
	if len(out) < descs || len(out) == 0 {
		if t, ok := s.ReadTombstone(run); ok {
			return nil, format.CollectedError(t)
		}
	}
	return out, nil
}

// ReadTombstone reads run's tombstone, if there is one that is not stale
// (staleTombstone).
func (o *Backend) ReadTombstone(run format.ID) (*format.Tombstone, bool) {
	b, ob, err := o.b.Get(o.ctx, TombstoneKey(run), format.MaxTombstoneBytes)
	if err != nil {
		return nil, false
	}
	var t format.Tombstone
	if json.Unmarshal(b, &t) != nil || t.Run != run || o.staleTombstone(run, ob) {
		return nil, false
	}
	return &t, true
}

func (o *Backend) Taken(run, id format.ID) bool {
	_, err := o.b.Stat(o.ctx, Key(run, format.MetaName(id)))
	return err == nil
}

func (o *Backend) missingRun(run format.ID) error { return backend.MissingRun(o, o.dir, run) }

func (o *Backend) missingValue(run format.ID, typed string, id format.ID, nearest func() []format.ID) error {
	return backend.MissingValue(o, run, typed, id, nearest)
}

func (o *Backend) rememberCollected(ri *format.RunInfo, at time.Time) error {
	return backend.RememberCollected(o, ri, at)
}
