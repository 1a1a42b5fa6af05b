package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// testClient is NewClient on srv, path-style, retrying without waiting:
// the retryer's decisions are the SDK's, its backoff is not under test.
func testClient(t *testing.T, srv *httptest.Server) *client {
	t.Helper()
	c := NewClient("b", Config{Endpoint: srv.URL, AccessKey: "k", SecretKey: "s", PathStyle: true}).(*client)
	c.retryer = newRetryer(retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil }))
	return c
}

// The signature of the example in Amazon S3's documentation of Signature
// Version 4 ("GET Object", sig-v4-header-based-auth): the request the
// client builds is signed as S3 checks it.
func TestSignatureOfTheDocumentedExample(t *testing.T) {
	c := NewClient("examplebucket", Config{
		Endpoint:  "https://s3.amazonaws.com",
		Region:    "us-east-1",
		AccessKey: "AKIAIOSFODNN7EXAMPLE",
		SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	}).(*client)
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	req, err := c.httpRequest(context.Background(), request{method: http.MethodGet, key: "test.txt", header: http.Header{"Range": {"bytes=0-9"}}}, at)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "https://examplebucket.s3.amazonaws.com/test.txt" {
		t.Errorf("URL %s", req.URL)
	}
	auth := req.Header.Get("Authorization")
	for _, want := range []string{
		"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date",
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
	} {
		if !strings.Contains(auth, want) {
			t.Errorf("Authorization %q lacks %q", auth, want)
		}
	}
}

// Keys are sent escaped as S3 signs them, and a query's spaces as %20.
func TestEscapes(t *testing.T) {
	c := NewClient("b", Config{Endpoint: "http://127.0.0.1:1", AccessKey: "k", SecretKey: "s", PathStyle: true}).(*client)
	req, err := c.httpRequest(context.Background(), request{method: http.MethodGet, query: map[string][]string{"prefix": {"a b+c/"}, "list-type": {"2"}}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.RequestURI(); got != "/b?list-type=2&prefix=a%20b%2Bc%2F" {
		t.Errorf("bucket request URI %s", got)
	}
	req, err = c.httpRequest(context.Background(), request{method: http.MethodGet, key: "p/a b+c%é~.txt"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.RequestURI(); got != "/b/p/a%20b%2Bc%25%C3%A9~.txt" {
		t.Errorf("object request URI %s", got)
	}
}

// answers serves the handlers in turn, one per request, and counts them.
type answers struct {
	mu   sync.Mutex
	n    int
	each []http.HandlerFunc
}

func (a *answers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	h := a.each[min(a.n, len(a.each)-1)]
	a.n++
	a.mu.Unlock()
	io.Copy(io.Discard, r.Body)
	h(w, r)
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func s3Error(status int, code string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		fmt.Fprintf(w, "<Error><Code>%s</Code><Message>m</Message></Error>", code)
	}
}

func ok(w http.ResponseWriter, r *http.Request) { w.Header().Set("ETag", `"e"`) }

// hangUp drops the connection without an answer.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// Failures S3 asks clients to retry are tried three times in all; others
// once, with S3's code kept for the store to branch on.
func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		each     []http.HandlerFunc
		requests int
		status   int // of the error; 0: success
	}{
		{"SlowDown then success", []http.HandlerFunc{s3Error(503, "SlowDown"), ok}, 2, 0},
		{"500 every time", []http.HandlerFunc{s3Error(500, "InternalError")}, 3, 500},
		{"connection dropped then success", []http.HandlerFunc{hangUp, ok}, 2, 0},
		{"412 not retried", []http.HandlerFunc{s3Error(412, "PreconditionFailed")}, 1, 412},
		{"404 not retried", []http.HandlerFunc{s3Error(404, "NoSuchBucket")}, 1, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &answers{each: tc.each}
			srv := httptest.NewServer(a)
			defer srv.Close()
			_, err := testClient(t, srv).PutObject(context.Background(), "k", []byte("v"), Cond{IfNoneMatch: true})
			if a.count() != tc.requests {
				t.Errorf("%d requests, want %d", a.count(), tc.requests)
			}
			var se *StatusError
			switch {
			case tc.status == 0 && err != nil:
				t.Errorf("PutObject: %v", err)
			case tc.status != 0 && (!errors.As(err, &se) || se.Status != tc.status):
				t.Errorf("PutObject: %v, want a StatusError of %d", err, tc.status)
			}
		})
	}
}

// A multipart completion answered 200 with an <Error> body failed: it is
// that error (retried, for InternalError), not an empty ETag.
func TestCompletionErrorInA200(t *testing.T) {
	a := &answers{each: []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>")
	}}}
	srv := httptest.NewServer(a)
	defer srv.Close()
	_, err := testClient(t, srv).CompleteUpload(context.Background(), "k", "id", []Part{{Num: 1, ETag: `"e"`}}, Cond{})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != "InternalError" || a.count() != 3 {
		t.Fatalf("CompleteUpload = %v after %d requests; want InternalError after 3", err, a.count())
	}
}

// A client whose clock is off signs again with the server's after S3
// says RequestTimeTooSkewed, once.
func TestClockSkew(t *testing.T) {
	server := time.Now().Add(time.Hour).UTC()
	var dates []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		dates = append(dates, r.Header.Get("X-Amz-Date"))
		mu.Unlock()
		d, _ := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		if d.Sub(server).Abs() > 15*time.Minute {
			w.Header().Set("Date", server.Format(http.TimeFormat))
			s3Error(403, "RequestTimeTooSkewed")(w, r)
			return
		}
		ok(w, r)
	}))
	defer srv.Close()
	if _, err := testClient(t, srv).PutObject(context.Background(), "k", []byte("v"), Cond{}); err != nil || len(dates) != 2 {
		t.Fatalf("PutObject = %v after requests dated %v", err, dates)
	}
}
