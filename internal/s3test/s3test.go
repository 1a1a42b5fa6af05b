// Package s3test starts a real S3-compatible server for tests: versitygw
// with its posix backend in a temporary directory, listening on 127.0.0.1
// on a free port. The store's S3 tests run against it, never against a
// home-made fake, so conditional writes, ranged reads and multipart uploads
// behave as a real gateway makes them behave.
//
// The binary is found as $VERSITYGW, on $PATH, or where the CI script
// caches it ($HOME/.cache/retval-ci/versitygw@<version>/versitygw). Without
// it a test skips — except under CI=true, where a missing server fails it.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Version is the versitygw release the tests are written against; the CI
// script installs exactly this one.
const Version = "v1.8.0"

// Server is a running gateway. Its credentials are fixed test keys; Env
// gives the AWS variables a client (or a retval process) needs to reach it.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	Region    string
	AccessKey string
	SecretKey string
	Root      string // the posix backend's directory: one subdirectory per bucket

	cmd  *exec.Cmd
	done chan struct{}
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

// Start starts a server of the test's own, stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := need(t)
	s, err := start(bin, t.TempDir())
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
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
