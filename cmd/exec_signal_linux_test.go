package cmd

// The exec signal tests that need Linux: how full a pipe is (F_GETPIPE_SZ,
// TIOCINQ) and a process's exit seen through a pidfd.

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A second signal once the command has exited ends retval by that signal,
// as it ends any process: one blocked writing the output to a reader that
// stopped reading (but holds the pipe open) is not kept for ever. Each
// signal is sent once the event before it has happened.
func TestExecSecondSignalAfterExitStops(t *testing.T) {
	notify := mkfifo(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() // open, never read
	c := exec.Command(selfRetval(t), "exec", "--off", "--", "yes")
	c.Env = append(os.Environ(), execSeamEnv+"="+notify)
	c.Stdout = w
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Once retval's stdout is full, retval is blocked writing to it, and
	// stays blocked whatever becomes of the command.
	awaitFullPipe(t, r)
	c.Process.Signal(syscall.SIGTERM) // forwarded: yes ends
	readFIFO(t, notify)
	c.Process.Signal(syscall.SIGTERM) // the first after the exit: let be
	awaitLine(t, stderr, "signal again to stop now")
	c.Process.Signal(syscall.SIGTERM)
	err = waitGuarded(t, c)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("retval: %v, want it ended by SIGTERM", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("retval: %v, want it ended by SIGTERM; stderr %q", err, ee.Stderr)
	}
}

// SIGKILL of retval (which it cannot catch to pass on) does not orphan
// the command: the kernel ends it (Pdeathsig) instead of leaving it to
// run with its output going nowhere.
func TestExecKilledRetvalTakesTheCommand(t *testing.T) {
	pidFile := mkfifo(t)
	c := exec.Command(selfRetval(t), "exec", "--off", "--", "sh", "-c", `echo $$ >"$0"; exec sleep 1000`, pidFile)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFIFO(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	c.Process.Kill()
	c.Wait()
	// The pidfd becomes readable when the command exits.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 30_000)
	if err != nil || n == 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the command (pid %d) still runs 30 s after retval was killed (poll: %d, %v)", pid, n, err)
	}
}

// awaitFullPipe waits until the pipe r reads from holds all it can.
func awaitFullPipe(t *testing.T, r *os.File) {
	t.Helper()
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	guard := time.Now().Add(time.Minute)
	for {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n >= size {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("the pipe holds %d of %d bytes after a minute", n, size)
		}
		time.Sleep(time.Millisecond)
	}
}
