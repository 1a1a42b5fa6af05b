package s3fake_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
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

// eachAPI runs f against the API of a fresh bucket of each server: the
// fake in memory and through the AWS SDK over HTTP, and versitygw. What
// the fake answers is checked against what a real server answers.
func eachAPI(t *testing.T, f func(t *testing.T, api s3store.API)) {
	s3test.Each(t, func(t *testing.T, srv *s3test.Server) {
		if !srv.IsFake() {
			f(t, srv.API(srv.NewBucket(t)))
			return
		}
		t.Run("memory", func(t *testing.T) { f(t, srv.API(srv.NewBucket(t))) })
		t.Run("http", func(t *testing.T) { f(t, srv.Client(srv.NewBucket(t))) })
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func status(err error) int {
	var se *s3store.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

func mustPut(t *testing.T, api s3store.API, key, body string) string {
	t.Helper()
	etag, err := api.PutObject(ctx(t), key, []byte(body), s3store.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	return etag
}

// Conditional writes: If-None-Match finds the key there, If-Match finds
// another ETag (412) or no object (404); the ETag is the content's
// digest, the same for the same bytes.
func TestConditionalWrites(t *testing.T) {
	eachAPI(t, func(t *testing.T, api s3store.API) {
		c := ctx(t)
		e1 := mustPut(t, api, "k", "one")
		if _, err := api.PutObject(c, "k", []byte("two"), s3store.Cond{IfNoneMatch: true}); status(err) != http.StatusPreconditionFailed {
			t.Fatalf("If-None-Match on a key there: %v, want 412", err)
		}
		if _, err := api.PutObject(c, "k", []byte("two"), s3store.Cond{IfMatch: `"00000000000000000000000000000000"`}); status(err) != http.StatusPreconditionFailed {
			t.Fatalf("If-Match with another ETag: %v, want 412", err)
		}
		if _, err := api.PutObject(c, "absent", []byte("two"), s3store.Cond{IfMatch: e1}); status(err) != http.StatusNotFound {
			t.Fatalf("If-Match on an absent key: %v, want 404", err)
		}
		e2, err := api.PutObject(c, "k", []byte("two"), s3store.Cond{IfMatch: e1})
		if err != nil || e2 == e1 {
			t.Fatalf("If-Match with the ETag: %s, %v", e2, err)
		}
		if e3 := mustPut(t, api, "other", "two"); e3 != e2 {
			t.Fatalf("the same bytes have ETags %s and %s", e2, e3)
		}
		if err := api.DeleteObject(c, "k", s3store.Cond{IfMatch: e1}); status(err) != http.StatusPreconditionFailed {
			t.Fatalf("a delete If-Match with a stale ETag: %v, want 412", err)
		}
		if err := api.DeleteObject(c, "k", s3store.Cond{IfMatch: e2}); err != nil {
			t.Fatal(err)
		}
		if _, err := api.HeadObject(c, "k"); status(err) != http.StatusNotFound {
			t.Fatalf("after the delete: %v, want 404", err)
		}
		if err := api.DeleteObject(c, "k", s3store.Cond{}); err != nil {
			t.Fatalf("deleting an absent key: %v", err)
		}
		if failed, err := api.DeleteObjects(c, []string{"other", "never"}); err != nil || len(failed) != 0 {
			t.Fatalf("a batch delete: %v, %v", failed, err)
		}
	})
}

// A ranged GET answers the part of the range the object holds, and 416
// for a range past its end.
func TestRanges(t *testing.T) {
	eachAPI(t, func(t *testing.T, api s3store.API) {
		c := ctx(t)
		mustPut(t, api, "k", "0123456789")
		for _, tc := range []struct {
			off, n int64
			want   string
			cr     string
		}{
			{0, 3, "012", "bytes 0-2/10"},
			{7, 10, "789", "bytes 7-9/10"},
			{9, 1, "9", "bytes 9-9/10"},
		} {
			out, err := api.GetObject(c, "k", &s3store.Range{Off: tc.off, Len: tc.n})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(out.Body)
			out.Body.Close()
			if err != nil || string(got) != tc.want || out.ContentRange != tc.cr || out.Size != int64(len(tc.want)) {
				t.Errorf("range %d+%d = %q (%d bytes, %q), %v; want %q, %q", tc.off, tc.n, got, out.Size, out.ContentRange, err, tc.want, tc.cr)
			}
		}
		if _, err := api.GetObject(c, "k", &s3store.Range{Off: 10, Len: 5}); status(err) != http.StatusRequestedRangeNotSatisfiable {
			t.Fatalf("a range past the end: %v, want 416", err)
		}
		if _, err := api.GetObject(c, "absent", nil); status(err) != http.StatusNotFound {
			t.Fatalf("GET of an absent key: %v, want 404", err)
		}
	})
}

// A listing is in byte order of the key, in pages of max-keys continued
// by token, with the keys under a delimiter rolled up into one prefix
// each — which a page boundary never splits or repeats.
func TestListPages(t *testing.T) {
	eachAPI(t, func(t *testing.T, api s3store.API) {
		c := ctx(t)
		for _, k := range []string{"p/a/1", "p/a/2", "p/b", "p/c/1", "p/c/2", "p/c/3", "p/d", "p/e/1", "p/B", "q/x"} {
			mustPut(t, api, k, k)
		}
		walk := func(in s3store.ListInput) []string {
			var got []string
			for {
				page, err := api.ListObjects(c, in)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Objects)+len(page.Prefixes) > int(in.MaxKeys) {
					t.Fatalf("a page of %d keys and %d prefixes, max-keys %d", len(page.Objects), len(page.Prefixes), in.MaxKeys)
				}
				var items []string
				for _, o := range page.Objects {
					items = append(items, o.Key)
				}
				for _, p := range page.Prefixes {
					items = append(items, p+"*")
				}
				got = append(got, "["+strings.Join(items, " ")+"]")
				if page.Next == "" {
					return got
				}
				in.Token = page.Next
			}
		}
		if got, want := strings.Join(walk(s3store.ListInput{Prefix: "p/", MaxKeys: 3}), ""), "[p/B p/a/1 p/a/2][p/b p/c/1 p/c/2][p/c/3 p/d p/e/1]"; got != want {
			t.Errorf("listing by 3: %s, want %s", got, want)
		}
		// Objects and prefixes of one page are each in order; across
		// pages, in order together.
		got := walk(s3store.ListInput{Prefix: "p/", Delimiter: "/", MaxKeys: 2})
		var flat []string
		for _, p := range got {
			flat = append(flat, strings.Fields(strings.Trim(p, "[]"))...)
		}
		if joined, want := strings.Join(flat, " "), "p/B p/a/* p/b p/c/* p/d p/e/*"; !sameItems(flat, strings.Fields(want)) {
			t.Errorf("listing by 2 under a delimiter: %s (%s), want %s", joined, strings.Join(got, ""), want)
		}
	})
}

// sameItems reports whether a and b hold the same items, each once.
func sameItems(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		if seen[x] != 1 {
			return false
		}
		seen[x]--
	}
	return true
}

// A multipart upload's object appears at its completion, If-None-Match
// honoured then; its ETag says its parts; an aborted one leaves nothing.
func TestMultipart(t *testing.T) {
	eachAPI(t, func(t *testing.T, api s3store.API) {
		c := ctx(t)
		part1 := bytes.Repeat([]byte("a"), 5<<20)
		id, err := api.CreateUpload(c, "m")
		if err != nil {
			t.Fatal(err)
		}
		p1, err := api.UploadPart(c, "m", id, 1, part1)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := api.UploadPart(c, "m", id, 2, []byte("tail"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.HeadObject(c, "m"); status(err) != http.StatusNotFound {
			t.Fatalf("an object before its completion: %v", err)
		}
		page, err := api.ListUploads(c, s3store.ListUploadsInput{Prefix: "m"})
		if err != nil || len(page.Uploads) != 1 || page.Uploads[0].ID != id {
			t.Fatalf("ListUploads = %+v, %v", page, err)
		}
		etag, err := api.CompleteUpload(c, "m", id, []s3store.Part{p1, p2}, s3store.Cond{IfNoneMatch: true})
		if err != nil || !strings.HasSuffix(etag, `-2"`) {
			t.Fatalf("CompleteUpload = %s, %v", etag, err)
		}
		out, err := api.GetObject(c, "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if !bytes.Equal(got, append(part1, "tail"...)) {
			t.Fatalf("the object holds %d bytes", len(got))
		}
		id2, _ := api.CreateUpload(c, "m")
		q1, _ := api.UploadPart(c, "m", id2, 1, []byte("x"))
		if _, err := api.CompleteUpload(c, "m", id2, []s3store.Part{q1}, s3store.Cond{IfNoneMatch: true}); status(err) != http.StatusPreconditionFailed {
			t.Fatalf("completing If-None-Match over an object: %v, want 412", err)
		}
		if err := api.AbortUpload(c, "m", id2); err != nil && status(err) != http.StatusNotFound {
			t.Fatal(err)
		}
		if page, err := api.ListUploads(c, s3store.ListUploadsInput{}); err != nil || len(page.Uploads) != 0 {
			t.Fatalf("uploads left: %+v, %v", page, err)
		}
	})
}

// A part but the last smaller than S3's least (5 MiB) is refused at the
// completion; a test that wants small parts lowers the fake's bound.
func TestMultipartPartTooSmall(t *testing.T) {
	small := func(t *testing.T, api s3store.API) error {
		c := ctx(t)
		id, _ := api.CreateUpload(c, "m")
		p1, _ := api.UploadPart(c, "m", id, 1, []byte("small"))
		p2, _ := api.UploadPart(c, "m", id, 2, []byte("tail"))
		_, err := api.CompleteUpload(c, "m", id, []s3store.Part{p1, p2}, s3store.Cond{})
		return err
	}
	eachAPI(t, func(t *testing.T, api s3store.API) {
		var se *s3store.StatusError
		if err := small(t, api); !errors.As(err, &se) || se.Status != http.StatusBadRequest || se.Code != "EntityTooSmall" {
			t.Fatalf("a small first part: %v, want 400 EntityTooSmall", err)
		}
	})
	b := s3fake.NewBucket(nil)
	b.MinPartSize = 1
	if err := small(t, b); err != nil {
		t.Fatalf("a small first part under MinPartSize 1: %v", err)
	}
}

// Last-Modified and the server's Date are the fake's clock, in whole
// seconds: a test moves time on without waiting for it.
func TestClock(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	srv := s3fake.NewServer(func() time.Time { return now })
	b := srv.CreateBucket("b")
	c := ctx(t)
	mustPut(t, b, "k", "x")
	now = now.Add(time.Hour)
	o, err := b.HeadObject(c, "k")
	if err != nil || !o.Modified.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("Last-Modified %v, %v", o.Modified, err)
	}
	if d, err := b.Now(c); err != nil || !d.Equal(time.Date(2025, 1, 2, 4, 4, 5, 0, time.UTC)) {
		t.Fatalf("Now = %v, %v", d, err)
	}
}

// A clone holds what its bucket held, objects and unfinished uploads, on
// its own clock, and the two go their own ways after.
func TestClone(t *testing.T) {
	c := ctx(t)
	b := s3fake.NewBucket(nil)
	mustPut(t, b, "a", "one")
	id, err := b.CreateUpload(c, "big")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.UploadPart(c, "big", id, 1, []byte("part")); err != nil {
		t.Fatal(err)
	}
	then := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cl := b.Clone(func() time.Time { return then })
	if keys := cl.Keys(); len(keys) != 1 || keys[0] != "a" || cl.Uploads() != 1 {
		t.Fatalf("clone holds %v and %d uploads, want [a] and 1", keys, cl.Uploads())
	}
	mustPut(t, cl, "b", "two")
	mustPut(t, b, "a", "changed")
	out, err := cl.GetObject(c, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(got) != "one" || len(b.Keys()) != 1 {
		t.Fatalf("clone's a = %q, bucket's keys %v: the two share writes", got, b.Keys())
	}
	// The upload goes on in the clone alone.
	p, err := cl.UploadPart(c, "big", id, 1, []byte("part"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CompleteUpload(c, "big", id, []s3store.Part{p}, s3store.Cond{}); err != nil {
		t.Fatal(err)
	}
	if b.Uploads() != 1 || cl.Uploads() != 0 {
		t.Fatalf("uploads after the clone's completion: bucket %d, clone %d", b.Uploads(), cl.Uploads())
	}
	if o, err := cl.HeadObject(c, "b"); err != nil || !o.Modified.Equal(then) {
		t.Fatalf("the clone's clock: %v, %v", o.Modified, err)
	}
}
