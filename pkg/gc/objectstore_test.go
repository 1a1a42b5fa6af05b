package gc

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/retain/s3store"
)

// gc on object storage, through the same policy code as on disk. Ages are
// the server's Last-Modified against the store's clock: a clock set hours
// ahead makes every run idle; no test waits.

type s3Fixture struct {
	s   *retain.Store
	now *time.Time
	raw *s3store.Bucket // the store's prefix, for the test's own looks
}

const s3Prefix = "fleet/runs"

// newS3 is a store on a fresh bucket of srv, opened from its address and
// the AWS variables as retval opens one.
func newS3(t *testing.T, srv *s3test.Server) *s3Fixture {
	t.Helper()
	srv.SetEnv(t)
	loc := s3store.Location{Bucket: srv.NewBucket(t), Prefix: s3Prefix}
	now := time.Now()
	f := &s3Fixture{now: &now, raw: srv.Open(loc)}
	f.s = &retain.Store{Dir: loc.String(), Now: func() time.Time { return now }}
	return f
}

func (f *s3Fixture) put(t *testing.T, key string, body []byte) {
	t.Helper()
	if _, err := f.raw.Put(context.Background(), key, body); err != nil {
		t.Fatal(err)
	}
}

func (f *s3Fixture) keys(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	if err := f.raw.List(context.Background(), prefix, func(o s3store.Object) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// valueKeys is keys without the read log's records (every retain writes
// one): the keys of the values themselves.
func (f *s3Fixture) valueKeys(t *testing.T, prefix string) []string {
	var out []string
	for _, k := range f.keys(t, prefix) {
		if !strings.Contains(k, "/.reads/") {
			out = append(out, k)
		}
	}
	return out
}

var s3Body = bytes.Repeat([]byte("a line of a tool result\n"), 1000)

func TestS3CollectIdleRun(t *testing.T) { s3test.Each(t, testS3CollectIdleRun) }

func testS3CollectIdleRun(t *testing.T, srv *s3test.Server) {
	f := newS3(t, srv)
	put(t, f.s, "a", "c1", s3Body)
	put(t, f.s, "a", "c2", s3Body[:5000])
	put(t, f.s, "b", "c1", s3Body)
	f.put(t, "b.values/half.txt", []byte("content whose descriptor never came"))
	*f.now = time.Now().Add(48 * time.Hour)

	o := Options{MaxAge: Unlimited, KeepRuns: 1, Grace: time.Hour}
	plan, err := Collect(f.s, Options{MaxAge: o.MaxAge, KeepRuns: o.KeepRuns, Grace: o.Grace, DryRun: true})
	if err != nil || len(f.valueKeys(t, "a.values/")) != 4 {
		t.Fatalf("dry run: %v; it must change nothing", err)
	}
	r, err := Collect(f.s, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Removed); !slices.Equal(got, []string{"a:keep-runs"}) || !slices.Equal(names(plan.Removed), got) {
		t.Fatalf("removed %v, planned %v", got, names(plan.Removed))
	}
	if r.Removed[0].Values != 2 || r.Removed[0].Bytes <= int64(len(s3Body)+5000) { // content and descriptors
		t.Errorf("removal %+v", r.Removed[0])
	}
	if len(r.Debris) != 1 || r.Debris[0].Path != "b.values/half.txt" || r.Debris[0].Kind != "orphan" {
		t.Errorf("debris %+v", r.Debris)
	}
	if k := f.keys(t, "a.values/"); len(k) != 0 {
		t.Fatalf("left of run a: %v", k)
	}
	if k := f.keys(t, ".retval/collecting/"); len(k) != 0 {
		t.Fatalf("markers left: %v", k)
	}
	if _, err := f.s.OpenValue("a", "c1"); !errors.Is(err, retain.ErrCollected) {
		t.Fatalf("peek in the collected run: %v, want collected", err)
	}
	if ts, ok := f.s.ReadTombstone("a"); !ok || ts.Values != 2 {
		t.Fatalf("tombstone %+v", ts)
	}
	if v, err := f.s.OpenValue("b", "c1"); err != nil {
		t.Fatalf("the kept run: %v", err)
	} else {
		v.Close()
	}
	// The lease was let go: the next gc runs.
	if _, err := Collect(f.s, o); err != nil {
		t.Fatalf("second gc: %v", err)
	}
}

func TestS3GraceKeepsActiveRun(t *testing.T) { s3test.Each(t, testS3GraceKeepsActiveRun) }

func testS3GraceKeepsActiveRun(t *testing.T, srv *s3test.Server) {
	f := newS3(t, srv)
	put(t, f.s, "r", "c1", s3Body)
	*f.now = time.Now().Add(30 * time.Minute)
	r, err := Collect(f.s, Options{MaxAge: 10 * time.Minute, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 0 || !slices.Equal(skips(r.Skipped), []string{"r:max-age:active"}) {
		t.Fatalf("removed %v, skipped %v", names(r.Removed), skips(r.Skipped))
	}
	if len(f.valueKeys(t, "r.values/")) != 2 {
		t.Fatal("the active run lost keys")
	}
}

func TestS3SecondGcIsBusy(t *testing.T) { s3test.Each(t, testS3SecondGcIsBusy) }

func testS3SecondGcIsBusy(t *testing.T, srv *s3test.Server) {
	f := newS3(t, srv)
	put(t, f.s, "r", "c1", s3Body)
	l, err := f.s.LockCollector(true)
	if err != nil {
		t.Fatal(err)
	}
	*f.now = time.Now().Add(48 * time.Hour)
	other := &retain.Store{Dir: f.s.Dir, Now: f.s.Now}
	for _, dry := range []bool{false, true} {
		r, err := Collect(other, Options{MaxAge: time.Hour, DryRun: dry})
		if !errors.Is(err, retain.ErrBusy) || r != nil {
			t.Fatalf("gc (dry run %v) beside a running one: %v, want busy", dry, err)
		}
	}
	if len(f.valueKeys(t, "r.values/")) != 2 {
		t.Fatal("the busy gc changed the store")
	}
	l.Unlock()
	r, err := Collect(other, Options{MaxAge: time.Hour})
	if err != nil || len(r.Removed) != 1 {
		t.Fatalf("once the first let go: %v, %v", r, err)
	}
}

// What a gc that stopped half-way left: a marker before its commit
// (the run stays, and writes to it work again once the marker goes), and
// a marker after its commit (what is left of the run goes, and catalogue
// no longer lists the run).
func TestS3InterruptedCollections(t *testing.T) { s3test.Each(t, testS3InterruptedCollections) }

func testS3InterruptedCollections(t *testing.T, srv *s3test.Server) {
	f := newS3(t, srv)
	put(t, f.s, "live", "c1", s3Body)
	put(t, f.s, "dead", "c1", s3Body)
	f.put(t, ".retval/collecting/live", []byte("{}"))
	f.put(t, ".retval/collecting/dead", []byte("{}"))
	if err := f.s.WriteTombstone(retain.Tombstone{Run: "dead", Collected: f.s.Clock().UTC(), Values: 1}); err != nil {
		t.Fatal(err)
	}
	// A retain under the stale marker prints its input.
	var out bytes.Buffer
	res, err := f.s.Retain(bytes.NewReader(s3Body), &out, retain.RetainOptions{Run: "live", Call: "c2", Limits: lim})
	if err != nil || res.Retained || !bytes.Equal(out.Bytes(), s3Body) {
		t.Fatalf("retain under a marker: %v", err)
	}
	runs, err := f.s.Runs(time.Hour)
	if err != nil || len(runs) != 1 || runs[0].Run != "live" {
		t.Fatalf("catalogue --all during the committed collection of dead: %v", err)
	}

	r, err := Collect(f.s, Options{}) // nothing is idle: only the leftovers go
	if err != nil {
		t.Fatal(err)
	}
	var trash []string
	for _, x := range r.Trash {
		trash = append(trash, x.Path)
	}
	if !slices.Equal(trash, []string{".retval/collecting/dead", ".retval/collecting/live"}) || r.Trash[0].Bytes == 0 || r.Trash[1].Bytes != 0 {
		t.Fatalf("trash %+v", r.Trash)
	}
	if len(r.Removed) != 0 || len(r.Skipped) != 0 {
		t.Fatalf("removed %v, skipped %v", names(r.Removed), skips(r.Skipped))
	}
	if k := f.keys(t, "dead.values/"); len(k) != 0 {
		t.Fatalf("left of dead: %v", k)
	}
	if k := f.keys(t, ".retval/collecting/"); len(k) != 0 {
		t.Fatalf("markers left: %v", k)
	}
	if _, err := f.s.OpenValue("dead", "c1"); !errors.Is(err, retain.ErrCollected) {
		t.Fatalf("dead: %v, want collected", err)
	}
	res, err = f.s.Retain(bytes.NewReader(s3Body), &out, retain.RetainOptions{Run: "live", Call: "c2", Limits: lim})
	if err != nil || !res.Retained {
		t.Fatalf("retain once the marker is gone: %v", err)
	}
}
