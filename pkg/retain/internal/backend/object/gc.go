package object

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// gc on object storage (docs/design.md, "Collecting a run"): a lease in
// place of gc's lock, a marker .retval/collecting/<run> in place of the
// run's exclusive lock and the rename into the trash, and the tombstone as
// the commit of a collection. A writer checks for the marker after it
// commits its descriptor and before it prints a stub, so between them no
// stub ever names a value gc deletes.

// LeaseTTL is how long gc's lease on object storage lasts unless renewed;
// gc renews it every third of that while it works.
const LeaseTTL = 2 * time.Minute

// Lease is gc's lease, renewed in the background while held. Every
// write of a collection asks check first: a lease that could not be
// renewed in time may be another gc's by now, so the write is not made.
type Lease struct {
	o    *Backend
	l    *s3store.Lease
	stop chan struct{}
	done chan struct{}
	tick <-chan time.Time // when to renew; nil: every third of the TTL

	mu   sync.Mutex
	lost error
	// renewed is this process's clock when the last successful write of
	// the lease was sent: the server took it after that, whenever its
	// answer came back.
	renewed time.Time
}

// LeaseNow is the clock gc judges its lease by (a variable so that a
// test can make a request take time without waiting for it).
var LeaseNow = time.Now

// Check is nil while the lease is held, else the busy error of a gc that
// lost it.
func (l *Lease) Check() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if since := LeaseNow().Sub(l.renewed); l.lost == nil && since > l.l.TTL*9/10 {
		l.lost = fmt.Errorf("not renewed for %s", since.Round(time.Second))
	}
	if l.lost != nil {
		return format.Errorf(format.CodeBusy, "gc lost its lease on %s (%v): stopped before its next change; run gc again", l.o.b.Location(), l.lost)
	}
	return nil
}

func (l *Lease) renewLoop() {
	defer close(l.done)
	if l.tick == nil {
		t := time.NewTicker(l.l.TTL / 3)
		defer t.Stop()
		l.tick = t.C
	}
	for {
		select {
		case <-l.stop:
			return
		case <-l.tick:
		}
		sent := LeaseNow()
		err := l.l.Renew(l.o.ctx)
		l.mu.Lock()
		if err != nil && l.lost == nil {
			l.lost = err
		} else if err == nil {
			l.renewed = sent
		}
		stop := l.lost != nil
		l.mu.Unlock()
		if stop {
			return
		}
	}
}

// Release stops renewing the lease and gives it up.
func (l *Lease) Release() {
	close(l.stop)
	<-l.done
	l.o.gcLease.CompareAndSwap(l, nil)
	l.l.Release(l.o.ctx)
}

// Lease is gc's lease while this backend holds it, nil when it does not.
func (o *Backend) Lease() *Lease { return o.gcLease.Load() }

// StartLease starts renewing l, a lease taken on the backend's bucket, at
// each tick (nil: every third of its TTL), as LockCollector does with
// the lease it takes; renewed is when it was taken. A test drives the
// renewals with tick.
func (o *Backend) StartLease(l *s3store.Lease, tick <-chan time.Time, renewed time.Time) *Lease {
	ol := &Lease{o: o, l: l, stop: make(chan struct{}), done: make(chan struct{}), tick: tick, renewed: renewed}
	go ol.renewLoop()
	return ol
}

// State is what the renewals recorded: when the last one that succeeded
// was sent, and why the lease is lost (nil while it is not).
func (l *Lease) State() (renewed time.Time, lost error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.renewed, l.lost
}

// Lose marks the lease lost, as a renewal that failed: every change of
// its collection after this is refused.
func (l *Lease) Lose(why error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = why
}

// LeaseHolder names this process in the lease, for the message another
// gc prints.
func LeaseHolder() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown host"
	}
	return fmt.Sprintf("gc on %s, pid %d", host, os.Getpid())
}

// LockCollector is LockCollector on object storage: the lease, taken
// with create; without it (a dry run) nothing is written, and a lease
// another gc holds is still ErrBusy, as the lock is locally.
func (o *Backend) LockCollector(create bool) (release func(), err error) {
	s := o
	busy := func(holder string, until time.Time) error {
		return format.Errorf(format.CodeBusy, "another gc is running on %s (%s holds its lease until %s); try again when it is done", s.dir, holder, until.UTC().Format(time.RFC3339))
	}
	if !create {
		b, cur, err := o.b.Get(o.ctx, LeaseKey, 4<<10)
		if errors.Is(err, s3store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, o.ioErr(err)
		}
		var held struct {
			Holder string `json:"holder"`
			TTLMs  int64  `json:"ttl_ms"`
		}
		if json.Unmarshal(b, &held) != nil || held.TTLMs <= 0 {
			held.Holder, held.TTLMs = "(unreadable lease)", LeaseTTL.Milliseconds()
		}
		now, err := o.b.Now(o.ctx)
		if err != nil {
			return nil, o.ioErr(err)
		}
		if until := cur.Modified.Add(time.Duration(held.TTLMs) * time.Millisecond); now.Before(until) {
			return nil, busy(held.Holder, until)
		}
		return nil, nil
	}
	sent := LeaseNow()
	l, err := o.b.AcquireLease(o.ctx, LeaseKey, LeaseHolder(), LeaseTTL)
	var held *s3store.HeldError
	if errors.As(err, &held) {
		return nil, busy(held.Holder, held.Until)
	}
	if err != nil {
		return nil, o.ioErr(err)
	}
	ol := o.StartLease(l, nil, sent)
	o.gcLease.Store(ol)
	return ol.Release, nil
}

// objCollection is a store on object storage opened for collection: gc
// holds its lease (or, in a dry run, nothing), and nothing else is open.
type objCollection struct {
	obj *Backend
}

func (o *Backend) OpenCollection(bool) (backend.Collection, error) {
	return &objCollection{obj: o}, nil
}

func (c *objCollection) Close() {}

// checkLease is asked before every change a collection makes.
func (c *objCollection) checkLease() error { return c.obj.gcLease.Load().Check() }

// TestHookCollecting, when set, runs at the named steps of a
// collection on object storage ("marked": the marker is there, the run
// not yet listed again; "committed": the tombstone is written, nothing
// deleted yet; "deleted": the run's keys are deleted, the marker not
// yet).
var TestHookCollecting func(step string, run format.ID)

func hookCollecting(step string, run format.ID) {
	if TestHookCollecting != nil {
		TestHookCollecting(step, run)
	}
}

// mark creates run's collection marker. One found there is a gc's that
// stopped half-way (this gc holds the lease): it is taken over.
func (c *objCollection) mark(run format.ID) error {
	o := c.obj
	if err := c.checkLease(); err != nil {
		return err
	}
	body := []byte(fmt.Sprintf("{\"run\":%q,\"holder\":%q}\n", run, LeaseHolder()))
	_, err := o.b.Create(o.ctx, CollectingKey(run), body)
	if errors.Is(err, s3store.ErrExists) {
		_, err = o.b.Put(o.ctx, CollectingKey(run), body)
	}
	return o.ioErr(err)
}

// unmark deletes run's collection marker, as every change of a
// collection only while the lease is held: a gc past its lease leaves
// the marker (the next gc deletes it), for the gc that holds the lease
// now may have marked the run for a collection of its own.
func (c *objCollection) unmark(run format.ID) error {
	if err := c.checkLease(); err != nil {
		return err
	}
	o := c.obj
	return o.ioErr(o.b.Delete(o.ctx, CollectingKey(run)))
}

// objChanged tells whether a run's new listing differs from the one ri
// was made from: a key appeared, disappeared or was written since.
func objChanged(ri *format.RunInfo, objs map[string]s3store.Object) string {
	had := map[string]format.RunEntry{}
	for _, e := range ri.Entries {
		had[e.Name] = e
	}
	names := make([]string, 0, len(objs))
	for n := range objs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		e, ok := had[n]
		switch {
		case !ok:
			return n + " appeared"
		case objs[n].Modified.After(e.ModTime) || objs[n].Size != e.Bytes:
			switch {
			case n == format.ActivityName:
				return "it was read"
			case strings.HasPrefix(n, format.StepsDirName+"/"):
				return "a lookup ledger was written"
			}
			return n + " was written"
		}
		delete(had, n)
	}
	gone := make([]string, 0, len(had))
	for n := range had {
		gone = append(gone, n)
	}
	slices.Sort(gone)
	for _, n := range gone {
		return n + " disappeared"
	}
	return ""
}

// CollectRun is CollectRun on object storage: marker, a second listing
// (any change since the scan aborts: the marker goes, the run stays),
// the tombstone (the commit), the run's keys (descriptors first), a last
// listing to delete what appeared meanwhile, and the marker last. After
// the commit a failure leaves the marker: the next gc finds it with its
// tombstone and finishes the collection (Trash, EmptyTrash).
func (c *objCollection) CollectRun(ri *format.RunInfo, t format.Tombstone) error {
	o, run := c.obj, ri.Run
	if err := c.mark(run); err != nil {
		return fmt.Errorf("marking run %s for collection: %w (run left in place)", run, err)
	}
	hookCollecting("marked", run)
	committed := false
	defer func() {
		if !committed {
			c.unmark(run)
		}
	}()
	objs, err := o.runObjects(run)
	if err != nil {
		return o.ioErr(err)
	}
	if len(objs) == 0 {
		return c.obj.missingRun(run)
	}
	if what := objChanged(ri, objs); what != "" {
		return &format.RunChangedError{Run: run, What: what}
	}
	if err := c.checkLease(); err != nil {
		return err
	}
	if err := c.obj.rememberCollected(ri, t.Collected); err != nil {
		return fmt.Errorf("recording the values of run %s: %w (run left in place)", run, err)
	}
	if err := c.writeTombstone(t); err != nil {
		return fmt.Errorf("writing the tombstone of run %s: %w (run left in place)", run, err)
	}
	committed = true
	hookCollecting("committed", run)
	if err := c.deleteRun(run, objs); err != nil {
		return fmt.Errorf("run %s is collected, but deleting its objects failed: %w (the next gc finishes it)", run, err)
	}
	// A writer that died half-way through a multipart upload left parts
	// no listing of objects shows.
	if _, err := o.b.AbortUploads(o.ctx, RunPrefix(run)); err != nil {
		return fmt.Errorf("run %s is collected, but aborting its unfinished uploads failed: %w (the next gc finishes it)", run, err)
	}
	hookCollecting("deleted", run)
	if err := c.checkLease(); err != nil {
		return err
	}
	if err := c.unmark(run); err != nil {
		return fmt.Errorf("run %s is collected, but its marker could not be deleted: %w (the next gc deletes it)", run, err)
	}
	return nil
}

// deleteRun deletes the keys of run in objs, descriptors first, then
// lists the run again and deletes what appeared meanwhile.
func (c *objCollection) deleteRun(run format.ID, objs map[string]s3store.Object) error {
	o := c.obj
	for pass := 0; pass < 2; pass++ {
		var descs, rest []string
		for name := range objs {
			if id, ok := strings.CutSuffix(name, format.MetaExt); ok && !strings.Contains(id, "/") {
				descs = append(descs, Key(run, name))
			} else {
				rest = append(rest, Key(run, name))
			}
		}
		slices.Sort(descs)
		slices.Sort(rest)
		for _, keys := range [][]string{descs, rest} {
			if len(keys) == 0 {
				continue
			}
			if err := c.checkLease(); err != nil {
				return err
			}
			if err := o.b.Delete(o.ctx, keys...); err != nil {
				return o.ioErr(err)
			}
		}
		if pass == 0 {
			var err error
			if objs, err = o.runObjects(run); err != nil {
				return o.ioErr(err)
			}
		}
	}
	return nil
}

// Trash lists the markers an interrupted gc left (this gc holds the
// lease, so none is a live one): a committed one with what is left of its
// run, an uncommitted one alone.
func (c *objCollection) Trash() ([]format.TrashEntry, error) {
	o := c.obj
	ms, err := o.markers()
	if err != nil {
		return nil, err
	}
	var out []format.TrashEntry
	for _, m := range ms {
		e := format.TrashEntry{Name: strings.TrimPrefix(m.Key, CollectingDir), Path: m.Key}
		if m.Committed {
			objs, err := o.runObjects(m.Run)
			if err != nil {
				return nil, o.ioErr(err)
			}
			for _, ob := range objs {
				e.Bytes += ob.Size
			}
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b format.TrashEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// EmptyTrash finishes what an interrupted gc left: a committed collection
// is completed (what is left of the run is deleted), an uncommitted one is
// abandoned (the run stays, to be judged again); the marker goes last.
func (c *objCollection) EmptyTrash(name string) error {
	o := c.obj
	ms, err := o.markers()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if strings.TrimPrefix(m.Key, CollectingDir) != name {
			continue
		}
		if err := c.checkLease(); err != nil {
			return err
		}
		if m.Committed {
			objs, err := o.runObjects(m.Run)
			if err != nil {
				return o.ioErr(err)
			}
			if err := c.deleteRun(m.Run, objs); err != nil {
				return err
			}
			if _, err := o.b.AbortUploads(o.ctx, RunPrefix(m.Run)); err != nil {
				return o.ioErr(err)
			}
			if err := c.checkLease(); err != nil {
				return err
			}
		}
		return o.ioErr(o.b.Delete(o.ctx, m.Key))
	}
	return nil
}

// RemoveDebris is RemoveDebris on object storage. The run is marked while
// its debris goes, as for a collection: a writer whose descriptor arrives
// for content gc is about to delete sees the marker (or, once it is gone,
// that its content is gone) and takes its value back.
func (c *objCollection) RemoveDebris(run format.ID, entries []format.RunEntry, now time.Time, grace time.Duration) ([]bool, []format.DebrisError, error) {
	o := c.obj
	if err := o.MustExist(run); err != nil {
		return nil, nil, err
	}
	if err := c.mark(run); err != nil {
		return nil, nil, err
	}
	defer c.unmark(run)
	objs, err := o.runObjects(run)
	if err != nil {
		return nil, nil, o.ioErr(err)
	}
	removed := make([]bool, len(entries))
	var keys []string
	var which []int
	for i, e := range entries {
		ob, ok := objs[e.Name]
		if !ok || ob.Modified.After(e.ModTime) || now.Sub(ob.Modified) < grace {
			continue // gone, or touched since the scan: not ours to judge now
		}
		if e.DescAbsent {
			if _, ok := objs[format.MetaName(e.Value)]; ok {
				continue // its descriptor arrived: a value now
			}
		}
		keys = append(keys, Key(run, e.Name))
		which = append(which, i)
	}
	if len(keys) == 0 {
		return removed, nil, nil
	}
	if err := c.checkLease(); err != nil {
		return nil, nil, err
	}
	if err := o.b.Delete(o.ctx, keys...); err != nil {
		var fails []format.DebrisError
		for _, i := range which {
			fails = append(fails, format.DebrisError{Path: entries[i].Path, Err: o.ioErr(err)})
		}
		return removed, fails, nil
	}
	for _, i := range which {
		removed[i] = true
	}
	return removed, nil, nil
}

// Tombstones on object storage: .retval/tombstones/<run>.json, written
// whole by one PUT.

func (c *objCollection) writeTombstone(t format.Tombstone) error { return c.obj.WriteTombstone(t) }

func (o *Backend) WriteTombstone(t format.Tombstone) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = o.b.Put(o.ctx, TombstoneKey(t.Run), append(b, '\n'))
	return o.ioErr(err)
}

func (o *Backend) RemoveTombstone(run format.ID) error {
	return o.ioErr(o.b.Delete(o.ctx, TombstoneKey(run)))
}

const TombstonePrefix = format.StoreDirName + "/" + format.TombstoneDir + "/"

func (o *Backend) TombstoneFiles() ([]format.TombstoneFile, error) {
	var out []format.TombstoneFile
	err := o.b.List(o.ctx, TombstonePrefix, func(ob s3store.Object) error {
		name := strings.TrimPrefix(ob.Key, TombstonePrefix)
		out = append(out, format.TombstoneFile{Name: name, Path: ob.Key, Bytes: ob.Size, Temp: format.IsTemp(name)})
		return nil
	})
	if err != nil {
		return nil, o.ioErr(err)
	}
	keep := out[:0]
	for _, f := range out {
		switch {
		case f.Temp:
		case format.IsCollectedIDsName(f.Name):
			var b []byte
			if b, f.Problem = o.ReadTombstoneEntry(f.Name, format.MaxCollectedIDsBytes); f.Problem == nil {
				f.IDs, f.Problem = format.ParseCollectedIDs(f.Name, b)
			}
		default:
			f.Tombstone, f.Problem = o.readTombstoneFile(f.Name)
		}
		if errors.Is(f.Problem, s3store.ErrNotFound) || errors.Is(f.Problem, fs.ErrNotExist) {
			continue // removed while we listed
		}
		keep = append(keep, f)
	}
	return keep, nil
}

// ReadTombstoneEntry is readTombstoneEntry on object storage: a key that
// is not there is fs.ErrNotExist, as a file that is not.
func (o *Backend) ReadTombstoneEntry(name string, max int64) ([]byte, error) {
	b, _, err := o.b.Get(o.ctx, TombstonePrefix+name, max)
	if errors.Is(err, s3store.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", o.where(TombstonePrefix+name), fs.ErrNotExist)
	}
	return b, o.ioErr(err)
}

// WriteTombstoneEntry is writeTombstoneEntry on object storage: one PUT
// is written whole or not at all.
func (o *Backend) WriteTombstoneEntry(name string, b []byte) error {
	_, err := o.b.Put(o.ctx, TombstonePrefix+name, b)
	return o.ioErr(err)
}

func (o *Backend) readTombstoneFile(name string) (*format.Tombstone, error) {
	key := TombstonePrefix + name
	b, _, err := o.b.Get(o.ctx, key, format.MaxTombstoneBytes)
	if err != nil {
		return nil, err
	}
	var t format.Tombstone
	if json.Unmarshal(b, &t) != nil || !format.IsClean(string(t.Run)) || name != string(t.Run)+format.TombstoneExt {
		return nil, fmt.Errorf("%s %w", o.where(key), format.ErrNotTombstone)
	}
	return &t, nil
}

// RemoveTombstoneFile deletes the entry name of the tombstones: the key,
// or every key under it as a "directory".
func (o *Backend) RemoveTombstoneFile(name string) error {
	keys := []string{TombstonePrefix + name}
	err := o.b.List(o.ctx, TombstonePrefix+name+"/", func(ob s3store.Object) error {
		keys = append(keys, ob.Key)
		return nil
	})
	if err != nil {
		return o.ioErr(err)
	}
	return o.ioErr(o.b.Delete(o.ctx, keys...))
}
