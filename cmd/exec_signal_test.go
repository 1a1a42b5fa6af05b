package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selfRetval is this test binary under the name retval, which runs Main
// (see TestMain).
func selfRetval(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "retval")
	if err := os.Symlink(exe, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitGuarded waits for c, turning a hang into a failure.
func waitGuarded(t *testing.T, c *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		t.Fatal("retval did not exit")
		return nil
	}
}

// A closed stdout does not kill retval by SIGPIPE, leaving the command
// without its reader: the command learns of it writing, retval waits for
// it and says what happened.
func TestExecClosedStdout(t *testing.T) {
	f := mkfifo(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads retval's stdout
	var stderr strings.Builder
	c := exec.Command(selfRetval(t), "exec", "--off", "--", "sh", "-c", `echo hi; cat "$0" >/dev/null; echo MARKER`, f)
	c.Stdout, c.Stderr = w, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The command waits on the FIFO until it is opened here, after it
	// printed hi.
	ff, err := os.OpenFile(f, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ff.Close()
	err = waitGuarded(t, c)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "broken pipe") {
		t.Fatalf("%v, stderr %q", err, stderr.String())
	}
}

// SIGQUIT is forwarded like SIGTERM: the command ends by it, retval
// exits with its status and keeps what it printed.
func TestExecForwardsQuit(t *testing.T) {
	f := mkfifo(t)
	runs := t.TempDir()
	var stdout, stderr strings.Builder
	c := exec.Command(selfRetval(t), "exec", "--runs-dir", runs, "--run", "r", "--call", "q", "--threshold", "0",
		"--", "sh", "-c", `echo before; exec cat "$0"`, f)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the FIFO waits for cat: the command runs.
	ff, err := os.OpenFile(f, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ff.Close()
	c.Process.Signal(syscall.SIGQUIT)
	err = waitGuarded(t, c)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGQUIT) || !strings.Contains(stdout.String(), "[retained #q]") {
		t.Fatalf("%v, stdout %q, stderr %.300q", err, stdout.String(), stderr.String())
	}
}

// Once the command has exited, a signal ends retval as it would any
// process: one blocked writing the command's output to a reader that
// stopped reading (but holds the pipe open) is not kept for ever by
// catching every signal that comes. The first SIGTERM goes to the
// command; signals are sent until retval is gone.
func TestExecStoppableOnceTheCommandExited(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() // open, never read
	c := exec.Command(selfRetval(t), "exec", "--off", "--", "yes")
	c.Stdout = w
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	guard := time.After(60 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("retval: %v, want it ended by SIGTERM", err)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Fatalf("retval: %v, want it ended by SIGTERM", err)
			}
			return
		case <-tick.C:
			c.Process.Signal(syscall.SIGTERM)
		case <-guard:
			c.Process.Kill()
			t.Fatal("retval still runs after a minute of SIGTERMs")
		}
	}
}
