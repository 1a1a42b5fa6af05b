package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3fake"
	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain/s3store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// eachBucket runs f against each server (s3test.Each) with a Bucket on a
// fresh bucket of it, with a prefix, so every test also checks that keys
// stay under it, and raw, the bucket's API for the test's own looks. The
// fake is reached twice: in memory, and through the AWS SDK over HTTP, as
// a retval process reaches it.
func eachBucket(t *testing.T, f func(t *testing.T, b *s3store.Bucket, raw s3store.API)) {
	s3test.Each(t, func(t *testing.T, srv *s3test.Server) {
		loc := func(t *testing.T) s3store.Location {
			return s3store.Location{Bucket: srv.NewBucket(t), Prefix: "fleet/a"}
		}
		if !srv.IsFake() {
			l := loc(t)
			f(t, s3store.New(srv.API(l.Bucket), l), srv.API(l.Bucket))
			return
		}
		t.Run("memory", func(t *testing.T) {
			l := loc(t)
			f(t, s3store.New(srv.API(l.Bucket), l), srv.API(l.Bucket))
		})
		t.Run("http", func(t *testing.T) {
			l := loc(t)
			f(t, s3store.New(srv.Client(l.Bucket), l), srv.API(l.Bucket))
		})
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// Of 32 writers creating one key at once, exactly one wins and the
// object holds the winner's bytes: the descriptor's commit point.
func TestCreateHasOneWinner(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		const n = 32
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = b.Create(c, "run.values/x.meta.json", []byte("writer "+strconv.Itoa(i)))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("writers %d and %d both created the key", winner, i)
				}
				winner = i
			case !errors.Is(err, s3store.ErrExists):
				t.Fatalf("writer %d: %v, want ErrExists", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no writer won")
		}
		got, _, err := b.Get(c, "run.values/x.meta.json", 1<<10)
		if err != nil || string(got) != "writer "+strconv.Itoa(winner) {
			t.Fatalf("object holds %q, %v; want the winner's bytes", got, err)
		}
	})
}

// 16 workers each add 25 to a counter by compare-and-swap: the ledger's
// update. Every increment lands exactly once.
func TestReplaceIsCompareAndSwap(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		if _, err := b.Create(c, "ledger", []byte("0")); err != nil {
			t.Fatal(err)
		}
		const workers, rounds = 16, 25
		var wg sync.WaitGroup
		errc := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					for {
						data, o, err := b.Get(c, "ledger", 64)
						if err != nil {
							errc <- err
							return
						}
						v, _ := strconv.Atoi(string(data))
						_, err = b.Replace(c, "ledger", []byte(strconv.Itoa(v+1)), o.ETag)
						if err == nil {
							break
						}
						if !errors.Is(err, s3store.ErrChanged) {
							errc <- err
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		data, _, err := b.Get(c, "ledger", 64)
		if err != nil || string(data) != strconv.Itoa(workers*rounds) {
			t.Fatalf("counter = %q, %v; want %d", data, err, workers*rounds)
		}
		if _, err := b.Replace(c, "ledger", []byte("x"), `"not-its-etag"`); !errors.Is(err, s3store.ErrChanged) {
			t.Fatalf("Replace with a stale ETag: %v, want ErrChanged", err)
		}
		if _, err := b.Replace(c, "absent", []byte("x"), `"any"`); !errors.Is(err, s3store.ErrChanged) {
			t.Fatalf("Replace of an absent key: %v, want ErrChanged", err)
		}
	})
}

func TestReadsAndRanges(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		data := make([]byte, 100_000)
		rand.Read(data)
		if _, err := b.Put(c, "v.txt", data); err != nil {
			t.Fatal(err)
		}
		// The prefix is where the object went.
		if o, err := raw.HeadObject(c, "fleet/a/v.txt"); err != nil || o.Size != 100_000 {
			t.Fatalf("object not under the prefix: %+v, %v", o, err)
		}
		p := make([]byte, 4096)
		if n, err := b.ReadAt(c, "v.txt", p, 90_000); n != 4096 || err != nil || !bytes.Equal(p, data[90_000:94_096]) {
			t.Fatalf("ReadAt in the middle = %d, %v", n, err)
		}
		if n, err := b.ReadAt(c, "v.txt", p, 99_000); n != 1000 || err != io.EOF || !bytes.Equal(p[:n], data[99_000:]) {
			t.Fatalf("ReadAt over the end = %d, %v; want 1000, EOF", n, err)
		}
		if n, err := b.ReadAt(c, "v.txt", p, 100_000); n != 0 || err != io.EOF {
			t.Fatalf("ReadAt at the end = %d, %v; want 0, EOF", n, err)
		}
		if _, err := b.ReadAt(c, "absent", p, 0); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("ReadAt of an absent key: %v", err)
		}
		if _, _, err := b.Get(c, "v.txt", 99_999); !errors.Is(err, s3store.ErrTooLarge) {
			t.Fatalf("Get over its bound: %v", err)
		}
		if _, _, err := b.Get(c, "absent", 10); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("Get of an absent key: %v", err)
		}
		o, err := b.Stat(c, "v.txt")
		if err != nil || o.Size != 100_000 || o.ETag == "" {
			t.Fatalf("Stat = %+v, %v", o, err)
		}
		if _, err := b.Stat(c, "absent"); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("Stat of an absent key: %v", err)
		}
		now, err := b.Now(c)
		if err != nil || time.Until(now).Abs() > time.Minute {
			t.Fatalf("server time %v, %v; local %v", now, err, time.Now())
		}
	})
}

// listing walks past one page of 1,000 keys, in order, and Delete takes
// them away in batches.
func TestListAndDelete(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		const n = 1203
		keys := make([]string, n)
		sem := make(chan struct{}, 16)
		var wg sync.WaitGroup
		for i := range n {
			keys[i] = fmt.Sprintf("r.values/%05d.txt", i)
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if _, err := b.Put(c, keys[i], []byte("x")); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if _, err := b.Put(c, "other/k", []byte("y")); err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := b.List(c, "r.values/", func(o s3store.Object) error { got = append(got, o.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != n || got[0] != keys[0] || got[n-1] != keys[n-1] {
			t.Fatalf("listed %d keys (%v … %v), want %d", len(got), got[:min(2, len(got))], got[max(0, len(got)-1):], n)
		}
		if err := b.Delete(c, append(keys, "r.values/never-there")...); err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		b.List(c, "", func(o s3store.Object) error { got = append(got, o.Key); return nil })
		if len(got) != 1 || got[0] != "other/k" {
			t.Fatalf("after Delete: %v, want only other/k", got)
		}
		o, _ := b.Stat(c, "other/k")
		if err := b.DeleteIf(c, "other/k", `"stale"`); !errors.Is(err, s3store.ErrChanged) {
			t.Fatalf("DeleteIf with a stale ETag: %v", err)
		}
		if err := b.DeleteIf(c, "other/k", o.ETag); err != nil {
			t.Fatalf("DeleteIf: %v", err)
		}
		if _, err := b.Stat(c, "other/k"); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("after DeleteIf: %v", err)
		}
	})
}

func TestUpload(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		b.PartSize = 5 << 20 // S3's smallest part
		c := ctx(t)
		for _, size := range []int{0, 1000, 5 << 20, 5<<20 + 1, 12<<20 + 7} {
			data := make([]byte, size)
			rand.Read(data)
			key := fmt.Sprintf("u/%d", size)
			n, err := b.Upload(c, key, bytes.NewReader(data), s3store.UploadOptions{IfAbsent: true})
			if err != nil || n != int64(size) {
				t.Fatalf("Upload %d bytes = %d, %v", size, n, err)
			}
			got, _, err := b.Get(c, key, 64<<20)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Upload %d bytes: read back %d bytes, %v", size, len(got), err)
			}
			if _, err := b.Upload(c, key, bytes.NewReader(data), s3store.UploadOptions{IfAbsent: true}); !errors.Is(err, s3store.ErrExists) {
				t.Fatalf("second IfAbsent upload of %d bytes: %v, want ErrExists", size, err)
			}
		}
	})
}

// failingReader gives n bytes, then an error.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("the source failed")
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

// An upload whose source fails half-way leaves no object and no parts.
func TestUploadFailureLeavesNothing(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		b.PartSize = 5 << 20
		c := ctx(t)
		if _, err := b.Upload(c, "u/broken", &failingReader{n: 11 << 20}, s3store.UploadOptions{}); err == nil {
			t.Fatal("upload of a failing source succeeded")
		}
		if _, err := b.Stat(c, "u/broken"); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("object after a failed upload: %v", err)
		}
		out, err := raw.ListUploads(c, s3store.ListUploadsInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Uploads) != 0 {
			t.Fatalf("%d multipart uploads left after a failed upload", len(out.Uploads))
		}
	})
}

func TestLease(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		l, err := b.AcquireLease(c, ".retval/gc.lease", "gc-1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var held *s3store.HeldError
		if _, err := b.AcquireLease(c, ".retval/gc.lease", "gc-2", time.Hour); !errors.As(err, &held) || held.Holder != "gc-1" {
			t.Fatalf("second acquire: %v, want held by gc-1", err)
		}
		if err := l.Renew(c); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if err := l.Release(c); err != nil {
			t.Fatalf("Release: %v", err)
		}
		l2, err := b.AcquireLease(c, ".retval/gc.lease", "gc-2", time.Hour)
		if err != nil {
			t.Fatalf("acquire after release: %v", err)
		}

		// Past its TTL by the server's clock (moved forward two hours here),
		// the lease is taken over: by exactly one of eight takers. They ask
		// for ten hours, so a taker that reads another's new lease sees it
		// live even on the moved clock.
		s3store.SetSkew(b, 2*time.Hour)
		const n = 8
		start := make(chan struct{})
		var wg sync.WaitGroup
		leases := make([]*s3store.Lease, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				leases[i], errs[i] = b.AcquireLease(c, ".retval/gc.lease", "taker-"+strconv.Itoa(i), 10*time.Hour)
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			if err == nil {
				won++
				continue
			}
			if !errors.As(err, &held) {
				t.Fatalf("taker %d: %v, want a HeldError", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d takers won the expired lease, want 1", won)
		}
		if err := l2.Renew(c); !errors.Is(err, s3store.ErrLeaseLost) {
			t.Fatalf("renewing a lease taken over: %v, want ErrLeaseLost", err)
		}
		if err := l2.Release(c); err != nil {
			t.Fatalf("releasing a lost lease: %v", err)
		}
		// The lost holder's release did not remove the new holder's lease.
		s3store.SetSkew(b, 0)
		if _, err := b.AcquireLease(c, ".retval/gc.lease", "late", time.Hour); !errors.As(err, &held) || held.Holder[:6] != "taker-" {
			t.Fatalf("after the lost holder released: %v, want held by a taker", err)
		}
	})
}

// zeroReader is n zero bytes, produced as asked: nothing held.
type zeroReader struct{ n int64 }

func (r *zeroReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	clear(p[:k])
	r.n -= int64(k)
	return k, nil
}

// An upload holds at most four parts whatever its size: 96 MiB through
// 5 MiB parts allocates far less than the value. (The fake's copies of
// what it receives are its memory, not the upload's: they are taken off.)
func TestUploadMemoryIsBounded(t *testing.T) {
	s3test.Each(t, func(t *testing.T, srv *s3test.Server) {
		loc := s3store.Location{Bucket: srv.NewBucket(t), Prefix: "fleet/a"}
		b := srv.Open(loc)
		fake := srv.FakeBucket(loc.Bucket)
		b.PartSize = 5 << 20
		c := ctx(t)
		const size = 96 << 20
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := b.Upload(c, "u/big", &zeroReader{n: size}, s3store.UploadOptions{})
		runtime.ReadMemStats(&after)
		if err != nil || n != size {
			t.Fatalf("Upload = %d, %v", n, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		if fake != nil {
			alloc -= uint64(fake.Allocated())
		}
		t.Logf("uploading %d MiB allocated %d MiB", size>>20, alloc>>20)
		if alloc > 40<<20 {
			t.Fatalf("uploading %d MiB allocated %d MiB: more than a few parts", size>>20, alloc>>20)
		}
		o, err := b.Stat(c, "u/big")
		if err != nil || o.Size != size {
			t.Fatalf("Stat = %+v, %v", o, err)
		}
	})
}

// AbortUploads aborts the unfinished uploads under a prefix, and only
// those: what a writer that died mid-upload left, which no listing of
// objects shows.
func TestAbortUploads(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		for _, k := range []string{"r1.values/a.txt", "r1.values/b.txt", "r2.values/a.txt"} {
			if _, err := raw.CreateUpload(c, s3store.KeyOf(b, k)); err != nil {
				t.Fatal(err)
			}
		}
		n, err := b.AbortUploads(c, "r1.values/")
		if err != nil || n != 2 {
			t.Fatalf("AbortUploads = %d, %v; want 2 aborted", n, err)
		}
		out, err := raw.ListUploads(c, s3store.ListUploadsInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Uploads) != 1 || out.Uploads[0].Key != s3store.KeyOf(b, "r2.values/a.txt") {
			var keys []string
			for _, u := range out.Uploads {
				keys = append(keys, u.Key)
			}
			t.Fatalf("uploads left: %v, want only r2's", keys)
		}
	})
}

// A multipart upload sends several parts at once: a part's round trip does
// not wait for the one before. The first part is held until another part
// has been sent, before or after it (or a minute passes, which fails the
// test); an upload sending one part at a time would send none until the
// first was answered. (Not "until two are on the wire at once": the
// senders run in no order, and under load the other parts could be
// answered before the first part's call began.)
func TestUploadPartsAtOnce(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		calls := s3fake.Wrap(b.API())
		other := make(chan struct{})
		var once sync.Once
		calls.On(nil, s3fake.Hook(func(c s3fake.Call) {
			if c.Op != s3fake.OpUploadPart {
				return
			}
			if c.Part != 1 {
				once.Do(func() { close(other) })
				return
			}
			select {
			case <-other:
			case <-time.After(time.Minute):
				t.Error("no other part was sent before the first was answered")
			}
		}, nil))
		b = s3store.New(calls, b.Location())
		b.PartSize = 5 << 20
		const size = 16 << 20
		if n, err := b.Upload(ctx(t), "u/parts", &zeroReader{n: size}, s3store.UploadOptions{}); err != nil || n != size {
			t.Fatalf("Upload = %d, %v", n, err)
		}
		if o, err := b.Stat(ctx(t), "u/parts"); err != nil || o.Size != size {
			t.Fatalf("Stat = %+v, %v", o, err)
		}
	})
}

// Two holders of one name (two gc of one process, or of two containers
// that share a hostname and each run as pid 1) write the same lease
// bytes, and a server's ETag is their digest: a holder whose lease was
// taken over by the other must still find it lost, not renew it over
// the other's.
func TestLeaseTakenOverUnderTheSameName(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		l, err := b.AcquireLease(c, ".retval/gc.lease", "gc on h, pid 1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		s3store.SetSkew(b, 2*time.Hour) // past its TTL by the server's clock
		l2, err := b.AcquireLease(c, ".retval/gc.lease", "gc on h, pid 1", time.Hour)
		s3store.SetSkew(b, 0)
		if err != nil {
			t.Fatalf("taking the expired lease over: %v", err)
		}
		if err := l.Renew(c); !errors.Is(err, s3store.ErrLeaseLost) {
			t.Fatalf("renewing a lease taken over under the same name: %v, want ErrLeaseLost", err)
		}
		if err := l.Release(c); err != nil {
			t.Fatal(err)
		}
		if err := l2.Renew(c); err != nil {
			t.Fatalf("the holder's renewal after the lost one released: %v", err)
		}
	})
}

// A ranged GET whose body is cut off (the connection dropped half-way) is
// an error, never io.EOF: the object does not end there, and a reader
// taking the short read for its end would see a shorter object.
func TestReadAtCutBodyIsAnError(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		data := bytes.Repeat([]byte("0123456789"), 1000)
		if _, err := b.Put(c, "v.txt", data); err != nil {
			t.Fatal(err)
		}
		f := s3fake.Wrap(b.API())
		f.Add(s3fake.Rule{Times: 1, Fault: s3fake.Truncate()})
		cut := s3store.New(f, b.Location())
		p := make([]byte, 4000)
		n, err := cut.ReadAt(c, "v.txt", p, 1000)
		if err == nil || err == io.EOF || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("ReadAt of a cut body = %d, %v; want an error that says the body was cut", n, err)
		}
		// The end of the object is still io.EOF.
		if n, err := cut.ReadAt(c, "v.txt", p, 8000); n != 2000 || err != io.EOF || !bytes.Equal(p[:n], data[8000:]) {
			t.Fatalf("ReadAt over the end = %d, %v; want 2000, EOF", n, err)
		}
	})
}

// A lease whose create took effect but whose answer was lost (the client
// sent it again and met its own object: 412) is the taker's: found by its
// token, it is held, not reported held by another until it expires.
// Neither is a lease whose creation could not be confirmed left behind.
// (internal/crash's TestS3Faults found both against versitygw.)
func TestLeaseCreateAnswerLost(t *testing.T) {
	eachBucket(t, func(t *testing.T, b *s3store.Bucket, raw s3store.API) {
		c := ctx(t)
		f := s3fake.Wrap(b.API())
		isLease := func(op s3fake.Op) func(s3fake.Call) bool {
			return func(call s3fake.Call) bool { return call.Op == op && strings.HasSuffix(call.Key, "gc.lease") }
		}
		remove := f.Add(s3fake.Rule{Match: isLease(s3fake.OpPut), Times: 1, Fault: s3fake.DropRetried()})
		lossy := s3store.New(f, b.Location())
		l, err := lossy.AcquireLease(c, ".retval/gc.lease", "gc-1", time.Hour)
		if err != nil {
			t.Fatalf("acquiring a lease whose create's answer was lost: %v", err)
		}
		remove()
		if err := l.Renew(c); err != nil {
			t.Fatalf("renewing it: %v", err)
		}
		if err := l.Release(c); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Stat(c, ".retval/gc.lease"); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("lease after its release: %v", err)
		}

		// The same for taking an expired lease over.
		if _, err := b.AcquireLease(c, ".retval/gc.lease", "gc-0", time.Hour); err != nil {
			t.Fatal(err)
		}
		s3store.SetSkew(lossy, 2*time.Hour)
		// The create (412: it is there) passes; the replace's answer is lost.
		remove = f.Add(s3fake.Rule{Match: isLease(s3fake.OpPut), Skip: 1, Times: 1, Fault: s3fake.DropRetried()})
		l, err = lossy.AcquireLease(c, ".retval/gc.lease", "gc-1", time.Hour)
		s3store.SetSkew(lossy, 0)
		remove()
		if err != nil {
			t.Fatalf("taking over an expired lease, the answer lost: %v", err)
		}
		if err := l.Release(c); err != nil {
			t.Fatal(err)
		}

		// Created, then the look at when the server wrote it fails:
		// the error is returned and the lease is released.
		f.Add(s3fake.Rule{Match: isLease(s3fake.OpHead), Fault: s3fake.InternalError()})
		if _, err := lossy.AcquireLease(c, ".retval/gc.lease", "gc-2", time.Hour); err == nil {
			t.Fatal("acquire succeeded though the lease could not be stamped")
		}
		if _, err := b.Stat(c, ".retval/gc.lease"); !errors.Is(err, s3store.ErrNotFound) {
			t.Fatalf("lease left after a failed acquire: %v", err)
		}
	})
}
