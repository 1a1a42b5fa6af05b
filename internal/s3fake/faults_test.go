package s3fake_test

import (
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/retval/retval/internal/s3fake"
	"github.com/retval/retval/pkg/retain/s3store"
)

func isPut(c s3fake.Call) bool { return c.Op == s3fake.OpPut }

// Each kind of fault does to a call what it says, around the fake and
// around the AWS SDK's client of a real server alike.
func TestFaultKinds(t *testing.T) {
	eachAPI(t, func(t *testing.T, api s3store.API) {
		c := ctx(t)
		f := s3fake.Wrap(api)
		exists := func(key string) bool {
			_, err := api.HeadObject(c, key)
			return err == nil
		}

		// A failure the server answers: nothing written.
		f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: s3fake.SlowDown()})
		_, err := f.PutObject(c, "fail", []byte("x"), s3store.Cond{})
		var se *s3store.StatusError
		if !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable || se.Code != "SlowDown" || !errors.Is(err, s3fake.ErrInjected) || exists("fail") {
			t.Fatalf("SlowDown: %v; written %v", err, exists("fail"))
		}
		if _, err := f.PutObject(c, "fail", []byte("x"), s3store.Cond{}); err != nil {
			t.Fatalf("the call after a rule of one time: %v", err)
		}

		// A reset connection: nothing written, no status.
		f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: s3fake.Reset()})
		_, err = f.PutObject(c, "reset", []byte("x"), s3store.Cond{})
		if !errors.Is(err, syscall.ECONNRESET) || errors.As(err, &se) || exists("reset") {
			t.Fatalf("Reset: %v; written %v", err, exists("reset"))
		}

		// A dropped answer: written, and the caller told otherwise.
		f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: s3fake.Drop()})
		_, err = f.PutObject(c, "drop", []byte("x"), s3store.Cond{IfNoneMatch: true})
		if !errors.Is(err, syscall.ECONNRESET) || !exists("drop") {
			t.Fatalf("Drop: %v; written %v", err, exists("drop"))
		}

		// Dropped and retried: a create's retry finds its own object.
		f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: s3fake.DropRetried()})
		_, err = f.PutObject(c, "retried", []byte("x"), s3store.Cond{IfNoneMatch: true})
		if !errors.As(err, &se) || se.Status != http.StatusPreconditionFailed || !exists("retried") {
			t.Fatalf("DropRetried: %v; written %v", err, exists("retried"))
		}

		// A body cut half-way ends in io.ErrUnexpectedEOF.
		if _, err := api.PutObject(c, "body", []byte("0123456789"), s3store.Cond{}); err != nil {
			t.Fatal(err)
		}
		f.Add(s3fake.Rule{Match: func(c s3fake.Call) bool { return c.Key == "body" }, Times: 1, Fault: s3fake.Truncate()})
		out, err := f.GetObject(c, "body", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if string(got) != "01234" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Truncate: read %q, %v", got, err)
		}

		for k, want := range map[s3fake.Kind]int{s3fake.KindFail: 1, s3fake.KindReset: 1, s3fake.KindDrop: 2, s3fake.KindTruncate: 1, s3fake.KindDelay: 0} {
			if n := f.Injected(k); n != want {
				t.Errorf("%d faults of kind %s counted, want %d", n, k, want)
			}
		}
	})
}

// A delayed call waits for its gate, not for a time: the test decides
// what happens while it is held.
func TestFaultDelay(t *testing.T) {
	b := s3fake.NewBucket(nil)
	f := s3fake.Wrap(b)
	c := ctx(t)
	gate := make(chan struct{})
	held := make(chan struct{})
	f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: s3fake.Hook(func(s3fake.Call) { close(held) }, nil)})
	f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: s3fake.Delay(gate)})
	done := make(chan error)
	go func() {
		_, err := f.PutObject(c, "k", []byte("first"), s3store.Cond{}) // the hook's
		if err == nil {
			_, err = f.PutObject(c, "k", []byte("held"), s3store.Cond{}) // the delay's
		}
		done <- err
	}()
	<-held
	// While the second put is held, another writer's lands first.
	if _, err := b.PutObject(c, "k", []byte("beside"), s3store.Cond{}); err != nil {
		t.Fatal(err)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out, err := b.GetObject(c, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	if string(got) != "held" {
		t.Fatalf("the object holds %q, want the held write's, sent last", got)
	}
}

// Skip and Times count the calls a rule selects: a fault lands on exactly
// the call the test names.
func TestFaultCounting(t *testing.T) {
	f := s3fake.Wrap(s3fake.NewBucket(nil))
	c := ctx(t)
	f.Add(s3fake.Rule{Match: isPut, Skip: 2, Times: 2, Fault: s3fake.InternalError()})
	var failed []int
	for i := range 6 {
		if _, err := f.PutObject(c, "k", []byte{byte(i)}, s3store.Cond{}); err != nil {
			failed = append(failed, i)
		}
		f.HeadObject(c, "k") // not selected: not counted
	}
	if len(failed) != 2 || failed[0] != 2 || failed[1] != 3 {
		t.Fatalf("failed puts %v, want [2 3]", failed)
	}
	calls := f.Take()
	if len(calls) != 12 || calls[0].Op != s3fake.OpPut || calls[1].Op != s3fake.OpHead || calls[11].Seq != 12 {
		t.Fatalf("recorded %d calls: %v", len(calls), calls)
	}
	if len(f.Take()) != 0 {
		t.Fatal("Take did not forget")
	}
}

// Held is told of a delayed call once it is held, and Wait returns only
// once no call is in flight: after it, a held call that was let go has
// taken effect.
func TestFaultHeldAndWait(t *testing.T) {
	b := s3fake.NewBucket(nil)
	f := s3fake.Wrap(b)
	c := ctx(t)
	gate := make(chan struct{})
	held := make(chan s3fake.Call, 1)
	d := s3fake.Delay(gate)
	d.Held = func(call s3fake.Call) { held <- call }
	f.Add(s3fake.Rule{Match: isPut, Times: 1, Fault: d})
	go f.PutObject(c, "k", []byte("x"), s3store.Cond{})
	if call := <-held; call.Op != s3fake.OpPut || call.Key != "k" || call.Seq != 1 {
		t.Fatalf("held %v, want the PUT of k", call)
	}
	ready, waited := make(chan struct{}), make(chan bool)
	go func() {
		close(ready)
		f.Wait()
		_, err := b.HeadObject(c, "k")
		waited <- err == nil
	}()
	<-ready
	close(gate)
	if !<-waited {
		t.Fatal("Wait returned before the held call took effect")
	}
}
