package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
)

// TestCrashRetainS3 is TestCrashRetain on object storage (the in-memory
// fake, and versitygw, on loopback): retain is killed with SIGKILL at random points of its write —
// spooling, uploading (in parts for the larger input), creating the
// descriptor, checking — and after each kill verify finds no value that is
// not whole (no descriptor without its content), and replay prints the
// stub of a whole value or the text verbatim. What a kill leaves behind is
// at most debris, which gc removes.
func TestCrashRetainS3(t *testing.T) { s3test.Each(t, testCrashRetainS3) }

func testCrashRetainS3(t *testing.T, srv *s3test.Server) {
	env := append(srv.Env(), "RETVAL_STORE=s3://"+srv.NewBucket(t)+"/crash")
	iters := 120
	if quick() {
		iters = 30
	}
	dir := t.TempDir()
	sizes := []int{30 << 10, 12 << 20} // one PUT; three multipart parts
	paths, data := map[int]string{}, map[int][]byte{}
	for _, n := range sizes {
		paths[n] = makeInput(t, dir, n)
		data[n], _ = os.ReadFile(paths[n])
	}
	r := seeded(t)
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(retval, args...)
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}
	tiny := filepath.Join(dir, "tiny")
	os.WriteFile(tiny, []byte("x"), 0o644)
	startup := time.Duration(1 << 62)
	for range 5 {
		t0 := time.Now()
		if out, err := run("retain", "--run", "r0", "--call", "tiny", tiny).CombinedOutput(); err != nil {
			t.Fatalf("retain: %v\n%s", err, out)
		}
		startup = min(startup, time.Since(t0))
	}
	var killed, committed int
	for i := range iters {
		size := sizes[r.IntN(len(sizes))]
		comp := []string{"none", "zstd"}[r.IntN(2)]
		runID, call := fmt.Sprintf("r%d", i%3), fmt.Sprintf("c%d", i)
		cmd := run("retain", "--run", runID, "--call", call, "--compress", comp, "--threshold", "1KiB",
			"--max-value-size", "0", "--max-run-bytes", "0", "--max-run-values", "0", paths[size])
		cmd.Stdout = new(bytes.Buffer)
		gw := newGateway(t, srv.Endpoint)
		cmd.Env = append(cmd.Env, "AWS_ENDPOINT_URL_S3="+gw.url)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(startup*3/4 + time.Duration(r.Int64N(int64(time.Duration(size/(20<<10))*time.Millisecond+2*startup))))
		cmd.Process.Signal(syscall.SIGKILL)
		if cmd.Wait() != nil {
			killed++
		}
		// Every request of the killed retain has been answered by the
		// server, or will never reach it: replay sees the store as it
		// stays.
		gw.close()
		rep := run("replay", "--run", runID, "--call", call, paths[size])
		out, err := rep.Output()
		if err != nil {
			t.Fatalf("replay after kill: %v", err)
		}
		if bytes.HasPrefix(out, []byte("[retained #"+call+"]")) {
			committed++
		} else if !bytes.Equal(out, data[size]) {
			t.Fatalf("replay after a kill printed neither the stub nor the text (%d bytes)", len(out))
		}
	}
	// Every descriptor names whole content: nothing corrupt or missing.
	v := run("verify", "--json")
	out, _ := v.Output()
	var rep verifyReport
	decode(t, out, &rep)
	if rep.Corrupt != 0 || rep.Missing != 0 {
		var probs []string
		for _, p := range rep.Problems {
			probs = append(probs, p.Run+"/"+p.File+": "+p.Message)
		}
		t.Fatalf("after %d kills: %d corrupt, %d missing:\n%s", killed, rep.Corrupt, rep.Missing, strings.Join(probs, "\n"))
	}
	// Replay agreed with the store: a stub exactly for each committed value.
	if rep.Values != committed {
		t.Fatalf("verify counts %d values, replay found %d stubs", rep.Values, committed)
	}
	t.Logf("%d iterations: %d killed; %d values whole, %d debris objects, 0 lost", iters, killed, rep.Values, rep.Debris)
}

// gateway relays one process's requests to the S3 server, so that a test
// can know when all of them are over. A request the process sent whole
// before it was killed is still carried to the server and its answer
// waited for (the server could otherwise commit it after the test had
// looked); close refuses connections not yet accepted and returns once
// every request taken is answered.
type gateway struct {
	url string
	srv *http.Server
}

func newGateway(t *testing.T, upstream string) *gateway {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	g := &gateway{url: "http://" + ln.Addr().String(), srv: &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The client's death must not cancel what it already sent.
			rp.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
		}),
		ErrorLog: log.New(io.Discard, "", 0),
	}}
	go g.srv.Serve(ln)
	return g
}

func (g *gateway) close() { g.srv.Shutdown(context.Background()) }
