package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/internal/procgroup"
)

// Waits are how long shutting a server down waits: after closing its
// stdin, for it to exit (Close, default 5 s); after SIGTERM, before SIGKILL
// (Term, default 5 s); and, after it exited, for its stdout to reach its
// end (Drain, default 5 s: a child of its own may hold it open), and, when
// ctx ended the proxy, as long again for a client slow to take what is
// left. After, when set, replaces time.After, so a test decides when a
// wait is over.
type Waits struct {
	Close, Term, Drain time.Duration
	After              func(time.Duration) <-chan time.Time
}

func (w Waits) after(d, def time.Duration) <-chan time.Time {
	if d <= 0 {
		d = def
	}
	if w.After != nil {
		return w.After(d)
	}
	return time.After(d)
}

// ExitError is a server that ended with a non-zero status (Status is
// 128+N for a server killed by signal N, as a shell reports it).
type ExitError struct{ Status int }

func (e *ExitError) Error() string { return fmt.Sprintf("the server exited with status %d", e.Status) }

// ExitStatus is the status the proxy exits with.
func (e *ExitError) ExitStatus() int { return e.Status }

// RunCommand starts cmd as the server, relays between it and the client
// (clientIn, clientOut) through p, and shuts it down when the client is
// done (clientIn ends) or ctx is done: it closes the server's stdin, waits,
// sends SIGTERM to its process group, waits, sends SIGKILL. The server's
// stderr goes to cmd.Stderr, as set by the caller. It returns when the
// server and every process of its group are gone: nil, an *ExitError when
// the server ended by itself with a non-zero status, or the error that
// ended the relay.
func RunCommand(ctx context.Context, p *Proxy, cmd *exec.Cmd, clientIn io.Reader, clientOut io.Writer, w Waits) error {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// Our own pipe rather than StdoutPipe: Wait would close that while
	// the server's last messages are still to be read.
	outR, outW, err := iox.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = outW
	group, err := procgroup.Start(cmd, true)
	if err != nil {
		outR.Close()
		outW.Close()
		return fmt.Errorf("cannot start the server %q: %w", cmd.Path, err)
	}
	defer group.Close()
	outW.Close()
	defer outR.Close()

	clientDone := make(chan error, 1)
	serverDone := make(chan error, 1)
	go func() { clientDone <- p.fromClient(clientIn, clientOut, stdin) }()
	go func() { serverDone <- p.fromServer(iox.NewPipeReader(outR), clientOut) }()
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		group.CommandExited()
		exited <- err
	}()
	killGroup := group.Signal

	var relayErr, waitErr error
	serverOver := false // the server's stdout is at its end
	gone := false       // the server exited
	signaled := false   // the proxy had to signal it
	clientEnded := false
	select {
	case <-clientDone: // the client is done (or cannot be read)
		clientEnded = true
	case err := <-serverDone:
		serverOver = true
		if err != nil { // a name collision, or its stdout broke
			relayErr = err
		}
	case <-ctx.Done():
	case waitErr = <-exited:
		gone = true
	}
	if !gone {
		// Closing its stdin is how MCP asks a server over stdio to stop;
		// a server whose stdout ended is ending anyway.
		stdin.Close()
		select {
		case waitErr = <-exited:
		case <-w.after(w.Close, 5*time.Second):
			signaled = true
			killGroup(syscall.SIGTERM)
			select {
			case waitErr = <-exited:
			case <-w.after(w.Term, 5*time.Second):
				killGroup(syscall.SIGKILL)
				waitErr = <-exited
			}
		}
	}
	if !serverOver {
		// Relay what it wrote before it ended; a child of its own that
		// keeps its stdout open is read until Drain, and then what the
		// pipe holds is still relayed (iox.PipeReader), however long the
		// relay of what came before takes — unless the proxy is told to
		// stop: a client that does not read would keep it for ever, so
		// the relay then gets one more Drain.
		var err error
		select {
		case err = <-serverDone:
		case <-w.after(w.Drain, 5*time.Second):
			outR.SetReadDeadline(time.Now())
			select {
			case err = <-serverDone:
			case <-ctx.Done():
				select {
				case err = <-serverDone:
				case <-w.after(w.Drain, 5*time.Second):
					p.logf("the client did not take the server's last messages: stopping without them")
				}
			}
		}
		if err != nil && relayErr == nil {
			relayErr = err
		}
	}
	if !clientEnded && ctx.Err() == nil {
		// The server went first: the client is not left waiting for what
		// it asked and will never get, and is told why.
		why := "the server closed its output before answering"
		var ee *exec.ExitError
		switch {
		case errors.As(waitErr, &ee):
			why = fmt.Sprintf("the server exited with status %d before answering", ee.ExitCode())
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				why = fmt.Sprintf("the server was killed by signal %d before answering", int(st.Signal()))
			}
		case gone && waitErr == nil:
			why = "the server exited before answering"
		}
		p.AnswerPending(clientOut, why)
	}
	// No process of the server's group outlives the proxy.
	killGroup(syscall.SIGKILL)
	if relayErr != nil {
		return relayErr
	}
	if signaled {
		return nil // it was stopped: its status says so, not what it did
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return &ExitError{Status: 128 + int(st.Signal())}
		}
		return &ExitError{Status: ee.ExitCode()}
	}
	return waitErr
}
