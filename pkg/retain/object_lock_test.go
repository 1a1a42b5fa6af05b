package retain

import (
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
)

// Object storage has no run locks (gc holds a lease instead), so the
// analogue of a symlinked .lock, an object under a run's .lock key that
// retval never writes there, locks nothing and refuses nothing: the run
// is listed, verified and collected like any other.
func TestObjectLockKeyIsInert(t *testing.T) { s3test.Each(t, testObjectLockKeyIsInert) }

func testObjectLockKeyIsInert(t *testing.T, srv *s3test.Server) {
	s, o, now := s3Store(t, srv)
	retainAll(t, s, "r", "c1", toolOutput("c1", 100))
	if _, err := o.b.Put(o.ctx, objKey("r", lockName), []byte("not a lock")); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(time.Hour)
	if err != nil || len(runs) != 1 || runs[0].Refused != "" || runs[0].Values != 1 {
		t.Fatalf("runs %+v, %v: want r listed with its value", runs, err)
	}
	if busy, err := s.RunBusy("r"); busy || err != nil {
		t.Fatalf("busy %v, %v", busy, err)
	}
	rep, err := s.Verify(VerifyOptions{})
	if err != nil || !rep.OK() || rep.Values != 1 || rep.Refused != 0 {
		t.Fatalf("verify %+v, %v", rep, err)
	}
	if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
		t.Fatal(err)
	}
	if k := keysUnder(t, o, runPrefix("r")); len(k) != 0 {
		t.Fatalf("left of the collected run: %v", k)
	}
}
