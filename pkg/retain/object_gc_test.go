package retain

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain/internal/backend/object"
	"github.com/retval/retval/pkg/retain/s3store"
)

// idle makes the store's clock say every run is idle, and scans run.
func idleScan(t *testing.T, s *Store, now *time.Time, run ID) *RunInfo {
	t.Helper()
	*now = time.Now().Add(48 * time.Hour)
	ri, err := s.ScanRun(run)
	if err != nil {
		t.Fatal(err)
	}
	return ri
}

func collect(t *testing.T, s *Store, ri *RunInfo) error {
	t.Helper()
	l, err := s.LockCollector(true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	c, err := s.OpenCollection(true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.CollectRun(ri, Tombstone{Run: ri.Run, Collected: s.Clock().UTC(), Values: ri.Values, Bytes: ri.Bytes})
}

func setHook(t *testing.T, f func(step string, run ID)) {
	object.TestHookCollecting = f
	t.Cleanup(func() { object.TestHookCollecting = nil })
}

func TestObjectCollectRunLeavesATombstone(t *testing.T) {
	s3test.Each(t, testObjectCollectRunLeavesATombstone)
}

func testObjectCollectRunLeavesATombstone(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "c1", toolOutput("c1", 100))
	ri := idleScan(t, s, now, "r")
	if err := collect(t, s, ri); err != nil {
		t.Fatal(err)
	}
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 0 {
		t.Fatalf("left of the run: %v", k)
	}
	if k := keysUnder(t, o, collectingDir); len(k) != 0 {
		t.Fatalf("markers left: %v", k)
	}
	if _, err := s.OpenValue("r", "c1"); !errors.Is(err, ErrCollected) {
		t.Fatalf("peek after collection: %v, want collected", err)
	}
	if ts, ok := s.ReadTombstone("r"); !ok || ts.Values != 1 {
		t.Fatalf("tombstone %+v %v", ts, ok)
	}
}

// A writer that commits while gc holds its marker takes its value back
// and prints the input: at every step of a collection, no stub is left
// naming a value that is not there.
func TestObjectWriterRacingACollectionFallsBack(t *testing.T) {
	s3test.Each(t, testObjectWriterRacingACollectionFallsBack)
}

func testObjectWriterRacingACollectionFallsBack(t *testing.T, srv *s3test.Server) {
	for _, step := range []string{"marked", "deleted"} {
		t.Run(step, func(t *testing.T) {
			s, o, now := s3Store(t, srv)
			retainAll(t, s, "r", "old", toolOutput("old", 100))
			ri := idleScan(t, s, now, "r")
			in := toolOutput("new", 2000)
			var res *Result
			var out bytes.Buffer
			setHook(t, func(at string, run ID) {
				if at != step {
					return
				}
				L := DefaultLimits()
				var err error
				res, err = s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "new", Limits: L})
				if err != nil {
					t.Errorf("retain: %v", err)
				}
			})
			// The writer's pass-through is recorded in the run's read log:
			// a run written to while marked may be left for the next gc.
			err := collect(t, s, ri)
			var changed *RunChangedError
			if err != nil && !errors.As(err, &changed) {
				t.Fatalf("collect: %v", err)
			}
			if res == nil || res.Retained || !bytes.Equal(out.Bytes(), in) {
				t.Fatalf("the racing writer printed %d bytes, retained=%v: want its input verbatim", out.Len(), res != nil && res.Retained)
			}
			if _, err := s.OpenValue("r", "new"); err == nil {
				t.Fatal("the racing writer's value exists")
			}
			if changed != nil {
				v, err := s.OpenValue("r", "old")
				if err != nil {
					t.Fatalf("a run left in place lost its value: %v", err)
				}
				v.Close()
			} else if k := keysUnder(t, o, runPrefix("r")); len(k) != 0 {
				t.Fatalf("left of the run: %v", k)
			}
		})
	}
}

// A run written to between the scan and the marker is not collected: the
// marker goes, the run stays whole.
func TestObjectCollectRunChanged(t *testing.T) { s3test.Each(t, testObjectCollectRunChanged) }

func testObjectCollectRunChanged(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "old", toolOutput("old", 100))
	ri := idleScan(t, s, now, "r")
	setHook(t, func(at string, run ID) {
		if at == "marked" {
			if _, err := o.b.Put(o.ctx, objKey("r", activityName), nil); err != nil {
				t.Error(err)
			}
		}
	})
	var changed *RunChangedError
	if err := collect(t, s, ri); !errors.As(err, &changed) || changed.What != ".activity appeared" {
		t.Fatalf("collect: %v, want the run changed (read)", err)
	}
	if k := keysUnder(t, o, collectingDir); len(k) != 0 {
		t.Fatalf("markers left: %v", k)
	}
	if _, ok := s.ReadTombstone("r"); ok {
		t.Fatal("a tombstone for a run that stays")
	}
	checkRoundTrip(t, s, "r", "old", toolOutput("old", 100))
}

func TestObjectCollectorLease(t *testing.T) { s3test.Each(t, testObjectCollectorLease) }

func testObjectCollectorLease(t *testing.T, srv *s3test.Server) {
	s, _, _ := s3Store(t, srv)
	retainAll(t, s, "r", "c", toolOutput("c", 100))
	l, err := s.LockCollector(true)
	if err != nil {
		t.Fatal(err)
	}
	other := &Store{Dir: s.Dir}
	for _, create := range []bool{true, false} {
		if _, err := other.LockCollector(create); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another gc is running on "+s.Dir) {
			t.Fatalf("second collector (create=%v): %v, want busy", create, err)
		}
	}
	l.Unlock()
	l2, err := other.LockCollector(true)
	if err != nil {
		t.Fatalf("after the first let go: %v", err)
	}
	l2.Unlock()
}

func TestObjectTombstoneFiles(t *testing.T) { s3test.Each(t, testObjectTombstoneFiles) }

func testObjectTombstoneFiles(t *testing.T, srv *s3test.Server) {
	s, o, _ := s3Store(t, srv)
	ts := Tombstone{Run: "gone", Collected: time.Unix(1e9, 0).UTC(), Values: 3, Bytes: 99}
	if err := s.WriteTombstone(ts); err != nil {
		t.Fatal(err)
	}
	if _, err := o.b.Put(o.ctx, tombstonePrefix+"junk.json", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	files, err := s.TombstoneFiles()
	if err != nil || len(files) != 2 {
		t.Fatalf("TombstoneFiles = %+v, %v", files, err)
	}
	if files[0].Name != "gone.json" || files[0].Tombstone == nil || *files[0].Tombstone != ts || files[1].Tombstone != nil || files[1].Problem == nil {
		t.Fatalf("files %+v", files)
	}
	if err := s.RemoveTombstoneFile("junk.json"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveTombstone("gone"); err != nil {
		t.Fatal(err)
	}
	if k := keysUnder(t, o, tombstonePrefix); len(k) != 0 {
		t.Fatalf("left: %v", k)
	}
}

// A writer that died mid-upload left parts that no listing of objects
// shows: collecting the run aborts them too.
func TestObjectCollectRunAbortsUploads(t *testing.T) {
	s3test.Each(t, testObjectCollectRunAbortsUploads)
}

func testObjectCollectRunAbortsUploads(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "c1", toolOutput("c1", 100))
	raw := o.b.API()
	if _, err := raw.CreateUpload(o.ctx, o.b.Location().Prefix+"/"+objKey("r", "dead.txt")); err != nil {
		t.Fatal(err)
	}
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	out, err := raw.ListUploads(o.ctx, s3store.ListUploadsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d unfinished uploads left after collecting the run", len(out.Uploads))
	}
}

// gc's lease is renewed on the server while gc holds it: the renewal loop
// rewrites the lease (its Last-Modified moves on) and records its success,
// and releasing it stops the loop and removes the lease. The test drives
// the loop's ticks itself: a tick sent on an unbuffered channel is taken
// only once the renewal before it has been recorded.
func TestObjectLeaseIsRenewedWhileHeld(t *testing.T) {
	s3test.Each(t, testObjectLeaseIsRenewedWhileHeld)
}

func testObjectLeaseIsRenewedWhileHeld(t *testing.T, srv *s3test.Server) {
	_, o, _ := s3Store(t, srv)
	l, err := o.b.AcquireLease(o.ctx, leaseKey, leaseHolder(), LeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	first, err := o.b.Stat(o.ctx, leaseKey)
	if err != nil {
		t.Fatal(err)
	}
	// Last-Modified has whole seconds: let the server's clock pass the
	// lease's second, or a renewal could not be told from the acquire.
	waitServerPast(t, o, first.Modified)
	// Taken, as far as the loop knows, a second ago: a renewal's own
	// reading of the clock comes after it even where the clock is coarse
	// (Windows under Wine may read the same time twice, milliseconds apart).
	start := time.Now().Add(-time.Second)
	tick := make(chan time.Time)
	ol := o.StartLease(l, tick, start)
	tick <- time.Now() // the first renewal
	tick <- time.Now() // taken once the first is recorded
	renewed, lost := ol.State()
	if lost != nil || !renewed.After(start) {
		t.Fatalf("renewal loop: lost %v, renewed %v after start", lost, renewed.Sub(start))
	}
	st, err := o.b.Stat(o.ctx, leaseKey)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Modified.After(first.Modified) {
		t.Fatalf("the lease on the server was not rewritten: Last-Modified %v, at acquire %v", st.Modified, first.Modified)
	}
	ol.Release()
	if _, err := o.b.Stat(o.ctx, leaseKey); err == nil {
		t.Fatal("a released lease is still there")
	}
}

// The same bytes retained again while gc collects their run: the value is
// still there when the retain looks, but a collection in progress deletes
// it next. No stub may name it then: the input goes out verbatim, as for a
// new value (TestObjectWriterRacingACollectionFallsBack).
func TestObjectRetainAgainRacingACollectionFallsBack(t *testing.T) {
	s3test.Each(t, testObjectRetainAgainRacingACollectionFallsBack)
}

func testObjectRetainAgainRacingACollectionFallsBack(t *testing.T, srv *s3test.Server) {
	for _, step := range []string{"marked", "committed"} {
		t.Run(step, func(t *testing.T) {
			s, _, now := s3Store(t, srv)
			in := toolOutput("old", 2000)
			retainAll(t, s, "r", "old", in)
			ri := idleScan(t, s, now, "r")
			var res *Result
			var out bytes.Buffer
			setHook(t, func(at string, run ID) {
				if at != step {
					return
				}
				var err error
				res, err = s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "old", Limits: DefaultLimits()})
				if err != nil {
					t.Errorf("retain again: %v", err)
				}
			})
			err := collect(t, s, ri)
			var changed *RunChangedError
			if err != nil && !errors.As(err, &changed) {
				t.Fatalf("collect: %v", err)
			}
			if res == nil {
				t.Fatal("the retain did not run")
			}
			v, verr := s.OpenValue("r", "old")
			if verr == nil {
				v.Close()
			}
			switch {
			case res.Retained && verr != nil:
				t.Fatalf("the retain again printed a stub of a value that is gone: %v", verr)
			case !res.Retained && !bytes.Equal(out.Bytes(), in):
				t.Fatalf("the retain again printed %d bytes, want its input verbatim", out.Len())
			}
		})
	}
}

// recordedStore is a second Store on o's bucket and prefix, as another
// process would open it, whose requests go through rec.

// idleRun is run "r" on object storage holding call's value in, idle and
// planned for collection (ri), with a second store on the same bucket
// whose requests rec sees: the writer or reader a race test drives
// against the collection.
func idleRun(t *testing.T, srv *s3test.Server, call string, in []byte) (s *Store, o *objStore, ri *RunInfo, ws *Store, rec *recorder) {
	t.Helper()
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", call, in)
	ri = idleScan(t, s, now, "r")
	rec = &recorder{}
	return s, o, ri, recordedStore(t, o, rec), rec
}

func recordedStore(t *testing.T, o *objStore, rec *recorder) *Store {
	t.Helper()
	loc := o.b.Location()
	return OpenBucket(s3store.New(rec.wrap(o.b.API(), loc.Bucket), loc))
}

// A writer's checks after its commit are answered in an order of the
// server's: the marker's answer may come after gc has deleted the run
// and its marker, while the content was asked and found before those
// deletions. A stub then names a value that is gone. The content must be
// asked only once the marker is known to be absent: a collection that
// began before has then finished, and what it deletes is gone already.
func TestObjectWriterAsksForTheMarkerBeforeItsContent(t *testing.T) {
	s3test.Each(t, testObjectWriterAsksForTheMarkerBeforeItsContent)
}

func testObjectWriterAsksForTheMarkerBeforeItsContent(t *testing.T, srv *s3test.Server) {
	s, _, ri, ws, rec := idleRun(t, srv, "old", toolOutput("old", 100))
	content, meta, marker := "/"+objKey("r", "new.txt"), "/"+objKey("r", metaName("new")), "/"+collectingKey("r")
	uploading, upload := make(chan struct{}), make(chan struct{})
	markerAsked, collected := make(chan struct{}), make(chan struct{})
	contentAsked, contentSeen := make(chan struct{}), make(chan struct{})
	var committed bool // set and read on the writer's requests, one after another until its checks
	var mu sync.Mutex
	rec.before = func(req request) {
		p := req.Path
		switch {
		case req.Method == http.MethodPut && strings.HasSuffix(p, content):
			close(uploading)
			<-upload
		case req.Method == http.MethodPut && strings.HasSuffix(p, meta):
			mu.Lock()
			committed = true
			mu.Unlock()
		case req.Method == http.MethodHead && strings.HasSuffix(p, content):
			close(contentAsked)
		case req.Method == http.MethodHead && strings.HasSuffix(p, marker):
			mu.Lock()
			after := committed
			mu.Unlock()
			if after {
				close(markerAsked)
				<-collected
			}
		}
	}
	rec.after = func(method, key string, status int) {
		if method == http.MethodHead && strings.HasSuffix(key, content) {
			close(contentSeen)
		}
	}
	in := toolOutput("new", 2000)
	w := retainInBackground(ws, "new", in)
	<-uploading // the writer found no marker before its upload
	setHook(t, func(at string, run ID) {
		if at != "committed" {
			return
		}
		// The tombstone is written, nothing deleted: the writer uploads
		// and commits now, and asks its checks.
		close(upload)
		<-markerAsked
		// A writer that asked for its content beside the marker has
		// that answer before the deletions.
		select {
		case <-contentAsked:
			<-contentSeen
		default:
		}
	})
	if err := collect(t, s, ri); err != nil {
		t.Fatalf("collect: %v", err)
	}
	close(collected)
	<-w.done
	if w.err != nil {
		t.Fatal(w.err)
	}
	if w.res.Retained {
		v, err := s.OpenValue("r", "new")
		if err != nil {
			t.Fatalf("the writer printed a stub of a value gc deleted: %v", err)
		}
		v.Close()
	} else if !bytes.Equal(w.out.Bytes(), in) {
		t.Fatalf("the writer printed %d bytes, want its input verbatim", w.out.Len())
	}
	if _, err := s.OpenValue("r", "old"); !errors.Is(err, ErrCollected) {
		t.Fatalf("lookup in the collected run: %v, want collected", err)
	}
}

// A gc that lost its lease while collecting a run stops before its next
// change, and that change includes deleting the run's marker: the gc
// that holds the lease by then may have marked the run for its own
// collection (a marker it finds is taken over as one a stopped gc left),
// and without it a writer could commit into a run that gc is deleting.
func TestObjectCollectorPastItsLeaseLeavesTheMarker(t *testing.T) {
	s3test.Each(t, testObjectCollectorPastItsLeaseLeavesTheMarker)
}

func testObjectCollectorPastItsLeaseLeavesTheMarker(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "old", toolOutput("old", 100))
	ri := idleScan(t, s, now, "r")
	theirs := []byte(`{"run":"r","holder":"the gc that holds the lease now"}` + "\n")
	setHook(t, func(at string, run ID) {
		if at != "marked" {
			return
		}
		// This gc stalled past its lease; another took it over and
		// marked the run.
		o.Lease().Lose(errors.New("taken over"))
		if _, err := o.b.Put(o.ctx, collectingKey("r"), theirs); err != nil {
			t.Error(err)
		}
	})
	if err := collect(t, s, ri); !errors.Is(err, ErrBusy) {
		t.Fatalf("collect past the lease: %v, want busy", err)
	}
	b, _, err := o.b.Get(o.ctx, collectingKey("r"), 4<<10)
	if err != nil || !bytes.Equal(b, theirs) {
		t.Fatalf("the marker of the gc that holds the lease: %q, %v", b, err)
	}
}

// A renewal rewrites the lease when the server takes it, and the lease
// lasts its TTL from then: a renewal whose answer comes back late has
// used up that much of it. gc judges its lease from when it sent the
// renewal, or it would go on working after another gc may have taken
// the lease over. The clock is the test's: the renewal's answer takes
// most of the TTL to come back.
func TestObjectLeaseCountsFromTheRenewalSent(t *testing.T) {
	s3test.Each(t, testObjectLeaseCountsFromTheRenewalSent)
}

func testObjectLeaseCountsFromTheRenewalSent(t *testing.T, srv *s3test.Server) {
	rec := &recorder{}
	s, _ := objectStore(t, srv, rec)
	o := objectBackend(t, s)
	var mu sync.Mutex
	clock := time.Now()
	object.LeaseNow = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	t.Cleanup(func() { object.LeaseNow = time.Now })
	l, err := o.b.AcquireLease(o.ctx, leaseKey, leaseHolder(), LeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	rec.after = func(method, key string, status int) {
		if method == http.MethodPut && strings.HasSuffix(key, "/"+leaseKey) {
			mu.Lock()
			clock = clock.Add(LeaseTTL * 95 / 100)
			mu.Unlock()
		}
	}
	tick := make(chan time.Time)
	ol := o.StartLease(l, tick, object.LeaseNow())
	tick <- time.Now()
	ol.Release() // once the renewal is recorded
	if err := ol.Check(); !errors.Is(err, ErrBusy) {
		t.Fatalf("the lease after a renewal answered %v late: %v, want lost", LeaseTTL*95/100, err)
	}
}

// The same bytes retained again just before gc marks their run: the
// retain finds no marker and its content there, and a collection that
// marks the run after that must see the run written to, as it sees a
// new value's descriptor, or the stub names a value it deletes. The
// retain writes the run's activity first (locally it touches the run
// under its lock).
func TestObjectRetainAgainBeforeACollectionStopsIt(t *testing.T) {
	s3test.Each(t, testObjectRetainAgainBeforeACollectionStopsIt)
}

func testObjectRetainAgainBeforeACollectionStopsIt(t *testing.T, srv *s3test.Server) {
	in := toolOutput("old", 2000)
	s, _, ri, ws, rec := idleRun(t, srv, "old", in)
	content := "/" + objKey("r", "old.txt")
	asking, ask := make(chan struct{}), make(chan struct{})
	rec.before = func(req request) {
		if req.Method == http.MethodHead && strings.HasSuffix(req.Path, content) {
			close(asking)
			<-ask
		}
	}
	w := retainInBackground(ws, "old", in)
	<-asking // the retain found no marker, and asks for the content
	var once sync.Once
	release := func() {
		once.Do(func() {
			close(ask)
			<-w.done
		})
	}
	setHook(t, func(at string, run ID) {
		if at == "committed" {
			release()
		}
	})
	err := collect(t, s, ri)
	var changed *RunChangedError
	if err != nil && !errors.As(err, &changed) {
		t.Fatalf("collect: %v", err)
	}
	release()
	if w.err != nil {
		t.Fatal(w.err)
	}
	if w.res.Retained {
		v, err := s.OpenValue("r", "old")
		if err != nil {
			t.Fatalf("the retain again printed a stub of a value gc collected: %v", err)
		}
		v.Close()
	}
}

// background is a retain of run r started by retainInBackground: its
// result, error and what it printed are there once done is closed.
type background struct {
	res  *Result
	err  error
	out  bytes.Buffer
	done chan struct{}
}

// retainInBackground retains in as call of run r on s, with the default
// limits, on a goroutine of its own: the test drives the requests it
// sends meanwhile.
func retainInBackground(s *Store, call string, in []byte) *background {
	b := &background{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.res, b.err = s.Retain(bytes.NewReader(in), &b.out, RetainOptions{Run: "r", Call: call, Limits: DefaultLimits()})
	}()
	return b
}

// The same bytes retained again into a run that gc collects between the
// retain's first look at the value and its checks: the input goes out
// verbatim, and the warning says the run was collected, not that an
// object was missing.
func TestObjectRetainAgainAfterACollectionSaysCollected(t *testing.T) {
	s3test.Each(t, testObjectRetainAgainAfterACollectionSaysCollected)
}

func testObjectRetainAgainAfterACollectionSaysCollected(t *testing.T, srv *s3test.Server) {
	in := toolOutput("old", 2000)
	s, o, ri, ws, rec := idleRun(t, srv, "old", in)
	stamp := "/" + objKey("r", activityName)
	var once sync.Once
	rec.before = func(req request) {
		if req.Method == http.MethodPut && strings.HasSuffix(req.Path, stamp) {
			once.Do(func() {
				if err := collect(t, s, ri); err != nil {
					t.Errorf("collect: %v", err)
				}
			})
		}
	}
	var out bytes.Buffer
	res, err := ws.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "old", Limits: DefaultLimits()})
	if err != nil || res.Retained || !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("retain again: %+v, %v; want its input verbatim", res, err)
	}
	if !errors.Is(res.Warning, ErrCollected) || !strings.Contains(res.Warning.Error(), "retain into a new run") {
		t.Fatalf("warning %v: want the run's collection and what to do", res.Warning)
	}
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 0 {
		t.Fatalf("left in the collected run: %v", k)
	}
}
