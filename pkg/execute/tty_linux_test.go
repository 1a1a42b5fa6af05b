package execute

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// A command run with the terminal retval is in the foreground of as its
// stdin is given the terminal: it reads it (in the background, reading
// it would stop it, and Run with it). The test binary is the helper run
// as the session leader on a new terminal.
func TestRunGivesTheTerminal(t *testing.T) {
	if os.Getenv("RETVAL_EXEC_TTY_HELPER") == "1" {
		if !foregroundTTY(os.Stdin) {
			fmt.Println("stdin is not seen as the terminal retval is in the foreground of")
			os.Exit(1)
		}
		o := Options{Args: []string{"sh", "-c", `read line; echo "got $line"`}, Stdin: os.Stdin, Out: os.Stdout,
			Retain: retain.RetainOptions{Run: "r", Call: "c1"}}
		res, err := Run(retain.Open(t.TempDir()), o)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(res.Status)
	}
	master, slave := openPTY(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestRunGivesTheTerminal$")
	cmd.Env = append(os.Environ(), "RETVAL_EXEC_TTY_HELPER=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	// What the terminal shows, up to the end of the helper (then the
	// master reads EIO).
	shown := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil || strings.Contains(b.String(), "got hello") {
				shown <- b.String()
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case s := <-shown:
		if !strings.Contains(s, "got hello") {
			t.Errorf("the terminal showed %q", s)
		}
	case <-time.After(60 * time.Second):
		t.Error("the command did not read the terminal")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the helper: %v", err)
		}
	case <-time.After(60 * time.Second):
		// Its group, and the command's (stopped, in a group of its own:
		// orphaned, the kernel hangs it up).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Error("the helper did not end")
		<-exited
	}
}
