//go:build unix

package execute

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// fifo makes a FIFO a process can wait on, released at the end of the test.
func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Release whoever waits on it.
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return p
}

// A process the command left behind, out of its process group, holding
// the output pipe, does not keep the run waiting: the command's own exit
// ends it, with the command's status and what it printed.
func TestRunLeaderExitEndsRun(t *testing.T) {
	f := fifo(t)
	s, o := opts(t, "sh", "-c", `echo start; setsid cat "$0" >/dev/null & echo parent-done`, f)
	o.Retain.Limits.Threshold = -1
	o.Timeout = time.Hour
	var out bytes.Buffer
	o.Out = &out
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 0 || res.TimedOut || res.Stopped {
		t.Fatalf("status %d, timed out %v, stopped %v", res.Status, res.TimedOut, res.Stopped)
	}
	if got, _ := read(t, s, "c1"); got != "start\nparent-done\n" {
		t.Errorf("value %q", got)
	}
}

// A timeout bounds the run even when an escaped process holds the pipe:
// the command is killed, what it printed is kept.
func TestRunTimeoutBoundsEscaped(t *testing.T) {
	f := fifo(t)
	s, o := opts(t, "sh", "-c", `echo start; setsid cat "$0" >/dev/null & exec cat`, f)
	o.Retain.Limits.Threshold = -1
	o.Timeout = 50 * time.Millisecond
	stdin, w := io.Pipe() // never written: the command waits on it
	defer w.Close()
	o.Stdin = stdin
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusTimedOut || !res.TimedOut {
		t.Fatalf("status %d, timed out %v", res.Status, res.TimedOut)
	}
	// What it printed before the kill: "start", unless the timeout came
	// first on a loaded machine.
	if got, d := read(t, s, "c1"); !strings.HasPrefix("start\n", got) || !d.TimedOut {
		t.Errorf("value %q, %+v", got, d)
	}
}

// A max-value-size below the threshold does not cut an output the
// threshold shows whole.
func TestRunSmallMaxValueSizeShowsWhole(t *testing.T) {
	s, o := opts(t, "seq", "1", "30") // 81 bytes, threshold 100
	o.Retain.Limits.MaxValueSize = 10
	var out bytes.Buffer
	o.Out = &out
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 0 || res.Stopped || out.String() != seq(30) {
		t.Fatalf("status %d, stopped %v, out %q", res.Status, res.Stopped, out.String())
	}
	// Past the threshold, it is stopped and said not retained, not shown
	// cut as if whole.
	s, o = opts(t, "seq", "1", "100000")
	o.Retain.Limits.MaxValueSize = 10
	o.StopAtMaxValueSize = true
	out.Reset()
	o.Out = &out
	res, err = runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || out.Len() != 0 || res.Stdout.Verbatim || res.Stdout.NotRetained == "" {
		t.Fatalf("stopped %v, out %q, %+v", res.Stopped, out.String(), res.Stdout)
	}
}

// A run at its byte cap never stops the command (a build or a deploy
// must not be killed because retval's run is full): it runs to its end,
// what it does besides printing is done, and the model is shown a
// preview naming the limit that was hit. Before, it was SIGKILLed where
// the run's bytes ran out, and the stub blamed max-value-size.
func TestRunAtRunBytesRunsToItsEnd(t *testing.T) {
	side := filepath.Join(t.TempDir(), "side.txt")
	s, o := opts(t, "sh", "-c", `seq 1 10000; echo done >"$0"`, side)
	o.Retain.Limits.MaxRunBytes = 1000
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped || res.Status != 0 {
		t.Fatalf("stopped %v, status %d: the command was cut short", res.Stopped, res.Status)
	}
	if b, err := os.ReadFile(side); err != nil || string(b) != "done\n" {
		t.Fatalf("the command did not finish: %q, %v", b, err)
	}
	if res.Stdout.Retained || !strings.Contains(res.Stdout.Stub, "[not retained: run r would hold 48894 bytes, max-run-bytes is 1000]") {
		t.Fatalf("stub:\n%s", res.Stdout.Stub)
	}
	// The same for a value over the max value size nobody asked to stop
	// at (the default): the command runs on, the preview says why.
	s, o = opts(t, "sh", "-c", `seq 1 10000; echo done >"$0"`, side)
	os.Remove(side)
	o.Retain.Limits.MaxValueSize = 1000
	res, err = runGuarded(t, s, o)
	if err != nil || res.Stopped || res.Status != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(side); err != nil {
		t.Fatalf("the command did not finish: %v", err)
	}
	if !strings.Contains(res.Stdout.Stub, "[not retained: 48894 bytes exceed max-value-size 1000]") {
		t.Fatalf("stub:\n%s", res.Stdout.Stub)
	}
}

// With room for one value, stdout, the primary output, is retained and
// stderr goes through as it comes.
func TestRunOneValueLeftIsStdouts(t *testing.T) {
	s, o := opts(t, "sh", "-c", "seq 1 200; seq 1 200 >&2")
	o.Retain.Limits.MaxRunValues = 1
	o.Stderr = Separate
	var out, errOut bytes.Buffer
	o.Out, o.ErrOut = &out, &errOut
	res, err := runGuarded(t, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stdout.Retained || res.Stderr != nil || errOut.String() != seq(200) || res.Warning == nil {
		t.Fatalf("stdout %+v, stderr %+v, errOut %d bytes, warning %v", res.Stdout, res.Stderr, errOut.Len(), res.Warning)
	}
}

// A call id that names a value runs again: the same output is retained
// again (the same stub), another one is shown in full with a warning,
// not lost.
func TestRunCallTaken(t *testing.T) {
	s, o := opts(t, "seq", "1", "200")
	first, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, o)
	if err != nil || res.Stdout.Stub != first.Stdout.Stub {
		t.Fatalf("%+v, %v", res, err)
	}
	o.Args = []string{"seq", "2", "200"}
	var out bytes.Buffer
	o.Out = &out
	res, err = Run(s, o)
	if err != nil || !res.Stdout.Verbatim || res.Stdout.Warning == nil || out.String() != seq(200)[2:] {
		t.Fatalf("%+v, %v, out %d bytes", res.Stdout, err, out.Len())
	}
}

// A bounded run with no room for a value is refused before the command
// runs: its output would have nowhere to go.
func TestRunFullRunRefusedBeforeRunning(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	s, o := opts(t, "sh", "-c", `touch "$0"; seq 1 200`, marker)
	if _, err := Run(s, o); err != nil {
		t.Fatal(err)
	}
	os.Remove(marker)
	o.Retain.Call, o.Retain.Limits.MaxRunValues, o.Retain.Policy = "c2", 1, retain.PolicyBounded
	res, err := Run(s, o)
	if res != nil || retain.CodeOf(err) != retain.CodeCapacity || !strings.Contains(err.Error(), "did not run") {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A failure to write the output passed through stops reading it, so the
// command learns of it as in a pipeline, and is said.
func TestRunOffWriteError(t *testing.T) {
	s, o := opts(t, "yes")
	o.Off, o.Out = true, failWriter{}
	res, err := runGuarded(t, s, o)
	if err == nil || res == nil || res.Status != 128+int(syscall.SIGPIPE) {
		t.Fatalf("%+v, %v", res, err)
	}
}
