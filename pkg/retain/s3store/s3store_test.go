package s3store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/retval/retval/internal/s3test"
)

func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// newBucket returns a Bucket on a fresh bucket of the shared server, with
// a prefix, so every test also checks that keys stay under it.
func newBucket(t *testing.T) (*Bucket, *s3test.Server) {
	t.Helper()
	srv := s3test.Shared(t)
	name := srv.NewBucket(t)
	b := Open(Location{Bucket: name, Prefix: "fleet/a"}, Config{
		Endpoint: srv.Endpoint, Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PathStyle: true,
	})
	return b, srv
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in, bucket, prefix, err string
	}{
		{in: "s3://b", bucket: "b"},
		{in: "s3://b/", bucket: "b"},
		{in: "s3://b/runs", bucket: "b", prefix: "runs"},
		{in: "s3://b/a/b/", bucket: "b", prefix: "a/b"},
		{in: "s3:///x", err: `store "s3:///x" names no bucket: write s3://BUCKET/PREFIX`},
		{in: "/tmp/runs", err: `store "/tmp/runs" is not an s3://BUCKET/PREFIX address`},
		{in: "s3://b/a//c", err: `store "s3://b/a//c" has an empty, . or .. segment in its prefix`},
		{in: "s3://b/../c", err: `store "s3://b/../c" has an empty, . or .. segment in its prefix`},
	} {
		loc, err := ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseURL(%q) = %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || loc.Bucket != tc.bucket || loc.Prefix != tc.prefix {
			t.Errorf("ParseURL(%q) = %+v, %v; want %s, %q", tc.in, loc, err, tc.bucket, tc.prefix)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	home := clearAWSEnv(t) // no ~/.aws: the variables alone (profiles: profile_test.go)
	if _, err := ConfigFromEnv(); err == nil || err.Error() != "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" {
		t.Fatalf("no credentials: %v", err)
	}
	t.Setenv("AWS_PROFILE", "work")
	if _, err := ConfigFromEnv(); err == nil || err.Error() != `profile "work" is not in `+home+`/.aws/credentials or `+home+`/.aws/config` {
		t.Fatalf("profile: %v", err)
	}
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "eu-west-1")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
	c, err := ConfigFromEnv()
	if err != nil || c.Region != "eu-west-1" || c.Endpoint != "http://127.0.0.1:9" || !c.PathStyle || c.AccessKey != "k" {
		t.Fatalf("ConfigFromEnv = %+v, %v", c, err)
	}
	t.Setenv("AWS_ENDPOINT_URL_S3", "ftp://x")
	if _, err := ConfigFromEnv(); err == nil {
		t.Fatal("ftp endpoint accepted")
	}
}

// Of 32 writers creating one key at once, exactly one wins and the
// object holds the winner's bytes: the descriptor's commit point.
func TestCreateHasOneWinner(t *testing.T) {
	b, _ := newBucket(t)
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
		case !errors.Is(err, ErrExists):
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
}

// 16 workers each add 25 to a counter by compare-and-swap: the ledger's
// update. Every increment lands exactly once.
func TestReplaceIsCompareAndSwap(t *testing.T) {
	b, _ := newBucket(t)
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
					if !errors.Is(err, ErrChanged) {
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
	if _, err := b.Replace(c, "ledger", []byte("x"), `"not-its-etag"`); !errors.Is(err, ErrChanged) {
		t.Fatalf("Replace with a stale ETag: %v, want ErrChanged", err)
	}
	if _, err := b.Replace(c, "absent", []byte("x"), `"any"`); !errors.Is(err, ErrChanged) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("Replace of an absent key: %v, want ErrChanged", err)
	}
}

func TestReadsAndRanges(t *testing.T) {
	b, srv := newBucket(t)
	c := ctx(t)
	data := make([]byte, 100_000)
	rand.Read(data)
	if _, err := b.Put(c, "v.txt", data); err != nil {
		t.Fatal(err)
	}
	// The prefix is where the object went.
	if _, err := os.Stat(srv.Root + "/" + b.Location().Bucket + "/fleet/a/v.txt"); err != nil {
		t.Fatalf("object not under the prefix: %v", err)
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
	if _, err := b.ReadAt(c, "absent", p, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadAt of an absent key: %v", err)
	}
	if _, _, err := b.Get(c, "v.txt", 99_999); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get over its bound: %v", err)
	}
	if _, _, err := b.Get(c, "absent", 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an absent key: %v", err)
	}
	o, err := b.Stat(c, "v.txt")
	if err != nil || o.Size != 100_000 || o.ETag == "" {
		t.Fatalf("Stat = %+v, %v", o, err)
	}
	if _, err := b.Stat(c, "absent"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat of an absent key: %v", err)
	}
	now, err := b.Now(c)
	if err != nil || time.Until(now).Abs() > time.Minute {
		t.Fatalf("server time %v, %v; local %v", now, err, time.Now())
	}
}

// listing walks past one page of 1,000 keys, in order, and Delete takes
// them away in batches.
func TestListAndDelete(t *testing.T) {
	b, _ := newBucket(t)
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
	if err := b.List(c, "r.values/", func(o Object) error { got = append(got, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0] != keys[0] || got[n-1] != keys[n-1] {
		t.Fatalf("listed %d keys (%v … %v), want %d", len(got), got[:min(2, len(got))], got[max(0, len(got)-1):], n)
	}
	if err := b.Delete(c, append(keys, "r.values/never-there")...); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	b.List(c, "", func(o Object) error { got = append(got, o.Key); return nil })
	if len(got) != 1 || got[0] != "other/k" {
		t.Fatalf("after Delete: %v, want only other/k", got)
	}
	o, _ := b.Stat(c, "other/k")
	if err := b.DeleteIf(c, "other/k", `"stale"`); !errors.Is(err, ErrChanged) {
		t.Fatalf("DeleteIf with a stale ETag: %v", err)
	}
	if err := b.DeleteIf(c, "other/k", o.ETag); err != nil {
		t.Fatalf("DeleteIf: %v", err)
	}
	if _, err := b.Stat(c, "other/k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after DeleteIf: %v", err)
	}
}

func TestUpload(t *testing.T) {
	b, _ := newBucket(t)
	b.PartSize = 5 << 20 // S3's smallest part
	c := ctx(t)
	for _, size := range []int{0, 1000, 5 << 20, 5<<20 + 1, 12<<20 + 7} {
		data := make([]byte, size)
		rand.Read(data)
		key := fmt.Sprintf("u/%d", size)
		n, err := b.Upload(c, key, bytes.NewReader(data), UploadOptions{IfAbsent: true})
		if err != nil || n != int64(size) {
			t.Fatalf("Upload %d bytes = %d, %v", size, n, err)
		}
		got, _, err := b.Get(c, key, 64<<20)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Upload %d bytes: read back %d bytes, %v", size, len(got), err)
		}
		if _, err := b.Upload(c, key, bytes.NewReader(data), UploadOptions{IfAbsent: true}); !errors.Is(err, ErrExists) {
			t.Fatalf("second IfAbsent upload of %d bytes: %v, want ErrExists", size, err)
		}
	}
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
	b, srv := newBucket(t)
	b.PartSize = 5 << 20
	c := ctx(t)
	if _, err := b.Upload(c, "u/broken", &failingReader{n: 11 << 20}, UploadOptions{}); err == nil {
		t.Fatal("upload of a failing source succeeded")
	}
	if _, err := b.Stat(c, "u/broken"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object after a failed upload: %v", err)
	}
	raw := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, nil
		})})
	out, err := raw.ListMultipartUploads(c, &s3.ListMultipartUploadsInput{Bucket: aws.String(b.Location().Bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left after a failed upload", len(out.Uploads))
	}
}

func TestLease(t *testing.T) {
	b, _ := newBucket(t)
	c := ctx(t)
	l, err := b.AcquireLease(c, ".retval/gc.lease", "gc-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var held *HeldError
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
	b.skew = 2 * time.Hour
	const n = 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	leases := make([]*Lease, n)
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
	if err := l2.Renew(c); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renewing a lease taken over: %v, want ErrLeaseLost", err)
	}
	if err := l2.Release(c); err != nil {
		t.Fatalf("releasing a lost lease: %v", err)
	}
	// The lost holder's release did not remove the new holder's lease.
	b.skew = 0
	if _, err := b.AcquireLease(c, ".retval/gc.lease", "late", time.Hour); !errors.As(err, &held) || held.Holder[:6] != "taker-" {
		t.Fatalf("after the lost holder released: %v, want held by a taker", err)
	}
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
// 5 MiB parts allocates far less than the value.
func TestUploadMemoryIsBounded(t *testing.T) {
	b, _ := newBucket(t)
	b.PartSize = 5 << 20
	c := ctx(t)
	const size = 96 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := b.Upload(c, "u/big", &zeroReader{n: size}, UploadOptions{})
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("Upload = %d, %v", n, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("uploading %d MiB allocated %d MiB", size>>20, alloc>>20)
	if alloc > 40<<20 {
		t.Fatalf("uploading %d MiB allocated %d MiB: more than a few parts", size>>20, alloc>>20)
	}
	o, err := b.Stat(c, "u/big")
	if err != nil || o.Size != size {
		t.Fatalf("Stat = %+v, %v", o, err)
	}
}

// A server that ignores Range and sends the whole object must not make
// ReadAt return the object's first bytes as if they were the range's.
func TestReadAtRefusesAnIgnoredRange(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer srv.Close()
	b := Open(Location{Bucket: "b"}, Config{Endpoint: srv.URL, AccessKey: "k", SecretKey: "s", PathStyle: true})
	p := make([]byte, 10)
	n, err := b.ReadAt(ctx(t), "v.txt", p, 5)
	if err == nil || n != 0 {
		t.Fatalf("ReadAt through a server that ignores Range = %d (%q), %v; want an error", n, p[:n], err)
	}
}

// AbortUploads aborts the unfinished uploads under a prefix, and only
// those: what a writer that died mid-upload left, which no listing of
// objects shows.
func TestAbortUploads(t *testing.T) {
	b, srv := newBucket(t)
	c := ctx(t)
	raw := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, nil
		})})
	bucket := aws.String(b.Location().Bucket)
	for _, k := range []string{"r1.values/a.txt", "r1.values/b.txt", "r2.values/a.txt"} {
		if _, err := raw.CreateMultipartUpload(c, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String(b.key(k))}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.AbortUploads(c, "r1.values/")
	if err != nil || n != 2 {
		t.Fatalf("AbortUploads = %d, %v; want 2 aborted", n, err)
	}
	out, err := raw.ListMultipartUploads(c, &s3.ListMultipartUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 1 || aws.ToString(out.Uploads[0].Key) != b.key("r2.values/a.txt") {
		var keys []string
		for _, u := range out.Uploads {
			keys = append(keys, aws.ToString(u.Key))
		}
		t.Fatalf("uploads left: %v, want only r2's", keys)
	}
}

// barrierTransport holds the request a test names until another request
// is on its way beside it (or a minute passes, which fails the test).
type barrierTransport struct {
	t      *testing.T
	hold   func(*http.Request) bool
	mu     sync.Mutex
	n      int
	beside chan struct{}
	once   sync.Once
}

func (b *barrierTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.n++
	if b.n >= 2 {
		b.once.Do(func() { close(b.beside) })
	}
	b.mu.Unlock()
	if b.hold(req) {
		select {
		case <-b.beside:
		case <-time.After(time.Minute):
			b.t.Error("the held request was alone on the wire")
		}
	}
	b.mu.Lock()
	b.n--
	b.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// A multipart upload sends several parts at once: a part's round trip does
// not wait for the one before.
func TestUploadPartsAtOnce(t *testing.T) {
	srv := s3test.Shared(t)
	bt := &barrierTransport{t: t, beside: make(chan struct{}), hold: func(req *http.Request) bool {
		return req.Method == http.MethodPut && req.URL.Query().Get("partNumber") == "1"
	}}
	b := Open(Location{Bucket: srv.NewBucket(t), Prefix: "p"}, Config{
		Endpoint: srv.Endpoint, Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PathStyle: true,
		HTTPClient: &http.Client{Transport: bt},
	})
	b.PartSize = 5 << 20
	const size = 16 << 20
	if n, err := b.Upload(ctx(t), "u/parts", &zeroReader{n: size}, UploadOptions{}); err != nil || n != size {
		t.Fatalf("Upload = %d, %v", n, err)
	}
	if o, err := b.Stat(ctx(t), "u/parts"); err != nil || o.Size != size {
		t.Fatalf("Stat = %+v, %v", o, err)
	}
}

// Two holders of one name (two gc of one process, or of two containers
// that share a hostname and each run as pid 1) write the same lease
// bytes, and a server's ETag is their digest: a holder whose lease was
// taken over by the other must still find it lost, not renew it over
// the other's.
func TestLeaseTakenOverUnderTheSameName(t *testing.T) {
	b, _ := newBucket(t)
	c := ctx(t)
	l, err := b.AcquireLease(c, ".retval/gc.lease", "gc on h, pid 1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b.skew = 2 * time.Hour // past its TTL by the server's clock
	l2, err := b.AcquireLease(c, ".retval/gc.lease", "gc on h, pid 1", time.Hour)
	b.skew = 0
	if err != nil {
		t.Fatalf("taking the expired lease over: %v", err)
	}
	if err := l.Renew(c); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renewing a lease taken over under the same name: %v, want ErrLeaseLost", err)
	}
	if err := l.Release(c); err != nil {
		t.Fatal(err)
	}
	if err := l2.Renew(c); err != nil {
		t.Fatalf("the holder's renewal after the lost one released: %v", err)
	}
}
