//go:build unix

package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether process pid has ended (a zombie has).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	// pid (comm) state ...
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// A client that closes the proxy's stdout does not kill it by SIGPIPE,
// leaving what the server started running: writing fails, the server is
// shut down, its whole group with it, and the proxy says why.
func TestProxyClosedStdout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The server starts a process of its group, prints a notification and
	// waits for the end of its stdin.
	server := `sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > "$0"; echo '{"jsonrpc":"2.0","method":"notifications/x"}'; read x`
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads the proxy's stdout
	in, clientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer clientW.Close() // the client is still there: its stdin stays open
	var stderr strings.Builder
	c := exec.Command(selfRetval(t), "mcp", "proxy", "--runs-dir", dir, "--run", "r", "--", "sh", "-c", server, pidFile)
	c.Stdin, c.Stdout, c.Stderr = in, w, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	w.Close()
	err = waitGuarded(t, c)
	b, rerr := os.ReadFile(pidFile)
	pid, aerr := strconv.Atoi(strings.TrimSpace(string(b)))
	if rerr != nil || aerr != nil {
		t.Fatalf("the server's process: %v %v", rerr, aerr)
	}
	// Whatever happens, it does not outlive the test.
	defer syscall.Kill(pid, syscall.SIGKILL)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("%v (%v), stderr %q", err, c.ProcessState, stderr.String())
	}
	for deadline := time.Now().Add(60 * time.Second); !gone(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a process of the server's group outlived the proxy")
		}
	}
}
