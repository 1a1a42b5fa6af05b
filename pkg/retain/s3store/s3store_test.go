package s3store

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

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
