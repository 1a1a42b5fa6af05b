// Package s3test gives tests the S3-compatible servers the store's S3
// tests run against, both of them through one helper (Each):
//
//   - the in-memory fake (internal/s3fake), always there: a plain
//     go test runs every S3 test against it, in the test's process (its
//     API directly, which a test can wrap with faults) and over HTTP on
//     127.0.0.1 for a retval process the test starts;
//   - versitygw, a real gateway, with its posix backend in a temporary
//     directory, listening on 127.0.0.1 on a free port: the check that
//     the fake's semantics are a real server's.
//
// The versitygw binary is found as $VERSITYGW, on $PATH, or where the CI
// script caches it ($HOME/.cache/retval-ci/versitygw@<version>/versitygw).
// Without it Each runs a test against the fake alone (no subtest is
// skipped), except under CI=true, where a missing server fails the test.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/retval/retval/internal/s3fake"
	"github.com/retval/retval/pkg/retain/s3store"
)

// Version is the versitygw release the tests are written against; the CI
// script installs exactly this one.
const Version = "v1.8.0"

// Server is a running S3-compatible server: versitygw or the fake. Its
// credentials are fixed test keys; Env gives the AWS variables a client
// (or a retval process) needs to reach it.
type Server struct {
	Name      string // "versitygw" or "fake"
	Endpoint  string // http://127.0.0.1:PORT
	Region    string
	AccessKey string
	SecretKey string
	Root      string // versitygw's posix backend's directory: one subdirectory per bucket

	fake *s3fake.Server
	cmd  *exec.Cmd
	done chan struct{}
}

// Each runs f as a subtest against each server there is: "fake", a fresh
// in-memory server of the test's own, always; and "versitygw", the
// binary's shared gateway, where the binary is installed, and always
// under CI=true, where a missing one fails the test. Without versitygw
// there is no such subtest rather than a skipped one: a plain go test
// runs every S3 test, against the fake, and skips none.
func Each(t *testing.T, f func(t *testing.T, srv *Server)) {
	t.Helper()
	t.Run("fake", func(t *testing.T) { f(t, Fake(t)) })
	if HaveVersitygw() {
		t.Run("versitygw", func(t *testing.T) { f(t, Shared(t)) })
	}
}

// HaveVersitygw reports whether the tests run against versitygw too: its
// binary is installed, or CI=true demands it.
func HaveVersitygw() bool { return Binary() != "" || os.Getenv("CI") == "true" }

// Fake starts an in-memory server of the test's own, served over HTTP on
// 127.0.0.1 as well, stopped when the test ends. Its clock is time.Now.
func Fake(t testing.TB) *Server {
	t.Helper()
	fs := s3fake.NewServer(nil)
	hs := httptest.NewServer(fs)
	t.Cleanup(hs.Close)
	return &Server{Name: "fake", Endpoint: hs.URL, Region: "us-east-1", AccessKey: "retvaltest", SecretKey: "retvaltestsecret", fake: fs}
}

// IsFake reports whether the server is the in-memory fake.
func (s *Server) IsFake() bool { return s.fake != nil }

// Config is how a client reaches the server.
func (s *Server) Config() s3store.Config {
	return s3store.Config{Endpoint: s.Endpoint, Region: s.Region, AccessKey: s.AccessKey, SecretKey: s.SecretKey, PathStyle: true}
}

// API is the API of bucket as directly as the test's process reaches it:
// the fake's bucket in memory, or versitygw's through the HTTP client.
func (s *Server) API(bucket string) s3store.API {
	if s.fake != nil {
		if b := s.fake.Bucket(bucket); b != nil {
			return b
		}
	}
	return s.Client(bucket)
}

// Client is the API of bucket through the store's HTTP client, as a retval
// process reaches it, whichever the server.
func (s *Server) Client(bucket string) s3store.API { return s3store.NewClient(bucket, s.Config()) }

// FakeBucket is the fake's bucket named name, nil on versitygw (or if
// there is no such bucket).
func (s *Server) FakeBucket(name string) *s3fake.Bucket {
	if s.fake == nil {
		return nil
	}
	return s.fake.Bucket(name)
}

// Open returns the store's Bucket for loc through API.
func (s *Server) Open(loc s3store.Location) *s3store.Bucket {
	return s3store.New(s.API(loc.Bucket), loc)
}

// Binary returns the versitygw binary's path, or "" when none is installed.
func Binary() string {
	if p := os.Getenv("VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "retval-ci", "versitygw@"+Version, "versitygw")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// Shared returns one server for the whole test binary, started on first
// use and stopped by Stop (call it from TestMain after m.Run, or let the
// process exit take it down). Tests isolate themselves with NewBucket.
func Shared(t testing.TB) *Server {
	t.Helper()
	bin := need(t)
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "retval-s3test-")
		if err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = start(bin, dir)
	})
	if sharedErr != nil {
		t.Fatalf("starting versitygw: %v", sharedErr)
	}
	return shared
}

// StopShared stops the shared server, if one was started, and removes its
// directory.
func StopShared() {
	if shared != nil {
		shared.Stop()
		os.RemoveAll(shared.Root)
	}
}

func need(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("versitygw %s is not installed (the CI script installs it; set VERSITYGW to its path)", Version)
		}
		t.Skipf("versitygw %s is not installed: go install github.com/versity/versitygw/cmd/versitygw@%s", Version, Version)
	}
	return bin
}

func start(bin, root string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Name:      "versitygw",
		Endpoint:  fmt.Sprintf("http://127.0.0.1:%d", port),
		Region:    "us-east-1",
		AccessKey: "retvaltest",
		SecretKey: "retvaltestsecret",
		Root:      root,
		done:      make(chan struct{}),
	}
	s.cmd = exec.Command(bin, "--port", fmt.Sprintf("127.0.0.1:%d", port), "--quiet",
		"--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"posix", root)
	logf, err := os.Create(filepath.Join(os.TempDir(), fmt.Sprintf("versitygw-%d.log", port)))
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() {
		s.cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	// Ready when it answers HTTP at all (an anonymous request is refused
	// with 403, which is an answer); give up after a minute.
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-s.done:
			out, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("versitygw exited at start: %s", strings.TrimSpace(string(out)))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			os.Remove(logf.Name())
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("versitygw did not answer on %s: %v", s.Endpoint, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return // the fake's is closed by its test's cleanup
	}
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	<-s.done
}

// Env returns the AWS variables that point a client at the server, with
// nothing read from the user's own AWS files.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// SetEnv sets Env's variables for the test (t.Setenv: not with t.Parallel).
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL", "")
}

// NewBucket creates a bucket with a fresh name and returns it: each test
// gets its own, so tests sharing a server never see each other's keys.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "t-" + hex.EncodeToString(b[:])
	if s.fake != nil {
		s.fake.CreateBucket(name)
		return name
	}
	c := s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}, nil
		}),
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	return name
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("no TCP address")
	}
	return addr.Port, nil
}
