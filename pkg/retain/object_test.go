package retain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3fake"
	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain/internal/backend/object"
	"github.com/retval/retval/pkg/retain/s3store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// recorder wraps a store's bucket API: it records the calls the store
// makes, as the HTTP requests S3 would get, and may fail or act on chosen
// ones.
type recorder struct {
	mu   sync.Mutex
	reqs []string // "METHOD /BUCKET/KEY"
	// fail, when it returns true for a request, fails it before it
	// reaches the bucket: the server refuses it (503 SlowDown), so the
	// caller knows nothing was made.
	fail func(method, key string) bool
	// after runs once a request has been answered (status 200, or the
	// error's; 0 for a connection's error).
	after func(method, key string, status int)
	// before runs before a request is sent.
	before func(req request)
}

// request is a call of the bucket's API as the HTTP request S3 would get.
type request struct {
	Method string // GET, PUT, HEAD, DELETE, POST
	Path   string // /BUCKET/KEY; /BUCKET for a call of the bucket
	Range  string // a ranged GET's Range header
	Part   int32  // an UploadPart's number
}

// asRequest is c as the request an S3 client sends for it.
func asRequest(bucket string, c s3fake.Call) request {
	r := request{Path: "/" + bucket + "/" + c.Key, Part: c.Part}
	if c.Range != nil {
		r.Range = c.Range.Header()
	}
	switch c.Op {
	case s3fake.OpPut, s3fake.OpUploadPart:
		r.Method = http.MethodPut
	case s3fake.OpGet:
		r.Method = http.MethodGet
	case s3fake.OpHead:
		r.Method = http.MethodHead
	case s3fake.OpDelete, s3fake.OpAbortUpload:
		r.Method = http.MethodDelete
	case s3fake.OpCreateUpload, s3fake.OpCompleteUpload:
		r.Method = http.MethodPost
	case s3fake.OpList, s3fake.OpListUploads:
		r.Method, r.Path = http.MethodGet, "/"+bucket
	case s3fake.OpDeleteObjects:
		r.Method, r.Path = http.MethodPost, "/"+bucket
	case s3fake.OpNow:
		r.Method, r.Path = http.MethodHead, "/"+bucket
	}
	return r
}

// wrap returns api, the API of bucket, with its calls going through r.
func (r *recorder) wrap(api s3store.API, bucket string) s3store.API {
	f := s3fake.Wrap(api)
	f.On(func(c s3fake.Call) bool {
		req := asRequest(bucket, c)
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Method+" "+req.Path)
		fail := r.fail
		r.mu.Unlock()
		return fail != nil && fail(req.Method, req.Path)
	}, s3fake.SlowDown())
	f.On(nil, s3fake.Hook(func(c s3fake.Call) {
		if r.before != nil {
			r.before(asRequest(bucket, c))
		}
	}, func(c s3fake.Call, err error) {
		if r.after == nil {
			return
		}
		status := http.StatusOK
		var se *s3store.StatusError
		if errors.As(err, &se) {
			status = se.Status
		} else if err != nil {
			status = 0
		}
		req := asRequest(bucket, c)
		r.after(req.Method, req.Path, status)
	}))
	return f
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// objectStore returns a Store on a fresh bucket of srv, whose calls go
// through rec, and a Bucket on the same prefix for the test's own looks.
func objectStore(t *testing.T, srv *s3test.Server, rec *recorder) (*Store, *s3store.Bucket) {
	t.Helper()
	loc := s3store.Location{Bucket: srv.NewBucket(t), Prefix: "fleet"}
	api := srv.API(loc.Bucket)
	raw := s3store.New(api, loc)
	if rec != nil {
		api = rec.wrap(api, loc.Bucket)
	}
	b := s3store.New(api, loc)
	b.PartSize = 5 << 20
	return OpenBucket(b), raw
}

func keysOf(t *testing.T, b *s3store.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	if err := b.List(context.Background(), prefix, func(o s3store.Object) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func numbered(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of a long tool result\n", i)
	}
	return b.Bytes()
}

// A large value goes up in parts and reads back through a few ranged
// GETs: the end of it costs a handful of requests, never the whole object.
func TestObjectLargeValue(t *testing.T) { s3test.Each(t, testObjectLargeValue) }

func testObjectLargeValue(t *testing.T, srv *s3test.Server) {
	for _, comp := range []string{"none", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			rec := &recorder{}
			s, _ := objectStore(t, srv, rec)
			in := numbered(400000) // about 13 MiB: three parts
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "big", Compress: comp,
				Limits: Limits{Threshold: Unlimited, MaxValueSize: Unlimited, MaxRunBytes: Unlimited}})
			if err != nil || !res.Retained {
				t.Fatalf("retain: %+v, %v", res, err)
			}
			if reqs := strings.Join(rec.take(), "\n"); comp == "none" && !strings.Contains(reqs, "uploadId") && !strings.Contains(reqs, "POST") {
				t.Errorf("a 13 MiB value went up without a multipart upload:\n%s", reqs)
			}
			v, err := s.OpenValue("r", "big")
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if v.Index() == nil {
				t.Fatal("no line index read")
			}
			at, off := v.Index().LineStart(399601)
			end := int64(len(in))
			got, err := v.Bytes(off, end)
			if err != nil {
				t.Fatal(err)
			}
			if want := in[off:]; !bytes.Equal(got, want) {
				t.Fatalf("bytes from line %d differ", at)
			}
			reqs := rec.take()
			if len(reqs) > 8 {
				t.Errorf("opening and reading the last %d bytes took %d requests, want a handful:\n%s", end-off, len(reqs), strings.Join(reqs, "\n"))
			}
		})
	}
}

// A failed upload prints the bytes verbatim, like a full disk, and leaves
// no committed descriptor and no content.
func TestObjectUploadFails(t *testing.T) { s3test.Each(t, testObjectUploadFails) }

func testObjectUploadFails(t *testing.T, srv *s3test.Server) {
	for _, what := range []string{".meta.json", ".txt", ".lines", "partNumber=2"} {
		t.Run(what, func(t *testing.T) {
			rec := &recorder{}
			s, raw := objectStore(t, srv, rec)
			rec.fail = func(method, key string) bool {
				return method == http.MethodPut && strings.Contains(key, what)
			}
			if what == "partNumber=2" {
				rec.fail = nil
				// The query is not in the path: fail the second part by count.
				var parts int
				var mu sync.Mutex
				rec.fail = func(method, key string) bool {
					mu.Lock()
					defer mu.Unlock()
					if method == http.MethodPut && strings.HasSuffix(key, ".txt") {
						parts++
						return parts >= 2
					}
					return false
				}
			}
			in := numbered(400000)
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "c1",
				Limits: Limits{Threshold: Unlimited, MaxValueSize: Unlimited, MaxRunBytes: Unlimited}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verbatim || res.Warning == nil || !bytes.Equal(out.Bytes(), in) {
				t.Fatalf("failed %s: verbatim %v, warning %v, %d bytes out of %d", what, res.Verbatim, res.Warning, out.Len(), len(in))
			}
			if keys := keysOf(t, raw, "r.values/"); len(keys) != 0 {
				t.Errorf("failed %s left %v", what, keys)
			}
			if _, err := s.OpenValue("r", "c1"); CodeOf(err) != CodeUnknownReference {
				t.Errorf("the value after a failed upload: %v, want unknown_reference", err)
			}
		})
	}
}

// A writer that finds gc's marker — before it commits, or after, while it
// checks — prints the input verbatim and takes its descriptor back, so no
// stub names a value a collection may be deleting.
func TestObjectWriterSeesCollection(t *testing.T) { s3test.Each(t, testObjectWriterSeesCollection) }

func testObjectWriterSeesCollection(t *testing.T, srv *s3test.Server) {
	in := numbered(3000)
	opts := RetainOptions{Run: "r", Call: "c1"}
	t.Run("before", func(t *testing.T) {
		s, raw := objectStore(t, srv, nil)
		if _, err := raw.Put(context.Background(), collectingKey("r"), nil); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := s.Retain(bytes.NewReader(in), &out, opts)
		if err != nil || !res.Verbatim || !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("retain during a collection: %+v, %v", res, err)
		}
		if keys := keysOf(t, raw, "r.values/"); len(keys) != 0 {
			t.Errorf("left %v", keys)
		}
	})
	t.Run("after", func(t *testing.T) {
		rec := &recorder{}
		s, raw := objectStore(t, srv, rec)
		var once sync.Once
		rec.after = func(method, key string, status int) {
			if method == http.MethodPut && strings.HasSuffix(key, ".meta.json") && status == http.StatusOK {
				once.Do(func() {
					if _, err := raw.Put(context.Background(), collectingKey("r"), nil); err != nil {
						t.Error(err)
					}
				})
			}
		}
		var out bytes.Buffer
		res, err := s.Retain(bytes.NewReader(in), &out, opts)
		if err != nil || !res.Verbatim || !bytes.Equal(out.Bytes(), in) || res.Warning == nil {
			t.Fatalf("retain racing a collection: %+v, %v", res, err)
		}
		if !strings.Contains(res.Warning.Error(), "is being collected by gc (it was idle; retain into a new run)") {
			t.Errorf("the warning does not say what to do: %v", res.Warning)
		}
		if keys := keysOf(t, raw, "r.values/"); len(keys) != 0 {
			t.Errorf("left %v", keys)
		}
	})
}

// Concurrent writers of one call id, each with its own Store (as separate
// machines would be): with the same bytes every one shows the stub, with
// other bytes exactly one wins and the others conflict; nothing else is
// left in the run.
func TestObjectRacingWriters(t *testing.T) { s3test.Each(t, testObjectRacingWriters) }

func testObjectRacingWriters(t *testing.T, srv *s3test.Server) {
	s0, raw := objectStore(t, srv, nil)
	// A loser waits for the winner's descriptor until the winner has
	// committed it, not for a time a loaded machine could overrun.
	committed := make(chan struct{})
	var once sync.Once
	object.TestHookCommitted = func() { once.Do(func() { close(committed) }) }
	object.RacedWait = func(time.Duration) { <-committed }
	t.Cleanup(func() { object.TestHookCommitted, object.RacedWait = nil, time.Sleep })
	const n = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make([]error, n)
	stubs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			s := OpenBucket(objectBackend(t, s0).b)
			<-start
			in := numbered(3000 + i) // other bytes for each
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "diff"})
			results[i] = err
			if err == nil {
				stubs[i] = res.Stub
				if !res.Retained {
					results[i] = errors.New("not retained")
				}
			}
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range results {
		switch {
		case err == nil:
			won++
		case CodeOf(err) != CodeConflict:
			t.Errorf("writer %d: %v, want a conflict", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won, want exactly 1", won)
	}
	keys := keysOf(t, raw, "r.values/")
	var values []string
	for _, k := range keys {
		if !strings.Contains(k, "/.reads/") && !strings.HasSuffix(k, "/.activity") {
			values = append(values, k)
		}
	}
	if len(values) != 2 {
		t.Errorf("the run holds %v, want one descriptor and one content", values)
	}
	v, err := s0.OpenValue("r", "diff")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := io.Copy(io.Discard, v.Section(0, v.Size())); err != nil {
		t.Errorf("the winner's value does not read whole: %v", err)
	}
}

// The spool file of a retain to object storage is unlinked as soon as it is
// made: a writer killed at any point leaves nothing in $TMPDIR.
func TestObjectSpoolUnlinked(t *testing.T) { s3test.Each(t, testObjectSpoolUnlinked) }

func testObjectSpoolUnlinked(t *testing.T, srv *s3test.Server) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	rec := &recorder{}
	s, _ := objectStore(t, srv, rec)
	var seen []string
	rec.fail = func(method, key string) bool {
		if method == http.MethodPut && strings.HasSuffix(key, ".meta.json") {
			ents, _ := os.ReadDir(tmp)
			for _, e := range ents {
				seen = append(seen, e.Name())
			}
		}
		return false
	}
	var out bytes.Buffer
	if _, err := s.Retain(bytes.NewReader(numbered(3000)), &out, RetainOptions{Run: "r", Call: "c1"}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 {
		t.Fatalf("while committing, $TMPDIR held %v", seen)
	}
}

// A reader walking a value window after window gets the next windows
// fetched while it reads this one: a GET of a window past the second is
// sent before the second's is answered. (The second window's GET waits,
// up to a minute, for such a GET to be sent, before or after it; a
// reader that fetched one window at a time would send none until it had
// the second, and fail. The windows ahead are fetched on goroutines of
// their own, in no order: the later ones may be answered before the
// second's is sent, so the test waits for their being sent, not for two
// GETs on the wire at once.)
func TestObjectReadAhead(t *testing.T) { s3test.Each(t, testObjectReadAhead) }

func testObjectReadAhead(t *testing.T, srv *s3test.Server) {
	rec := &recorder{}
	s, _ := objectStore(t, srv, rec)
	in := numbered(300000) // about 10 MiB: ten windows
	var out bytes.Buffer
	if _, err := s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "big",
		Limits: Limits{Threshold: Unlimited, MaxValueSize: Unlimited, MaxRunBytes: Unlimited}}); err != nil {
		t.Fatal(err)
	}
	ahead := make(chan struct{})
	var once sync.Once
	rec.before = func(req request) {
		var first, last int64
		if req.Method != http.MethodGet || !strings.HasSuffix(req.Path, "big.txt") {
			return
		}
		if _, err := fmt.Sscanf(req.Range, "bytes=%d-%d", &first, &last); err != nil {
			return
		}
		switch {
		case first >= 2*readWindow:
			once.Do(func() { close(ahead) })
		case first == readWindow:
			select {
			case <-ahead:
			case <-time.After(time.Minute):
				t.Error("no window past the second was asked for before the second was read: nothing was fetched ahead")
			}
		}
	}
	v, err := s.OpenValue("r", "big")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	got, err := io.ReadAll(v.Section(0, v.Size()))
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("read %d bytes (%v), want the %d retained", len(got), err, len(in))
	}
}

// The same bytes again on a damaged value restore it: content of the wrong
// size is uploaded again, and when this retain stores another
// representation the descriptor names it and the damaged content goes —
// nothing is left that names no value.
func TestObjectRetainAgainRestores(t *testing.T) { s3test.Each(t, testObjectRetainAgainRestores) }

func testObjectRetainAgainRestores(t *testing.T, srv *s3test.Server) {
	s, raw := objectStore(t, srv, nil)
	in := numbered(3000)
	opts := RetainOptions{Run: "r", Call: "c1"}
	var out bytes.Buffer
	if _, err := s.Retain(bytes.NewReader(in), &out, opts); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := raw.Put(ctx, "r.values/c1.txt", in[:100]); err != nil {
		t.Fatal(err)
	}
	opts.Compress = "zstd"
	out.Reset()
	res, err := s.Retain(bytes.NewReader(in), &out, opts)
	if err != nil || !res.Retained || res.Descriptor.Compression != CompressZstd {
		t.Fatalf("retain again: %+v, %v", res, err)
	}
	v, err := s.OpenValue("r", "c1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(v.Section(0, v.Size()))
	v.Close()
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("the restored value reads %d bytes (%v)", len(got), err)
	}
	for _, k := range keysOf(t, raw, "r.values/") {
		if k == "r.values/c1.txt" {
			t.Errorf("the damaged plain content is still there beside the zstd one")
		}
	}
}
