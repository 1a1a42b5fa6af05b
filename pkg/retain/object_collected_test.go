package retain

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain/internal/backend/object"
)

// A value opened before gc collects its run and read after: on object
// storage its content is deleted under the reader, and the read says
// collected — never corrupt, never part of the value.
func TestObjectValueCollectedUnderItsReaderSaysCollected(t *testing.T) {
	s3test.Each(t, testObjectValueCollectedUnderItsReaderSaysCollected)
}

func testObjectValueCollectedUnderItsReaderSaysCollected(t *testing.T, srv *s3test.Server) {
	for _, comp := range compressions {
		for _, lines := range []int{100, 60000} { // hashed whole; read by blocks
			t.Run(fmt.Sprintf("%s/%d", comp, lines), func(t *testing.T) {
				s, _, now := s3Store(t, srv)
				data := toolOutput("c1", lines)
				retainComp(t, s, "r", "c1", data, comp)
				v, err := s.OpenValue("r", "c1")
				if err != nil {
					t.Fatal(err)
				}
				defer v.Close()
				if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
					t.Fatal(err)
				}
				p := make([]byte, 100)
				off := int64(len(data) / 2)
				_, err = v.ReadAt(p, off)
				switch {
				case errors.Is(err, ErrCollected):
				case err == nil && comp == "zstd" && bytes.Equal(p, data[off:off+100]):
					// The window read with the seek table when the value
					// was opened held these frames: the whole answer.
				default:
					t.Fatalf("read after the collection: %v, want collected", err)
				}
			})
		}
	}
}

// What a reader writes into a run (its activity stamp, a read record, a
// step ledger) can land after gc's last listing of the run. It must not
// bring the run back: the write is taken back when the run's tombstone is
// there, and a key left in the run (a reader that died before taking its
// write back) does not turn "collected" into "unknown".
func TestObjectReadersDoNotBringACollectedRunBack(t *testing.T) {
	s3test.Each(t, testObjectReadersDoNotBringACollectedRunBack)
}

func testObjectReadersDoNotBringACollectedRunBack(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "c1", toolOutput("c1", 100))
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	// A late activity stamp, as a reader that read the descriptor before
	// the collection writes it.
	o.Touch("r")
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 0 {
		t.Fatalf("the stamp of a late reader stayed: %v", k)
	}
	// A reader that found the run before it was deleted: its record and a
	// new ledger are written, then taken back.
	left := objKey("r", ".steps/left-by-a-dead-reader.json")
	if _, err := o.b.Put(o.ctx, left, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "c1", Bytes: 10, Call: true})
	l, err := s.OpenStepLedger("r", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(StepSpent{Lookups: 1, Bytes: 10}); err != nil {
		t.Fatal(err)
	}
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 1 || k[0] != left {
		t.Fatalf("keys of the collected run: %v, want only %s", k, left)
	}
	if _, err := s.OpenValue("r", "c1"); !errors.Is(err, ErrCollected) {
		t.Fatalf("lookup in a collected run holding a stray key: %v, want collected", err)
	}
}

// A run written again after its collection lives again, as locally where
// the run's new directory removes the tombstone: the tombstone goes, its
// readers' records stay, an id it never held is unknown, and one of the
// collected generation is collected (its collected-ids record).
func TestObjectRunWrittenAgainLosesItsTombstone(t *testing.T) {
	s3test.Each(t, testObjectRunWrittenAgainLosesItsTombstone)
}

func testObjectRunWrittenAgainLosesItsTombstone(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "old", toolOutput("old", 100))
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ReadTombstone("r"); !ok {
		t.Fatal("no tombstone after the collection")
	}
	retainAll(t, s, "r", "new", toolOutput("new", 100))
	if ts, ok := s.ReadTombstone("r"); ok {
		t.Fatalf("tombstone %+v outlived the run's new value", ts)
	}
	v, err := s.OpenValue("r", "new")
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	before := len(keysUnder(t, o, objKey("r", readsDir))) // the retain's record
	s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "new", Bytes: 10, Call: true})
	if k := keysUnder(t, o, objKey("r", readsDir)); len(k) != before+1 {
		t.Fatalf("read records of the live run: %v, want %d", k, before+1)
	}
	if _, err := s.OpenValue("r", "other"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("lookup of a value the run never held: %v, want unknown_reference", err)
	}
	if _, err := s.OpenValue("r", "old"); !errors.Is(err, ErrCollected) {
		t.Fatalf("lookup of a value of the collected generation: %v, want collected", err)
	}
}

// tombstoneOverLiveRun returns a store whose run "r" was collected (its
// value "old" with it), written into again ("new"), and then given the
// collection's tombstone back: a tombstone over a live run, newer than
// its values.
func tombstoneOverLiveRun(t *testing.T, srv *s3test.Server) (*Store, *objStore) {
	t.Helper()
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "old", toolOutput("old", 100))
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	b, _, err := o.b.Get(o.ctx, tombstoneKey("r"), MaxTombstoneBytes)
	if err != nil {
		t.Fatal(err)
	}
	retainAll(t, s, "r", "new", toolOutput("new", 100))
	if _, err := o.b.Put(o.ctx, tombstoneKey("r"), b); err != nil {
		t.Fatal(err)
	}
	return s, o
}

// A tombstone left in a live run (its new writer died before removing it)
// does not hide that run's damage from verify: only a collection in
// progress or a run that is gone does.
func TestObjectVerifyReportsALiveRunUnderAStaleTombstone(t *testing.T) {
	s3test.Each(t, testObjectVerifyReportsALiveRunUnderAStaleTombstone)
}

func testObjectVerifyReportsALiveRunUnderAStaleTombstone(t *testing.T, srv *s3test.Server) {
	s, o := tombstoneOverLiveRun(t, srv)
	if _, err := o.b.Put(o.ctx, objKey("r", "new.txt"), bytes.ToUpper(toolOutput("new", 100))); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrupt != 1 {
		t.Fatalf("verify: %d corrupt, want 1: %+v", rep.Corrupt, rep.Problems)
	}
}

// Content missing under a descriptor that is still there is damage, not a
// collection, even where an earlier collection's tombstone was left in the
// run written again.
func TestObjectMissingContentUnderAStaleTombstoneIsCorrupt(t *testing.T) {
	s3test.Each(t, testObjectMissingContentUnderAStaleTombstoneIsCorrupt)
}

func testObjectMissingContentUnderAStaleTombstoneIsCorrupt(t *testing.T, srv *s3test.Server) {
	s, o := tombstoneOverLiveRun(t, srv)
	v, err := s.OpenValue("r", "new")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := o.b.Delete(o.ctx, objKey("r", "new.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := v.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of deleted content: %v, want corrupt", err)
	}
	if _, err := s.OpenValue("r", "new"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a value without content: %v, want corrupt", err)
	}
}

// staleTombstoneRun returns a store whose run "r" was collected (its
// value "old" with it) and then written into again ("new") by a writer
// that died before it removed the old tombstone.
func staleTombstoneRun(t *testing.T, srv *s3test.Server) (*Store, *objStore) {
	t.Helper()
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "old", toolOutput("old", 100))
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	tomb, err := o.b.Stat(o.ctx, tombstoneKey("r"))
	if err != nil {
		t.Fatal(err)
	}
	// Last-Modified has whole seconds: the new value must be of a later
	// one to be told from the collection.
	waitServerPast(t, o, tomb.Modified)
	object.TestHookDiesBeforeTombstone = true
	t.Cleanup(func() { object.TestHookDiesBeforeTombstone, object.SettledAfter = false, LeaseTTL })
	retainAll(t, s, "r", "new", toolOutput("new", 100))
	object.TestHookDiesBeforeTombstone = false
	if _, err := o.b.Stat(o.ctx, tombstoneKey("r")); err != nil {
		t.Fatalf("the writer was to leave the tombstone: %v", err)
	}
	// The writer is long dead by the time the run is read: its value is
	// older than object.SettledAfter, which the test makes none, by the
	// server's clock (whose Date may lag a Last-Modified).
	d, err := o.b.Stat(o.ctx, objKey("r", metaName("new")))
	if err != nil {
		t.Fatal(err)
	}
	object.SettledAfter = 0
	waitServerPast(t, o, d.Modified)
	return s, o
}

// A run written into again whose writer died before it removed the old
// tombstone is live all the same: what its readers write stays, a lookup
// of an id it never held is unknown_reference, and the stale tombstone
// goes.
func TestObjectStaleTombstoneOfALiveRun(t *testing.T) {
	s3test.Each(t, testObjectStaleTombstoneOfALiveRun)
}

func testObjectStaleTombstoneOfALiveRun(t *testing.T, srv *s3test.Server) {
	s, o := staleTombstoneRun(t, srv)
	s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "new", Bytes: 10, Call: true})
	if k := keysUnder(t, o, objKey("r", readsDir)); len(k) != 1 {
		t.Fatalf("read records of the live run: %v, want 1", k)
	}
	if _, err := o.b.Stat(o.ctx, tombstoneKey("r")); err == nil {
		t.Fatal("the stale tombstone is still there")
	}
	if _, err := s.OpenValue("r", "other"); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected) {
		t.Fatalf("lookup of a value the live run never held: %v, want unknown_reference", err)
	}
}

// The same, the lookup first: it too finds the tombstone stale.
func TestObjectStaleTombstoneLookup(t *testing.T) { s3test.Each(t, testObjectStaleTombstoneLookup) }

func testObjectStaleTombstoneLookup(t *testing.T, srv *s3test.Server) {
	s, _ := staleTombstoneRun(t, srv)
	if _, err := s.OpenValue("r", "other"); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected) {
		t.Fatalf("lookup of a value the live run never held: %v, want unknown_reference", err)
	}
}

// waitServerPast waits until the server's clock is in a second after
// when's (Last-Modified and Date have whole seconds).
func waitServerPast(t *testing.T, o *objStore, when time.Time) {
	t.Helper()
	for {
		n, err := o.b.Now(o.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n.Truncate(time.Second).After(when) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A writer that commits into a run while gc collects it sees the marker
// and takes its value back; until it has, its descriptor is newer than
// the collection's tombstone, and once the marker is gone nothing else
// tells the run from one written again. A reader in that moment must not
// take the tombstone for a stale one: deleted, the collected run would
// answer unknown_reference for good, and the reader's write would be left
// in it.
func TestObjectTombstoneOfARunWhoseWriterUndoesIsNotStale(t *testing.T) {
	s3test.Each(t, testObjectTombstoneOfARunWhoseWriterUndoesIsNotStale)
}

func testObjectTombstoneOfARunWhoseWriterUndoesIsNotStale(t *testing.T, srv *s3test.Server) {
	s, o, ri, ws, rec := idleRun(t, srv, "old", toolOutput("old", 100))
	content, meta := "/"+objKey("r", "new.txt"), "/"+objKey("r", metaName("new"))
	uploading, upload := make(chan struct{}), make(chan struct{})
	undoing, undo := make(chan struct{}), make(chan struct{})
	rec.before = func(req request) {
		p := req.Path
		switch {
		case req.Method == http.MethodPut && strings.HasSuffix(p, content):
			close(uploading)
			<-upload
		case req.Method == http.MethodDelete && strings.HasSuffix(p, meta):
			close(undoing)
			<-undo
		}
	}
	in := toolOutput("new", 2000)
	w := retainInBackground(ws, "new", in)
	<-uploading // the writer found no marker before its upload
	setHook(t, func(at string, run ID) {
		if at != "deleted" {
			return
		}
		// The run's keys are deleted, the marker not yet: the writer
		// commits now, in a second after the tombstone's, finds the
		// marker, and is about to take its descriptor back.
		tomb, err := o.b.Stat(o.ctx, tombstoneKey("r"))
		if err != nil {
			t.Error(err)
		}
		waitServerPast(t, o, tomb.Modified)
		close(upload)
		<-undoing
	})
	if err := collect(t, s, ri); err != nil {
		t.Fatalf("collect: %v", err)
	}
	// The marker is gone, the writer's descriptor not yet.
	s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "old", Bytes: 10, Call: true})
	if _, err := s.OpenValue("r", "old"); !errors.Is(err, ErrCollected) {
		t.Errorf("lookup while the writer takes its value back: %v, want collected", err)
	}
	close(undo)
	<-w.done
	if w.err != nil || w.res.Retained || !bytes.Equal(w.out.Bytes(), in) {
		t.Fatalf("the writer: %+v, %v; want its input verbatim", w.res, w.err)
	}
	if _, err := s.OpenValue("r", "old"); !errors.Is(err, ErrCollected) {
		t.Fatalf("lookup in the collected run: %v, want collected", err)
	}
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 0 {
		t.Fatalf("left in the collected run: %v", k)
	}
}

// A writer that died right after its commit, into a run gc was
// collecting: its descriptor came after the collection's last listing,
// its content before, and gc deleted the content. That descriptor names
// nothing, and does not make the collection's tombstone stale, however
// Old it gets: the collected run says collected.
func TestObjectDescriptorWithoutContentDoesNotMakeATombstoneStale(t *testing.T) {
	s3test.Each(t, testObjectDescriptorWithoutContentDoesNotMakeATombstoneStale)
}

func testObjectDescriptorWithoutContentDoesNotMakeATombstoneStale(t *testing.T, srv *s3test.Server) {
	s, o, ri, ws, rec := idleRun(t, srv, "old", toolOutput("old", 100))
	content, meta := "/"+objKey("r", "new.txt"), "/"+objKey("r", metaName("new"))
	uploading, upload := make(chan struct{}), make(chan struct{})
	committing, commit := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	dead := false
	rec.before = func(req request) {
		p := req.Path
		switch {
		case req.Method == http.MethodPut && strings.HasSuffix(p, content):
			close(uploading)
			<-upload
		case req.Method == http.MethodPut && strings.HasSuffix(p, meta):
			close(committing)
			<-commit
		}
	}
	rec.after = func(method, key string, status int) {
		if method == http.MethodPut && strings.HasSuffix(key, meta) {
			mu.Lock()
			dead = true // nothing more is sent after the commit
			mu.Unlock()
		}
	}
	rec.fail = func(method, key string) bool {
		mu.Lock()
		defer mu.Unlock()
		return dead
	}
	w := retainInBackground(ws, "new", toolOutput("new", 2000))
	<-uploading // the writer found no marker before its upload
	setHook(t, func(at string, run ID) {
		switch at {
		case "committed": // the content lands after the collection's plan, to be deleted with the run
			close(upload)
			<-committing
		case "deleted": // the descriptor after the last listing, in a second after the tombstone's
			tomb, err := o.b.Stat(o.ctx, tombstoneKey("r"))
			if err != nil {
				t.Error(err)
			}
			waitServerPast(t, o, tomb.Modified)
			close(commit)
			<-w.done
		}
	})
	if err := collect(t, s, ri); err != nil {
		t.Fatalf("collect: %v", err)
	}
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 1 || k[0] != objKey("r", metaName("new")) {
		t.Fatalf("left of the run: %v, want the dead writer's descriptor", k)
	}
	d, err := o.b.Stat(o.ctx, objKey("r", metaName("new")))
	if err != nil {
		t.Fatal(err)
	}
	object.SettledAfter = 0 // the writer is long dead
	t.Cleanup(func() { object.SettledAfter = LeaseTTL })
	waitServerPast(t, o, d.Modified)
	if _, err := s.OpenValue("r", "old"); !errors.Is(err, ErrCollected) {
		t.Fatalf("lookup in the collected run: %v, want collected", err)
	}
	if _, ok := s.ReadTombstone("r"); !ok {
		t.Fatal("the collection's tombstone is gone")
	}
}

// A run's values listed while gc collects it: the listing is made, then
// each descriptor read, and gc deletes descriptors in between. The
// answer is the whole run or collected, as locally under the run's lock:
// never the values read before the deletions alone.
func TestObjectValuesOfARunCollectedMeanwhile(t *testing.T) {
	s3test.Each(t, testObjectValuesOfARunCollectedMeanwhile)
}

func testObjectValuesOfARunCollectedMeanwhile(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "a", toolOutput("a", 100))
	retainAll(t, s, "r", "b", toolOutput("b", 100))
	ri := idleScan(t, s, now, "r")
	rec := &recorder{}
	rs := recordedStore(t, o, rec)
	second, collected := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	reads := 0
	rec.before = func(req request) {
		if req.Method != http.MethodGet || !strings.HasSuffix(req.Path, metaExt) {
			return
		}
		mu.Lock()
		reads++
		n := reads
		mu.Unlock()
		if n == 2 {
			close(second)
			<-collected
		}
	}
	var vals []Descriptor
	var verr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		vals, verr = rs.Values("r")
	}()
	<-second // one descriptor read, the other about to be
	if err := collect(t, s, ri); err != nil {
		t.Fatalf("collect: %v", err)
	}
	close(collected)
	<-done
	if verr == nil && len(vals) != 2 || verr != nil && !errors.Is(verr, ErrCollected) {
		t.Fatalf("values of a run collected while they were read: %d of 2 (%v), want both or collected", len(vals), verr)
	}
}

// A collected run that holds a key left by a reader that died before
// taking its write back lists as collected, not as a run of no values.
func TestObjectValuesOfACollectedRunWithAStrayKey(t *testing.T) {
	s3test.Each(t, testObjectValuesOfACollectedRunWithAStrayKey)
}

func testObjectValuesOfACollectedRunWithAStrayKey(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "a", toolOutput("a", 100))
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.b.Put(o.ctx, objKey("r", activityName), nil); err != nil {
		t.Fatal(err)
	}
	if vals, err := s.Values("r"); !errors.Is(err, ErrCollected) {
		t.Fatalf("values of a collected run: %d, %v; want collected", len(vals), err)
	}
}
