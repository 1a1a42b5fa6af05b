package retain

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain/s3store"
)

// s3Store is a store on a fresh bucket of srv, opened from its address
// and the AWS variables as retval opens one, with a clock the test sets
// (ages are judged against the server's Last-Modified, so a clock hours
// ahead makes every run idle).
func s3Store(t *testing.T, srv *s3test.Server) (*Store, *objStore, *time.Time) {
	t.Helper()
	srv.SetEnv(t)
	now := time.Now()
	s := &Store{Dir: "s3://" + srv.NewBucket(t) + "/fleet/runs", Now: func() time.Time { return now }}
	return s, objectBackend(t, s), &now
}

func toolOutput(tag string, n int) []byte {
	return bytes.Repeat([]byte(tag+" line of a tool result\n"), n)
}

// keysUnder lists what the bucket holds under prefix.
func keysUnder(t *testing.T, o *objStore, prefix string) []string {
	t.Helper()
	var out []string
	if err := o.b.List(o.ctx, prefix, func(ob s3store.Object) error {
		out = append(out, ob.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestObjectRunsCountByTheOneRule(t *testing.T) { s3test.Each(t, testObjectRunsCountByTheOneRule) }

func testObjectRunsCountByTheOneRule(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	a1 := toolOutput("a1", 100)
	retainAll(t, s, "a", "c1", a1)
	retainComp(t, s, "a", "c2", toolOutput("a2", 60000), "zstd")
	retainAll(t, s, "b", "c1", toolOutput("b1", 50))
	// A descriptor whose content is gone is not a value anywhere.
	retainAll(t, s, "b", "gone", toolOutput("b2", 50))
	if err := o.b.Delete(o.ctx, objKey("b", contentName("gone", CompressNone))); err != nil {
		t.Fatal(err)
	}
	// Content without a descriptor: debris, not a value.
	if _, err := o.b.Put(o.ctx, objKey("b", "orphan.txt"), []byte("half a write")); err != nil {
		t.Fatal(err)
	}
	if missing, err := s.RunsDirMissing(); err != nil || missing {
		t.Fatalf("RunsDirMissing = %v, %v", missing, err)
	}
	ids, err := s.RunIDs()
	if err != nil || len(ids) != 2 || ids[0] != "a" || ids[1] != "b" {
		t.Fatalf("RunIDs = %v, %v", ids, err)
	}
	runs, err := s.Runs(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Values != 2 || runs[1].Values != 1 || !runs[0].Active || runs[0].Busy {
		t.Fatalf("runs = %+v %+v", runs[0], runs[1])
	}
	for _, ri := range runs {
		vals, err := s.Values(string(ri.Run))
		if err != nil || len(vals) != ri.Values {
			t.Errorf("run %s: catalogue --all says %d values, catalogue --run %d (%v)", ri.Run, ri.Values, len(vals), err)
		}
		var bytes int64
		var newest time.Time
		for _, k := range keysUnder(t, o, runPrefix(ri.Run)) {
			st, _ := o.b.Stat(o.ctx, k)
			bytes += st.Size
			if st.Modified.After(newest) {
				newest = st.Modified
			}
		}
		if ri.Bytes != bytes || !ri.LastActivity.Equal(newest) {
			t.Errorf("run %s: bytes %d, last activity %v; the listing says %d, %v", ri.Run, ri.Bytes, ri.LastActivity, bytes, newest)
		}
	}
	kinds := map[string]EntryKind{}
	for _, e := range runs[1].Entries {
		kinds[e.Name] = e.Kind
	}
	if kinds["orphan.txt"] != KindOrphan || kinds["c1.txt"] != KindValue || kinds["gone.meta.json"] != KindValue {
		t.Errorf("entry kinds of b: %v", kinds)
	}
	*now = now.Add(2 * time.Hour)
	runs, err = s.Runs(time.Hour)
	if err != nil || runs[0].Active || runs[1].Active {
		t.Fatalf("two hours on, runs still active: %v", err)
	}
}

func TestObjectRunsDirMissingOnAnEmptyPrefix(t *testing.T) {
	s3test.Each(t, testObjectRunsDirMissingOnAnEmptyPrefix)
}

func testObjectRunsDirMissingOnAnEmptyPrefix(t *testing.T, srv *s3test.Server) {
	s, _, _ := s3Store(t, srv)
	if missing, err := s.RunsDirMissing(); err != nil || !missing {
		t.Fatalf("RunsDirMissing = %v, %v; want true", missing, err)
	}
	if ids, err := s.RunIDs(); err != nil || len(ids) != 0 {
		t.Fatalf("RunIDs = %v, %v", ids, err)
	}
}

func TestObjectVerify(t *testing.T) { s3test.Each(t, testObjectVerify) }

func testObjectVerify(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "ok", toolOutput("ok", 100))
	bad := toolOutput("bad", 100)
	retainAll(t, s, "r", "bad", bad)
	retainComp(t, s, "r", "z", toolOutput("z", 60000), "zstd")
	retainAll(t, s, "r", "lost", toolOutput("lost", 100))
	rep, err := s.Verify(VerifyOptions{})
	if err != nil || !rep.OK() || rep.Values != 4 || rep.Runs != 1 || rep.Debris != 0 {
		t.Fatalf("intact store: %+v, %v", rep, err)
	}

	// Other bytes of the same size, put in place behind retval's back.
	other := bytes.ToUpper(bad)
	if _, err := o.b.Put(o.ctx, objKey("r", "bad.txt"), other); err != nil {
		t.Fatal(err)
	}
	if err := o.b.Delete(o.ctx, objKey("r", "lost.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.b.Put(o.ctx, objKey("r", "stray.bin"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	var seen []Problem
	*now = now.Add(2 * time.Hour) // the stray is past the grace period
	rep, err = s.Verify(VerifyOptions{Run: "r", Problem: func(p Problem) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Corrupt != 1 || rep.Missing != 1 || rep.Debris != 1 || rep.Values != 4 {
		t.Fatalf("report %+v", rep)
	}
	want := []string{
		"r/bad.txt corrupt sha256 does not match the descriptor",
		"r/lost.txt missing content file missing: lost.meta.json has no lost.txt",
		"r/stray.bin debris file that retval does not write",
	}
	var got []string
	for _, p := range seen {
		got = append(got, string(p.Run)+"/"+p.File+" "+p.Kind+" "+p.Message)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The zstd value, its frames rewritten with other bytes of the same size.
	zk := objKey("r", "z.txt.zst")
	zb, _, err := o.b.Get(o.ctx, zk, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	zb[len(zb)/3] ^= 0xff
	if _, err := o.b.Put(o.ctx, zk, zb); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Verify(VerifyOptions{Run: "r"})
	if err != nil || rep.Corrupt != 2 {
		t.Fatalf("after damaging the zstd value: %+v, %v", rep, err)
	}

	if _, err := s.Verify(VerifyOptions{Run: "nosuch"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}

// verify checks the read log on object storage as locally: an object
// under .reads/ that is not one record is a corrupt read log, named.
func TestObjectVerifyChecksTheReadLog(t *testing.T) { s3test.Each(t, testObjectVerifyChecksTheReadLog) }

func testObjectVerifyChecksTheReadLog(t *testing.T, srv *s3test.Server) {
	s, o, _ := s3Store(t, srv)
	retainAll(t, s, "r", "c1", toolOutput("c1", 100))
	s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "c1", Bytes: 10, Call: true})
	if rep, err := s.Verify(VerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("a sound read log: %+v, %v", rep, err)
	}
	bad := readsDir + "99999999999999999999-junk"
	if _, err := o.b.Put(o.ctx, objKey("r", bad), []byte("not a record\n")); err != nil {
		t.Fatal(err)
	}
	var seen []Problem
	rep, err := s.Verify(VerifyOptions{Problem: func(p Problem) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrupt != 1 || rep.Values != 1 || len(seen) != 1 {
		t.Fatalf("report %+v, problems %+v", rep, seen)
	}
	want := "the read log has 1 objects that are not records (the first is 99999999999999999999-junk): stats skips them; delete them to drop them"
	if p := seen[0]; p.File != readsDir || p.Kind != ProblemCorrupt || p.Message != want {
		t.Fatalf("problem %+v", p)
	}
}

// A read record that cannot be fetched is an I/O error, not a record that
// is not one: verify must not have the user delete what a failed request
// did not show, and stats must not count it out silently.
func TestObjectReadLogRecordNotFetchedIsIOError(t *testing.T) {
	s3test.Each(t, testObjectReadLogRecordNotFetchedIsIOError)
}

func testObjectReadLogRecordNotFetchedIsIOError(t *testing.T, srv *s3test.Server) {
	rec := &recorder{}
	s, _ := objectStore(t, srv, rec)
	retainAll(t, s, "r", "c1", toolOutput("c1", 100))
	s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "c1", Bytes: 10, Call: true})
	rec.mu.Lock()
	rec.fail = func(method, key string) bool { return method == "GET" && strings.Contains(key, "/"+readsDir) }
	rec.mu.Unlock()
	var seen []Problem
	rep, err := s.Verify(VerifyOptions{Problem: func(p Problem) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrupt != 1 || len(seen) != 1 || !strings.HasPrefix(seen[0].Message, "read log unreadable: ") {
		t.Fatalf("report %+v, problems %+v", rep, seen)
	}
	if _, err := s.ScanReads("r", func(*Read) {}); err == nil || CodeOf(err) != CodeIO {
		t.Fatalf("ScanReads = %v, want an I/O error", err)
	}
}
