package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverCmd is the test binary run as the upstream server in mode.
func serverCmd(t *testing.T, mode string, stderr io.Writer) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "RETVAL_MCP_TEST_SERVER="+mode)
	cmd.Stderr = stderr
	return cmd
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// fakeWaits hands each wait to the test, which ends it by closing the
// channel it receives: no test sleeps for a real 5 s.
type fakeWaits struct{ asked chan chan time.Time }

func (f *fakeWaits) waits() Waits {
	return Waits{After: func(d time.Duration) <-chan time.Time {
		c := make(chan time.Time)
		f.asked <- c
		return c
	}}
}

// A client through RunCommand and a real server process: results are
// retained, a 20 MB result (over max-value-size: relayed whole) does not
// end the relay, and the end of the client's stdin ends the server.
func TestRunCommandRelays(t *testing.T) {
	st, _ := newStore(t)
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "cmd", Log: io.Discard}
	c2pR, c2pW := io.Pipe()
	p2cR, p2cW := io.Pipe()
	var stderr syncBuffer
	cmd := serverCmd(t, "serve", &stderr)
	done := make(chan error, 1)
	go func() { done <- RunCommand(context.Background(), p, cmd, c2pR, p2cW, Waits{}) }()
	// Only a guard against a hang: a 20 MB relay under the race detector
	// on a loaded 2-core machine takes over a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, &mcp.IOTransport{Reader: p2cR, Writer: c2pW, MaxLineLength: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	stubID(t, res.Content[0].(*mcp.TextContent).Text)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "huge", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Content[0].(*mcp.TextContent).Text); n != 20<<20 {
		t.Errorf("huge: %d bytes, want %d", n, 20<<20)
	}
	// Still relaying.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "small", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	c2pW.Close() // the client is done
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunCommand = %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the proxy did not end when its client did")
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Errorf("server state %v", cmd.ProcessState)
	}
}

// The server's own exit ends the proxy, with its status; its stderr is
// the proxy's.
func TestRunCommandServerExit(t *testing.T) {
	st, _ := newStore(t)
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "cmd"}
	var stderr syncBuffer
	c2pR, _ := io.Pipe()
	err := RunCommand(context.Background(), p, serverCmd(t, "exit3", &stderr), c2pR, io.Discard, Waits{})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 3 {
		t.Errorf("RunCommand = %v, want exit status 3", err)
	}
	if !strings.Contains(stderr.String(), "upstream: bad configuration") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

// A server that dies mid-call: the pending request is answered with an
// error saying why, and what it wrote that is not JSON-RPC (a log line,
// half a frame) never reaches the client's stdout.
func TestRunCommandServerDiesMidCall(t *testing.T) {
	st, _ := newStore(t)
	var log syncBuffer
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "cmd", Log: &log}
	c2pR, c2pW := io.Pipe()
	defer c2pW.Close()
	var out syncBuffer
	go io.WriteString(c2pW, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{}}}`+"\n")
	err := RunCommand(context.Background(), p, serverCmd(t, "dies", io.Discard), c2pR, &out, Waits{})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 1 {
		t.Errorf("RunCommand = %v, want exit status 1", err)
	}
	want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"retval: the server exited with status 1 before answering"}}` + "\n"
	if out.String() != want {
		t.Errorf("the client received %q\nwant %q", out.String(), want)
	}
	if !strings.Contains(log.String(), "not a JSON-RPC message, dropped") || !strings.Contains(log.String(), "answered 1 request(s) the server did not") {
		t.Errorf("stderr %q", log.String())
	}
}

// gatedWriter holds every write until gate is closed.
type gatedWriter struct {
	gate chan struct{}
	syncBuffer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	<-g.gate
	return g.syncBuffer.Write(p)
}

// What a server wrote before it exited reaches the client even when the
// drain wait ends while the relay is still busy with what came before:
// the wait only bounds how long a pipe a child holds open is read.
func TestRunCommandRelaysLastWordsPastDrain(t *testing.T) {
	st, _ := newStore(t)
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "cmd"}
	var stderr syncBuffer
	out := &gatedWriter{gate: make(chan struct{})}
	c2pR, c2pW := io.Pipe()
	defer c2pW.Close()
	f := &fakeWaits{asked: make(chan chan time.Time, 10)}
	done := make(chan error, 1)
	go func() {
		done <- RunCommand(context.Background(), p, serverCmd(t, "lastwords", &stderr), c2pR, out, f.waits())
	}()
	// The server has exited; the relay is held writing its first message.
	close(<-f.asked)
	select {
	case err := <-done:
		close(out.gate)
		t.Fatalf("RunCommand returned (%v) while the relay still held the server's messages", err)
	case <-time.After(200 * time.Millisecond): // only a wrong return is caught sooner
	}
	close(out.gate)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunCommand = %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy did not end")
	}
	if got := out.String(); !strings.Contains(got, `"method":"x/one"`) || !strings.Contains(got, `"method":"x/two"`) || len(got) < 30<<10 {
		t.Fatalf("the client got %d bytes: %.200q", len(got), got)
	}
}

// A client that stops reading cannot keep a proxy told to stop (SIGTERM,
// as ctx): once the server is gone, what is left to relay gets one more
// drain wait, and the proxy ends.
func TestRunCommandStopsWithAClientThatDoesNotRead(t *testing.T) {
	st, _ := newStore(t)
	var log syncBuffer
	p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "cmd", Log: &log}
	var stderr syncBuffer
	out := &gatedWriter{gate: make(chan struct{})} // never read
	defer close(out.gate)
	c2pR, c2pW := io.Pipe()
	defer c2pW.Close()
	f := &fakeWaits{asked: make(chan chan time.Time, 10)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- RunCommand(ctx, p, serverCmd(t, "lastwords", &stderr), c2pR, out, f.waits())
	}()
	// The server has exited; the relay is held writing its first message.
	drain := <-f.asked
	stop() // the proxy is told to stop
	close(drain)
	select {
	case c := <-f.asked: // the last wait for the relay
		close(c)
	case err := <-done:
		t.Fatalf("RunCommand returned (%v) without a last wait for the relay", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy waits for ever for a client that does not read")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunCommand = %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy did not end")
	}
	if !strings.Contains(log.String(), "did not take") {
		t.Errorf("log %q", log.String())
	}
}

// A server that ignores the end of its stdin and SIGTERM is killed: close
// stdin, wait, SIGTERM, wait, SIGKILL; the proxy ends with it.
func TestRunCommandStubbornServer(t *testing.T) {
	for _, how := range []string{"stdin", "signal"} {
		t.Run(how, func(t *testing.T) {
			st, _ := newStore(t)
			p := &Proxy{Tools: &Tools{Store: st, Run: "r1"}, Session: "cmd"}
			var stderr syncBuffer
			cmd := serverCmd(t, "stubborn", &stderr)
			c2pR, c2pW := io.Pipe()
			f := &fakeWaits{asked: make(chan chan time.Time, 10)}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan error, 1)
			go func() { done <- RunCommand(ctx, p, cmd, c2pR, io.Discard, f.waits()) }()
			waitFor(t, func() bool { return strings.Contains(stderr.String(), "upstream: ready") })
			if how == "stdin" {
				c2pW.Close()
			} else {
				stop() // as SIGTERM to the proxy does
			}
			close(<-f.asked) // the wait after closing its stdin
			waitFor(t, func() bool { return strings.Contains(stderr.String(), "SIGTERM ignored") })
			close(<-f.asked) // the wait after SIGTERM
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("RunCommand = %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the proxy did not end")
			}
			if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGKILL {
				t.Errorf("server ended %v, want killed", cmd.ProcessState)
			}
		})
	}
}

// waitFor polls cond until it holds; only a hang fails it (after 60 s).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
