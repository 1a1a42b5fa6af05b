package execute

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// These tests run the test binary itself as the command (see TestMain),
// so that they need no shell and hold on every system: Windows included,
// where the command's group is a Job object.

const childFlag = "-retval-exec-child"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == childFlag {
		os.Exit(child(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// childArgs is the command line that runs the test binary as a child in
// mode.
func childArgs(t *testing.T, mode string, args ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{exe, childFlag, mode}, args...)
}

// child is the test binary run as a command: what each mode does.
func child(mode string, args []string) int {
	switch mode {
	case "print": // print N CODE: seq 1 N on stdout, "oops" on stderr
		n, _ := strconv.Atoi(args[0])
		os.Stdout.WriteString(seq(n))
		os.Stderr.WriteString("oops\n")
		code, _ := strconv.Atoi(args[1])
		return code
	case "exit":
		code, _ := strconv.Atoi(args[0])
		return code
	case "upper":
		b, _ := io.ReadAll(os.Stdin)
		os.Stdout.Write(bytes.ToUpper(b))
		return 0
	case "flood":
		b := bytes.Repeat([]byte("y\n"), 4096)
		for {
			if _, err := os.Stdout.Write(b); err != nil {
				return 1
			}
		}
	case "sleep": // until killed
		sleepForever()
	case "hang", "leave": // PIDFILE: start a grandchild holding stdout
		if mode == "hang" {
			os.Stdout.WriteString(seq(100))
		}
		g := exec.Command(os.Args[0], childFlag, "sleep")
		g.Stdout, g.Stderr = os.Stdout, os.Stderr
		if err := g.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		writePIDs(args[0], os.Getpid(), g.Process.Pid)
		if mode == "leave" {
			os.Stdout.WriteString("started\n")
			return 0
		}
		sleepForever()
	case "runner": // PIDFILE STORE: retval exec of "hang", until killed
		s := retain.Open(args[1])
		exe, _ := os.Executable()
		_, err := Run(s, Options{Args: []string{exe, childFlag, "hang", args[0]}, Retain: retain.RetainOptions{Run: "r", Call: "c1"}, Out: io.Discard})
		fmt.Fprintln(os.Stderr, "Run returned:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 2
}

// sleepForever blocks until the process is killed. (Not select{}: with
// nothing else to run, the runtime would end the process as deadlocked.)
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// writePIDs writes the pids to path at once (by a rename), so that a
// reader sees all of them or nothing.
func writePIDs(path string, pids ...int) {
	var b strings.Builder
	for _, p := range pids {
		fmt.Fprintln(&b, p)
	}
	os.WriteFile(path+".tmp", []byte(b.String()), 0o600)
	os.Rename(path+".tmp", path)
}

// waitPIDs waits for the pids a child wrote to path.
func waitPIDs(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if pids, ok := readPIDs(path); ok {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not start its grandchild")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readPIDs reads the pids a child wrote to path, if it has.
func readPIDs(path string) ([]int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p, _ := strconv.Atoi(sc.Text())
		pids = append(pids, p)
	}
	return pids, true
}

// waitGone waits for process pid to end; only a hang fails it.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A command's status and its output, both streams, are what it gave.
func TestChildStatusAndOutput(t *testing.T) {
	s, o := opts(t, childArgs(t, "print", "200", "3")...)
	var out bytes.Buffer
	o.Out = &out
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 3 || res.TimedOut || out.Len() != 0 || !res.Stdout.Retained {
		t.Fatalf("status %d, timed out %v, out %q, %+v", res.Status, res.TimedOut, out.String(), res.Stdout)
	}
	if got, d := read(t, s, "c1"); got != seq(200)+"oops\n" || *d.ExitCode != 3 {
		t.Errorf("value %q, descriptor %+v", got, d)
	}
}

// stdin reaches the command.
func TestChildStdin(t *testing.T) {
	s, o := opts(t, childArgs(t, "upper")...)
	var out bytes.Buffer
	o.Out, o.Stdin = &out, strings.NewReader("hello\n")
	if res, err := runGuarded(t, s, o); err != nil || res.Status != 0 || out.String() != "HELLO\n" {
		t.Fatalf("%+v, %q, %v", res, out.String(), err)
	}
}

// The timeout ends the command's whole group — a grandchild holding the
// output too — keeps what was printed and reports 124.
func TestChildTimeoutEndsItsGroup(t *testing.T) {
	fire := make(chan time.Time)
	defer func(n func(time.Duration) (<-chan time.Time, func() bool)) { newTimer = n }(newTimer)
	newTimer = func(time.Duration) (<-chan time.Time, func() bool) { return fire, func() bool { return true } }
	pids := filepath.Join(t.TempDir(), "pids")
	s, o := opts(t, childArgs(t, "hang", pids)...)
	o.Timeout, o.Out = time.Hour, io.Discard
	go func() {
		// The timeout fires once the grandchild runs (a hang is caught
		// by runGuarded).
		for _, ok := readPIDs(pids); !ok; _, ok = readPIDs(pids) {
			time.Sleep(5 * time.Millisecond)
		}
		fire <- time.Now()
	}()
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusTimedOut || !res.TimedOut {
		t.Fatalf("%+v", res)
	}
	if got, d := read(t, s, "c1"); got != seq(100) || !d.TimedOut {
		t.Errorf("value %q, descriptor %+v", got, d)
	}
	p := waitPIDs(t, pids)
	waitGone(t, p[0], "the command")
	waitGone(t, p[1], "its grandchild")
}

// A process the command left behind, holding its output, neither keeps
// the run waiting nor is ended by it: the command's own exit ends the
// run with its status and what it printed, and the process runs on (as
// timeout(1) leaves it).
func TestChildLeftBehindRunsOn(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	s, o := opts(t, childArgs(t, "leave", pids)...)
	var out bytes.Buffer
	o.Out = &out
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 0 || res.TimedOut || out.String() != "started\n" {
		t.Fatalf("%+v, out %q", res, out.String())
	}
	p := waitPIDs(t, pids)
	if processGone(p[1]) {
		t.Error("the process the command left behind was ended")
	}
	if proc, err := os.FindProcess(p[1]); err == nil {
		proc.Kill()
	}
	waitGone(t, p[1], "the process left behind")
}

// An output that passes the max value size the caller chose stops the
// command there, with status 137 on every system.
func TestChildStoppedAtMaxValueSize(t *testing.T) {
	s, o := opts(t, childArgs(t, "flood")...)
	o.Retain.Limits.MaxValueSize = 64 << 10
	o.Out, o.StopAtMaxValueSize = io.Discard, true
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	got, d := read(t, s, "c1")
	if len(got) != 64<<10 || got[:4] != "y\ny\n" || !d.Stopped || !res.Stopped || res.Status != 137 {
		t.Fatalf("%d bytes, descriptor %+v, result %+v", len(got), d, res)
	}
}

// A retval that is killed (SIGKILL on Linux, TerminateProcess on
// Windows: nothing it can catch) takes the command with it: Linux's
// parent-death signal reaches the command, Windows' Job object its whole
// group.
func TestChildDiesWithRetval(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "windows" {
		t.Skip("no parent-death signal here: a killed retval leaves the command running (docs/exec.md)")
	}
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	args := childArgs(t, "runner", pids, filepath.Join(dir, "runs"))
	runner := exec.Command(args[0], args[1:]...)
	runner.Stderr = os.Stderr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	p := waitPIDs(t, pids)
	runner.Process.Kill()
	runner.Wait()
	waitGone(t, p[0], "the command")
	if runtime.GOOS == "windows" {
		waitGone(t, p[1], "its grandchild")
	} else if proc, err := os.FindProcess(p[1]); err == nil {
		proc.Kill() // orphaned, as by any parent's death
	}
}
