//go:build unix

package cmd

import (
	"bufio"
	"errors"
	"io"
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

// awaitLine reads r until a line containing want, failing the test if r
// ends first or nothing comes for a minute (a hang). What was read is
// returned, the rest of r is drained in the background.
func awaitLine(t *testing.T, r io.Reader, want string) string {
	t.Helper()
	found := make(chan string, 1)
	var seen strings.Builder
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), want) {
				found <- sc.Text()
				io.Copy(io.Discard, r)
				return
			}
		}
		close(found)
	}()
	select {
	case line, ok := <-found:
		if !ok {
			t.Fatalf("no line with %q before the end", want)
		}
		return line
	case <-time.After(time.Minute):
		t.Fatalf("no line with %q within a minute", want)
		return ""
	}
}

// readFIFO opens a FIFO for reading and reads its first line: it waits
// for the writer, which is the event a test waits for.
func readFIFO(t *testing.T, path string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		return line
	case <-time.After(time.Minute):
		t.Fatalf("nothing written to %s within a minute", path)
		return ""
	}
}

// A signal that comes once the command has exited, before its output is
// committed (a harness's own deadline, a ^C a moment after a long build
// finished), does not lose the output: retval commits it, prints the stub
// and exits with the command's status. Before, it died by the signal with
// the output left as debris (exit 143).
func TestExecSignalAfterTheCommandExited(t *testing.T) {
	notify, release := mkfifo(t), mkfifo(t)
	runs := t.TempDir()
	c := exec.Command(selfRetval(t), "exec", "--runs-dir", runs, "--run", "r", "--call", "c",
		"--max-run-bytes", "0", "--max-value-size", "0", "--", "seq", "1", "300000")
	c.Env = append(os.Environ(), execSeamEnv+"="+notify+":"+release)
	var stdout strings.Builder
	c.Stdout = &stdout
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	readFIFO(t, notify) // the command has exited; nothing is committed yet
	c.Process.Signal(syscall.SIGTERM)
	awaitLine(t, stderr, "the command has exited; keeping what it printed")
	f, err := os.OpenFile(release, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := waitGuarded(t, c); err != nil {
		t.Fatalf("retval: %v, want exit 0 (the command's status)", err)
	}
	if !strings.HasPrefix(stdout.String(), "[retained #c] 1988895 bytes, 300000 lines") {
		t.Fatalf("stdout %.200q", stdout.String())
	}
	code, out, errs := run(t, "", "verify", "--runs-dir", runs, "--run", "r")
	if code != 0 {
		t.Fatalf("verify: exit %d: %s%s", code, out, errs)
	}
}
