//go:build unix

package execute

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// A large output is retained with its exit status; Run returns the stub.
func TestRunRetainsWithStatus(t *testing.T) {
	s, o := opts(t, "sh", "-c", "seq 1 200; echo oops >&2; exit 3")
	var out bytes.Buffer
	o.Out = &out
	res, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 3 || res.TimedOut || out.Len() != 0 || !res.Stdout.Retained {
		t.Fatalf("status %d, timed out %v, out %q, %+v", res.Status, res.TimedOut, out.String(), res.Stdout)
	}
	if !strings.Contains(res.Stdout.Stub, "complete, exit 3\n") {
		t.Errorf("stub does not say exit 3:\n%s", res.Stdout.Stub)
	}
	got, d := read(t, s, "c1")
	want := seq(200) + "oops\n"
	if got != want || d.ExitCode == nil || *d.ExitCode != 3 || !d.Complete {
		t.Errorf("value %q, descriptor %+v", got, d)
	}
}

// A small output is written as it is, nothing is stored, and the status
// is still the command's.
func TestRunSmallIsVerbatim(t *testing.T) {
	s, o := opts(t, "sh", "-c", "echo hi; exit 7")
	var out bytes.Buffer
	o.Out = &out
	res, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 7 || out.String() != "hi\n" || !res.Stdout.Verbatim || s.Taken("r", "c1") {
		t.Fatalf("status %d, out %q, %+v", res.Status, out.String(), res.Stdout)
	}
}

// stdin reaches the command.
func TestRunStdin(t *testing.T) {
	s, o := opts(t, "tr", "a-z", "A-Z")
	var out bytes.Buffer
	o.Out, o.Stdin = &out, strings.NewReader("hello\n")
	if _, err := Run(s, o); err != nil || out.String() != "HELLO\n" {
		t.Fatalf("%q, %v", out.String(), err)
	}
}

// A timeout kills the whole process group (the grandchild holding the
// pipe too: otherwise Run would never see the end of the output), keeps
// what was printed, and reports 124.
func TestRunTimeout(t *testing.T) {
	s, o := opts(t, "sh", "-c", "seq 1 100; sleep 1000 & sleep 1000; echo never")
	o.Timeout = 50 * time.Millisecond
	o.Retain.Limits.Threshold = retain.Unlimited // whatever was printed by then
	o.Out = io.Discard
	done := make(chan struct{})
	var res *Result
	var err error
	go func() { res, err = Run(s, o); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the timeout did not stop the command")
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusTimedOut || !res.TimedOut {
		t.Fatalf("%+v", res)
	}
	got, d := read(t, s, "c1")
	if !strings.HasPrefix(seq(100), got) || !d.TimedOut || *d.ExitCode != 124 {
		t.Errorf("value %q, descriptor %+v", got, d)
	}
	if !strings.Contains(res.Stdout.Stub, ", exit 124, timed out") {
		t.Errorf("stub:\n%s", res.Stdout.Stub)
	}
}

// A signal sent to retval reaches the command's group; the output so far
// is kept and the status is 128+N.
func TestRunForwardsSignals(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	s, o := opts(t, "sh", "-c", "seq 1 100; : > "+ready+"; exec sleep 1000")
	sigs := make(chan os.Signal, 1)
	o.Signals, o.Out = sigs, io.Discard
	done := make(chan struct{})
	var res *Result
	var err error
	go func() { res, err = Run(s, o); close(done) }()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sigs <- syscall.SIGTERM
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the signal did not reach the command")
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 128+int(syscall.SIGTERM) || res.TimedOut {
		t.Fatalf("%+v", res)
	}
	got, d := read(t, s, "c1")
	if !strings.HasSuffix(got, "99\n100\n") || *d.ExitCode != 143 {
		t.Errorf("value %q, descriptor %+v", got, d)
	}
}

// --tail keeps the last bytes, partial, with the exact count discarded.
func TestRunTail(t *testing.T) {
	s, o := opts(t, "seq", "1", "100000")
	o.Tail, o.Out = 200, io.Discard
	res, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	all := seq(100000)
	want := all[len(all)-200:]
	got, d := read(t, s, "c1")
	if got != want || d.Complete || d.OmittedBytes == nil || *d.OmittedBytes != int64(len(all)-200) {
		t.Fatalf("value %q, descriptor %+v", got, d)
	}
	if !strings.Contains(res.Stdout.Stub, "partial: retval kept the last 200 bytes, "+strconv.Itoa(len(all)-200)+" bytes discarded, exit 0") {
		t.Errorf("stub:\n%s", res.Stdout.Stub)
	}
	// An output within the tail is complete.
	s, o = opts(t, "seq", "1", "100")
	o.Tail, o.Out = 1000, io.Discard
	if _, err := Run(s, o); err != nil {
		t.Fatal(err)
	}
	if _, d := read(t, s, "c1"); !d.Complete || d.OmittedBytes != nil {
		t.Errorf("descriptor %+v", d)
	}
}

// A command that prints for ever is stopped at the max value size the
// caller chose; the value is its first bytes and the stub says so.
func TestRunStopsAtMaxValueSize(t *testing.T) {
	s, o := opts(t, "yes")
	o.Retain.Limits.MaxValueSize = 64 << 10
	o.Out, o.StopAtMaxValueSize = io.Discard, true
	res, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	got, d := read(t, s, "c1")
	if len(got) != 64<<10 || got[:4] != "y\ny\n" || !d.Stopped || d.Complete || !res.Stopped || res.Status != 128+int(syscall.SIGKILL) {
		t.Fatalf("%d bytes, descriptor %+v, result %+v", len(got), d, res)
	}
	if !strings.Contains(res.Stdout.Stub, "partial: stopped at max-value-size, the first 65536 bytes") {
		t.Errorf("stub:\n%s", res.Stdout.Stub)
	}
	// Exactly the limit is not stopped.
	s, o = opts(t, "head", "-c", "65536", "/dev/zero")
	o.Retain.Limits.MaxValueSize = 64 << 10
	o.Out, o.StopAtMaxValueSize = io.Discard, true
	if res, err := Run(s, o); err != nil || res.Stopped || res.Status != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	// With --tail, the command runs on and the tail is kept.
	s, o = opts(t, "head", "-c", "1000000", "/dev/zero")
	o.Retain.Limits.MaxValueSize = 64 << 10
	o.Tail, o.Out = 64<<10, io.Discard
	res, err = Run(s, o)
	if err != nil || res.Stopped || res.Status != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, d := read(t, s, "c1"); *d.OmittedBytes != 1000000-64<<10 {
		t.Errorf("descriptor %+v", d)
	}
}

// --stderr separate retains stderr as <call>.stderr.
func TestRunSeparateStderr(t *testing.T) {
	s, o := opts(t, "sh", "-c", "seq 1 100; seq 1 50 >&2; echo small")
	var errOut bytes.Buffer
	o.Stderr, o.Out, o.ErrOut = Separate, io.Discard, &errOut
	res, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := read(t, s, "c1")
	errs, d := read(t, s, "c1"+StderrSuffix)
	if !strings.HasSuffix(out, "100\nsmall\n") || strings.Count(out, "\n") != 101 || !strings.HasSuffix(errs, "49\n50\n") || *d.ExitCode != 0 {
		t.Fatalf("stdout %q, stderr %q", out, errs)
	}
	if res.Stderr == nil || !res.Stderr.Retained || !strings.HasPrefix(res.Stderr.Stub, "[retained #c1_stderr-") {
		t.Fatalf("%+v", res.Stderr)
	}
	// The stdout value names it, in its descriptor and its stub.
	id := res.Stderr.Descriptor.ID
	if _, d := read(t, s, "c1"); d.Stderr != id || !strings.Contains(res.Stdout.Stub, ", exit 0, stderr #"+string(id)+"\n") {
		t.Errorf("stdout's descriptor %+v, stub:\n%s", d, res.Stdout.Stub)
	}
	// A small stderr is not retained, and not named.
	s, o = opts(t, "sh", "-c", "seq 1 100; echo oops >&2")
	errOut.Reset()
	o.Stderr, o.Out, o.ErrOut = Separate, io.Discard, &errOut
	if res, err = Run(s, o); err != nil || errOut.String() != "oops\n" || strings.Contains(res.Stdout.Stub, "stderr #") {
		t.Fatalf("%+v, %v, stderr %q", res, err, errOut.String())
	}
}

// Without --call, a short call id unused in the run is picked.
func TestRunPicksCall(t *testing.T) {
	s, o := opts(t, "seq", "1", "100")
	o.Retain.Call, o.Out = "", io.Discard
	ids := []string{"xaaaaa", "xaaaaa", "xbbbbb"}
	o.NewCall = func() string { id := ids[0]; ids = ids[1:]; return id }
	res, err := Run(s, o)
	if err != nil || res.Call != "xaaaaa" {
		t.Fatalf("%+v, %v", res, err)
	}
	res, err = Run(s, o)
	if err != nil || res.Call != "xbbbbb" || !strings.HasPrefix(res.Stdout.Stub, "[retained #xbbbbb]") {
		t.Fatalf("%+v, %v", res, err)
	}
	if c := randomCall(); len(c) != 6 || c[0] != 'x' || strings.Trim(c[1:], callAlphabet) != "" {
		t.Errorf("random call id %q", c)
	}
}

// A command that cannot start did not run, and says so.
func TestRunNotFound(t *testing.T) {
	s, o := opts(t, "no-such-command-here")
	res, err := Run(s, o)
	if res != nil || retain.CodeOf(err) != retain.CodeUsage || !strings.Contains(err.Error(), "the command did not run") {
		t.Fatalf("%+v, %v", res, err)
	}
	_, o = opts(t)
	if _, err := Run(s, o); retain.CodeOf(err) != retain.CodeUsage {
		t.Fatalf("no command: %v", err)
	}
}

func TestTail(t *testing.T) {
	for _, writes := range [][]string{{"abc"}, {"abcdefgh"}, {"ab", "cd", "ef", "gh", "ij"}, {"abcd", "e"}, {"a", "bcdefghijklmnop", "q"}} {
		tl := newTail(4)
		all := ""
		for _, w := range writes {
			tl.Write([]byte(w))
			all += w
		}
		want := all[max(0, len(all)-4):]
		got, _ := io.ReadAll(tl.Reader())
		if string(got) != want || tl.Len() != int64(len(want)) {
			t.Errorf("%q: kept %q, want %q", writes, got, want)
		}
	}
}

// Gated off, the output goes straight through and nothing is stored.
func TestRunOff(t *testing.T) {
	s, o := opts(t, "sh", "-c", "seq 1 200; exit 4")
	var out bytes.Buffer
	o.Out, o.Off = &out, true
	res, err := Run(s, o)
	if err != nil || res.Status != 4 || out.String() != seq(200) || s.Taken("r", "c1") {
		t.Fatalf("%+v, %v, %d bytes", res, err, out.Len())
	}
}

// Without Out, an output small enough to be shown is discarded, as
// without ErrOut: Run does not write to a nil Writer.
func TestRunWithoutOut(t *testing.T) {
	s, o := opts(t, "echo", "small")
	res, err := runGuarded(t, s, o)
	if err != nil || res.Status != 0 || !res.Stdout.Verbatim {
		t.Fatalf("%+v, %v", res, err)
	}
}

// Exited is called once, when the command has exited, before Run
// returns: with --off too.
func TestRunCallsExited(t *testing.T) {
	for _, off := range []bool{false, true} {
		s, o := opts(t, "sh", "-c", "exit 3")
		o.Off = off
		calls := 0
		o.Exited = func() { calls++ }
		res, err := runGuarded(t, s, o)
		if err != nil || res.Status != 3 || calls != 1 {
			t.Fatalf("off %v: %+v, %v; Exited called %d times, want 1", off, res, err, calls)
		}
	}
}
