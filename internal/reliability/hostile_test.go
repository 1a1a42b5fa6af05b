//go:build linux

package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"
)

// The tests here run the binary on stores an adversary prepared: FIFOs,
// symlinks out of the store, devices, a read-only file system. Whatever
// is in the store, every command finishes, with bounded memory, and never
// changes anything outside the runs-dir.

// hangAfter turns a hang into a failure: no command here takes more than
// a second or two, even under the race detector on a loaded machine.
const hangAfter = 30 * time.Second

// runawayRSS is where the watchdog stops a process whose memory grows
// without end, so that a test of an unbounded read cannot take the
// machine down with it; the tests assert a far lower bound.
const runawayRSS = 1 << 30

// bounded is one finished process of runBounded.
type bounded struct {
	result
	args    []string
	hung    bool  // killed after hangAfter
	runaway bool  // killed past runawayRSS
	maxRSS  int64 // peak resident memory in bytes, when measured
}

// runBounded runs retval like retvalRun, but kills it when it has not
// finished within hangAfter or its memory passes runawayRSS.
func runBounded(t *testing.T, env []string, args ...string) bounded {
	t.Helper()
	return runWatched(t, false, env, args...)
}

// runMeasured is runBounded that also measures the peak resident memory.
// It runs retval under /usr/bin/time: the peak a direct child reports
// (wait4's ru_maxrss) includes the memory it shared with the test before
// its exec, so it would measure the test, not retval.
func runMeasured(t *testing.T, env []string, args ...string) bounded {
	t.Helper()
	return runWatched(t, true, env, args...)
}

func runWatched(t *testing.T, measure bool, env []string, args ...string) bounded {
	t.Helper()
	cmd := exec.Command(retval, args...)
	var peakFile string
	if measure {
		timeBin := "/usr/bin/time"
		if _, err := os.Stat(timeBin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("no /usr/bin/time to measure peak memory with (.ci/run installs it)")
			}
			t.Skip("needs /usr/bin/time to measure peak memory")
		}
		peakFile = filepath.Join(t.TempDir(), "peak")
		cmd = exec.Command(timeBin, append([]string{"-q", "-f", "%M", "-o", peakFile, retval}, args...)...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting retval %v: %v", args, err)
	}
	// kill ends retval, also under /usr/bin/time: a child is not reaped
	// before its parent waits for it, so its pid cannot have been reused.
	kill := func() {
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return // already waited for
		}
		for _, c := range children(cmd.Process.Pid) {
			syscall.Kill(c, syscall.SIGKILL)
		}
		cmd.Process.Kill()
	}
	var hung, runaway atomic.Bool
	done := make(chan struct{})
	go func() {
		deadline := time.NewTimer(hangAfter)
		defer deadline.Stop()
		watch := time.NewTicker(20 * time.Millisecond)
		defer watch.Stop()
		for {
			select {
			case <-done:
				return
			case <-deadline.C:
				hung.Store(true)
				kill()
				return
			case <-watch.C:
				if rss(cmd.Process.Pid) > runawayRSS {
					runaway.Store(true)
					kill()
					return
				}
			}
		}
	}()
	cmd.Wait()
	close(done)
	b := bounded{result: result{out.Bytes(), errb.Bytes(), cmd.ProcessState.ExitCode()}, args: args, hung: hung.Load(), runaway: runaway.Load()}
	if measure && !b.hung && !b.runaway {
		peak, err := os.ReadFile(peakFile)
		kib, perr := strconv.ParseInt(strings.TrimSpace(string(peak)), 10, 64)
		if err != nil || perr != nil {
			t.Fatalf("reading the peak memory of retval %v: %v %v %q", args, err, perr, peak)
		}
		b.maxRSS = kib << 10
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Exited() {
			b.code = ws.ExitStatus() // time exits with the command's status
		}
	}
	return b
}

// rss is the resident memory of process pid and of its children now, 0
// where it cannot be read.
func rss(pid int) int64 {
	var total int64
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				total += kb << 10
			}
		}
	}
	for _, c := range children(pid) {
		total += rss(c)
	}
	return total
}

// children lists the child processes of pid.
func children(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var out []int
	for _, c := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(c); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// finished asserts that b ended by itself with a documented exit status
// (SPEC §5); where it failed and oneLine is set, its stderr is the error
// line `retval: <command>: <what is wrong> (<code>)`, and at most a
// `hint:` line after it. It reports whether all that held.
func finished(t *testing.T, b bounded, oneLine bool) bool {
	t.Helper()
	switch {
	case b.hung:
		t.Errorf("retval %v hung: killed after %v", b.args, hangAfter)
	case b.runaway:
		t.Errorf("retval %v read without bound: killed past %d MiB resident", b.args, runawayRSS>>20)
	case b.code < 0 || b.code > 7:
		t.Errorf("retval %v: exit %d is not a documented status\nstderr: %s", b.args, b.code, b.stderr)
	case b.code != 0 && oneLine && errorLine(b.stderr) == "":
		t.Errorf("retval %v: exit %d without a one-line error: stderr %q", b.args, b.code, b.stderr)
	default:
		return true
	}
	return false
}

// errorLine is the error line of stderr, "" unless stderr is one line
// `retval: ...: ... (code)`, optionally followed by one `hint: ` line.
func errorLine(stderr []byte) string {
	s, ok := strings.CutSuffix(string(stderr), "\n")
	first, hint, two := strings.Cut(s, "\n")
	switch {
	case !ok || !strings.HasPrefix(first, "retval: ") || !strings.HasSuffix(first, ")"):
		return ""
	case two && (!strings.HasPrefix(hint, "hint: ") || strings.Contains(hint, "\n")):
		return ""
	}
	return first
}

// failsCorrupt asserts that b finished with the corrupt error (exit 1).
func failsCorrupt(t *testing.T, b bounded) {
	t.Helper()
	if finished(t, b, true) && (b.code != 1 || !strings.HasSuffix(errorLine(b.stderr), "(corrupt)")) {
		t.Errorf("retval %v: exit %d, stderr %q; want a one-line corrupt error (exit 1)", b.args, b.code, b.stderr)
	}
}

// succeeds asserts that b finished with exit 0 and printed want (if
// exact) or something containing want.
func succeeds(t *testing.T, b bounded, want []byte, exact bool) {
	t.Helper()
	if !finished(t, b, false) {
		return
	}
	switch {
	case b.code != 0:
		t.Errorf("retval %v: exit %d, want 0\nstderr: %s", b.args, b.code, b.stderr)
	case exact && !bytes.Equal(b.stdout, want):
		t.Errorf("retval %v printed %d bytes, want exactly the %d retained: %.300q", b.args, len(b.stdout), len(want), b.stdout)
	case !exact && !bytes.Contains(b.stdout, want):
		t.Errorf("retval %v: output lacks %.200q: %.1000s", b.args, want, b.stdout)
	}
}

// hostileFixture is a runs-dir with one run "r" of three values: good and
// v, small, and big, over 1 MiB so it has a .lines index.
type hostileFixture struct {
	runs, dir string            // the runs-dir, run r's directory
	inputs    map[string]string // value id → the file it was retained from
	data      map[string][]byte
}

func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	base := t.TempDir()
	fx := &hostileFixture{runs: filepath.Join(base, "runs"), inputs: map[string]string{}, data: map[string][]byte{}}
	fx.dir = filepath.Join(fx.runs, "r.values")
	var big bytes.Buffer
	for i := 1; big.Len() < 2<<20; i++ {
		fmt.Fprintf(&big, "big line %d %s\n", i, strings.Repeat("b", i%61))
	}
	for id, body := range map[string][]byte{
		"good": []byte("a good value\nof three lines\nthe end\n"),
		"v":    bytes.Repeat([]byte("a line of v\n"), 200),
		"big":  big.Bytes(),
	} {
		p := filepath.Join(base, id+".in")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		fx.inputs[id], fx.data[id] = p, body
		mustRun(t, 0, "retain", "--runs-dir", fx.runs, "--run", "r", "--call", id, "--threshold", "0", p)
	}
	if _, err := os.Lstat(filepath.Join(fx.dir, "big.lines")); err != nil {
		t.Fatalf("the big value has no line index: %v", err)
	}
	return fx
}

// run runs retval with --runs-dir set to the fixture's.
func (fx *hostileFixture) run(t *testing.T, args ...string) bounded {
	t.Helper()
	return runBounded(t, nil, append(args, "--runs-dir", fx.runs)...)
}

// measured is run, measuring the peak memory.
func (fx *hostileFixture) measured(t *testing.T, args ...string) bounded {
	t.Helper()
	return runMeasured(t, nil, append(args, "--runs-dir", fx.runs)...)
}

// lastLine is the number and text of the big value's last line.
func (fx *hostileFixture) lastLine() (int, []byte) {
	lines := bytes.Split(bytes.TrimSuffix(fx.data["big"], []byte("\n")), []byte("\n"))
	return len(lines), lines[len(lines)-1]
}

// goodStillReads: a value whose own files are whole reads back, whatever
// else of its run is hostile.
func (fx *hostileFixture) goodStillReads(t *testing.T) {
	t.Helper()
	succeeds(t, fx.run(t, "peek", "--run", "r", "good"), []byte("of three lines"), false)
	succeeds(t, fx.run(t, "resolve", "--run", "r", "good"), fx.data["good"], true)
}

// collectRun adds a run "gone" to the fixture, makes it idle for 40 days
// and lets gc collect it, so it leaves a tombstone; it returns the
// tombstone's path.
func (fx *hostileFixture) collectRun(t *testing.T) string {
	t.Helper()
	mustRun(t, 0, "retain", "--runs-dir", fx.runs, "--run", "gone", "--call", "x", "--threshold", "0", fx.inputs["good"])
	ageTree(t, filepath.Join(fx.runs, "gone.values"), time.Now().Add(-40*24*time.Hour))
	mustRun(t, 0, "gc", "--runs-dir", fx.runs)
	tomb := filepath.Join(fx.runs, ".retval", "tombstones", "gone.json")
	if _, err := os.Lstat(tomb); err != nil {
		t.Fatalf("gc left no tombstone for the run it collected: %v", err)
	}
	return tomb
}

// fifoIn replaces path with a FIFO.
func fifoIn(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFIFOsNeverHang puts a FIFO, in turn, in place of each file of a
// store that a command opens, and runs the commands that open it: each
// finishes with a documented status (corrupt where the FIFO is the value's
// own file), and a value whose own files are whole still reads back.
// Nothing opens a FIFO's other end, so any open or read of one that
// blocks hangs until the test kills it.
func TestFIFOsNeverHang(t *testing.T) {
	t.Run("descriptor", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		fifoIn(t, filepath.Join(fx.dir, "v.meta.json"))
		// A retain of a new call scans the run's descriptors for its
		// capacity rules: it must not block on the FIFO, and must not
		// lose its input.
		in := filepath.Join(t.TempDir(), "fresh")
		fresh := bytes.Repeat([]byte("a fresh value\n"), 50)
		os.WriteFile(in, fresh, 0o644)
		b := fx.run(t, "retain", "--run", "r", "--call", "fresh", "--threshold", "0", in)
		if finished(t, b, false) {
			switch {
			case b.code != 0:
				t.Errorf("retain beside a FIFO descriptor: exit %d: %s", b.code, b.stderr)
			case bytes.HasPrefix(b.stdout, []byte("[retained #fresh]")):
				succeeds(t, fx.run(t, "resolve", "--run", "r", "fresh"), fresh, true)
			case !bytes.Equal(b.stdout, fresh):
				t.Errorf("retain beside a FIFO descriptor printed neither its stub nor its input: %.300q", b.stdout)
			}
		}
		finished(t, fx.run(t, "catalogue", "--run", "r"), true)
		b = fx.run(t, "verify")
		if finished(t, b, false) && b.code != 1 {
			t.Errorf("verify of a store with a FIFO descriptor: exit %d, want 1\n%s%s", b.code, b.stdout, b.stderr)
		}
		failsCorrupt(t, fx.run(t, "peek", "--run", "r", "v"))
		fx.goodStillReads(t)
	})
	t.Run("content", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		fifoIn(t, filepath.Join(fx.dir, "v.txt"))
		failsCorrupt(t, fx.run(t, "peek", "--run", "r", "v"))
		failsCorrupt(t, fx.run(t, "resolve", "--run", "r", "v"))
		b := fx.run(t, "verify")
		if finished(t, b, false) && b.code != 1 {
			t.Errorf("verify of a store with a FIFO content file: exit %d, want 1\n%s%s", b.code, b.stdout, b.stderr)
		}
		// replay must not print a stub for a value that does not read
		// back; the text itself is always a right answer.
		b = fx.run(t, "replay", "--run", "r", "--call", "v", fx.inputs["v"])
		if finished(t, b, true) && b.code == 0 && !bytes.Equal(b.stdout, fx.data["v"]) {
			t.Errorf("replay of a value whose content is a FIFO printed other than its text: %.300q", b.stdout)
		}
		fx.goodStillReads(t)
	})
	t.Run("line-index", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		fifoIn(t, filepath.Join(fx.dir, "big.lines"))
		n, last := fx.lastLine()
		b := fx.run(t, "peek", "--run", "r", "big", "--lines", fmt.Sprintf("%d-%d", n, n))
		if finished(t, b, true) && b.code == 0 && !bytes.Contains(b.stdout, last) {
			t.Errorf("peek of the last line with a FIFO index printed other than it: %.300q", b.stdout)
		}
		finished(t, fx.run(t, "verify"), false)
		fx.goodStillReads(t)
	})
	t.Run("step-ledger", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		os.Mkdir(filepath.Join(fx.dir, ".steps"), 0o700)
		fifoIn(t, filepath.Join(fx.dir, ".steps", "S.json"))
		// A ledger that cannot be read cannot count the lookup: corrupt,
		// as for a symlinked ledger.
		failsCorrupt(t, fx.run(t, "resolve", "--run", "r", "good", "--lines", "1-1", "--step", "S"))
		fx.goodStillReads(t)
	})
	t.Run("activity", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		p := filepath.Join(fx.dir, ".activity")
		fifoIn(t, p)
		old := time.Now().Add(-2 * time.Hour) // so a read wants to touch it
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		fx.goodStillReads(t)
		succeeds(t, fx.run(t, "peek", "--run", "r", "v", "--lines", "1-2"), []byte("a line of v"), false)
	})
	t.Run("read-log", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		fifoIn(t, filepath.Join(fx.dir, ".reads"))
		// Every command that appends to the log, and the two that read it:
		// the reads answer, the log is refused.
		fx.goodStillReads(t)
		succeeds(t, fx.run(t, "peek", "--run", "r", "v", "--lines", "1-2"), []byte("a line of v"), false)
		in := filepath.Join(t.TempDir(), "fresh")
		fresh := bytes.Repeat([]byte("a fresh value\n"), 50)
		os.WriteFile(in, fresh, 0o644)
		succeeds(t, fx.run(t, "retain", "--run", "r", "--call", "fresh", "--threshold", "0", in), []byte("[retained #fresh]"), false)
		finished(t, fx.run(t, "catalogue", "--run", "r"), true)
		failsCorrupt(t, fx.run(t, "stats", "--run", "r"))
		finished(t, fx.run(t, "stats", "--all"), false)
		if b := fx.run(t, "verify"); finished(t, b, false) && b.code != 1 {
			t.Errorf("verify of a run whose read log is a FIFO: exit %d, want 1\n%s%s", b.code, b.stdout, b.stderr)
		}
	})
	t.Run("tombstone", func(t *testing.T) {
		t.Parallel()
		fx := newHostileFixture(t)
		fifoIn(t, fx.collectRun(t))
		finished(t, fx.run(t, "peek", "--run", "gone", "x"), true)
		finished(t, fx.run(t, "gc"), false)
		fx.goodStillReads(t)
	})
}

// TestNoUnboundedReads: a tombstone that is a symlink to /dev/zero, and a
// config file that is /dev/zero, are never read without bound: every
// command finishes with its peak memory well below what reading them
// whole would take.
func TestNoUnboundedReads(t *testing.T) {
	const limit = 64 << 20
	check := func(t *testing.T, b bounded) bool {
		t.Helper()
		if !finished(t, b, false) {
			return false
		}
		t.Logf("retval %v: exit %d, peak resident memory %.1f MiB", b.args[:2], b.code, float64(b.maxRSS)/(1<<20))
		if b.maxRSS >= limit {
			t.Errorf("retval %v: peak resident memory %d MiB, want < %d MiB", b.args, b.maxRSS>>20, limit>>20)
		}
		return true
	}
	t.Run("tombstone", func(t *testing.T) {
		fx := newHostileFixture(t)
		tomb := fx.collectRun(t)
		os.Remove(tomb)
		if err := os.Symlink("/dev/zero", tomb); err != nil {
			t.Fatal(err)
		}
		check(t, fx.measured(t, "peek", "--run", "gone", "x"))
		check(t, fx.measured(t, "gc"))
		fx.goodStillReads(t)
	})
	t.Run("read-log", func(t *testing.T) {
		fx := newHostileFixture(t)
		p := filepath.Join(fx.dir, ".reads")
		os.Remove(p)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"stats", "--run", "r"}, {"stats", "--all"}, {"verify"}, {"peek", "--run", "r", "good"}} {
			check(t, fx.measured(t, args...))
		}
		fx.goodStillReads(t)
	})
	t.Run("config", func(t *testing.T) {
		fx := newHostileFixture(t)
		for _, args := range [][]string{
			{"peek", "--run", "r", "good"},
			{"catalogue", "--all"},
			{"gc", "--dry-run"},
		} {
			b := fx.measured(t, append(args, "--config", "/dev/zero")...)
			if check(t, b) && b.code != 0 && errorLine(b.stderr) == "" {
				t.Errorf("retval %v --config /dev/zero: exit %d without a one-line error: %q", args, b.code, b.stderr)
			}
		}
	})
}

// outsideTree is a directory outside the runs-dir that an adversary
// links into it: gc must never change it.
type outsideTree struct{ dir string }

// newOutside makes a directory of files laid out like the runs-dir's own
// (.retval): a trash entry, an expired tombstone, plain files.
func newOutside(t *testing.T) *outsideTree {
	t.Helper()
	o := &outsideTree{dir: filepath.Join(t.TempDir(), "outside")}
	for rel, body := range map[string]string{
		"precious.txt":                                 "a file that is not the store's\n",
		"sub/deep.txt":                                 "deeper\n",
		"trash/r.values.0011223344556677/v.txt":        "looks like trash, is not\n",
		"tombstones/ancient.json":                      `{"run":"ancient","collected":"2000-01-01T00:00:00Z","values":1,"bytes":1}`,
		"old.values.8899aabbccddeeff/v.meta.json":      "{}",
		"tombstones/old.json":                          `{"run":"old","collected":"2000-01-01T00:00:00Z","values":1,"bytes":1}`,
		"runs-like/old.values/.tmp-v-123":              "debris that is not ours",
		"trash/gone.values.ffeeddccbbaa9988/.activity": "",
	} {
		p := filepath.Join(o.dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-400 * 24 * time.Hour)
	ageTree(t, o.dir, old)
	return o
}

// state lists every entry under the tree: path, type and content digest.
func (o *outsideTree) state(t *testing.T) string {
	t.Helper()
	var s strings.Builder
	err := filepath.WalkDir(o.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(o.dir, p)
		fmt.Fprintf(&s, "%s %v", rel, d.Type())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&s, " %s", sha(b)[:12])
		}
		s.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatalf("reading the outside tree: %v", err)
	}
	return s.String()
}

// TestGCNeverFollowsSymlinksOut: with .retval, .retval/trash, an entry of
// the trash, or .retval/tombstones a symlink to a directory outside the
// runs-dir, gc — given an idle run to collect and, where it can, an
// interrupted collection's trash to finish — removes, moves and writes
// nothing outside: the outside directory is exactly as it was, whatever
// gc's exit status.
func TestGCNeverFollowsSymlinksOut(t *testing.T) {
	// store makes a runs-dir with an idle run "old" (40 days) and a live
	// one "live"; it returns the runs-dir and its .retval.
	store := func(t *testing.T) (runs, top string) {
		t.Helper()
		runs = filepath.Join(t.TempDir(), "runs")
		in := filepath.Join(t.TempDir(), "in")
		os.WriteFile(in, bytes.Repeat([]byte("idle\n"), 100), 0o644)
		for _, run := range []string{"old", "live"} {
			mustRun(t, 0, "retain", "--runs-dir", runs, "--run", run, "--call", "v", "--threshold", "0", in)
		}
		ageTree(t, filepath.Join(runs, "old.values"), time.Now().Add(-40*24*time.Hour))
		return runs, filepath.Join(runs, ".retval")
	}
	link := func(t *testing.T, target, at string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(at), 0o700); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(at)
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, top, outside string)
	}{
		{".retval", func(t *testing.T, top, outside string) { link(t, outside, top) }},
		{".retval/trash", func(t *testing.T, top, outside string) {
			link(t, filepath.Join(outside, "trash"), filepath.Join(top, "trash"))
		}},
		{"trash entry", func(t *testing.T, top, outside string) {
			link(t, outside, filepath.Join(top, "trash", "old.values.0123456789abcdef"))
		}},
		{"symlink inside a trash entry", func(t *testing.T, top, outside string) {
			entry := filepath.Join(top, "trash", "older.values.fedcba9876543210")
			os.MkdirAll(entry, 0o700)
			os.WriteFile(filepath.Join(entry, "v.txt"), []byte("trash of ours\n"), 0o600)
			link(t, outside, filepath.Join(entry, "escape"))
			link(t, filepath.Join(outside, "precious.txt"), filepath.Join(entry, "v.meta.json"))
		}},
		{".retval/tombstones", func(t *testing.T, top, outside string) {
			link(t, filepath.Join(outside, "tombstones"), filepath.Join(top, "tombstones"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runs, top := store(t)
			out := newOutside(t)
			before := out.state(t)
			tc.plant(t, top, out.dir)
			for _, args := range [][]string{
				{"gc", "--runs-dir", runs},
				{"gc", "--runs-dir", runs, "--grace", "0s", "--max-age", "1s"},
			} {
				b := runBounded(t, nil, args...)
				finished(t, b, false)
				t.Logf("retval %v: exit %d\n%s%s", args, b.code, b.stdout, b.stderr)
			}
			if after := out.state(t); after != before {
				t.Fatalf("gc changed a directory outside the runs-dir through a symlinked %s:\nbefore:\n%s\nafter:\n%s", tc.name, before, after)
			}
		})
	}
}

// TestReadOnlyStore: on a read-only file system (a snapshot, a read-only
// bind mount) every command that only reads works, with the right output —
// even where a read would take a run's lock or stamp its .activity.
func TestReadOnlyStore(t *testing.T) {
	fx := newHostileFixture(t)
	// Idle for two hours: a read stamps .activity at most once an hour,
	// so every read here wants to.
	ageTree(t, fx.runs, time.Now().Add(-2*time.Hour))
	runs := testenv.MountReadOnly(t, fx.runs)
	run := func(args ...string) bounded { return runBounded(t, nil, append(args, "--runs-dir", runs)...) }
	n, last := fx.lastLine()

	var vr verifyReport
	if b := run("verify", "--json"); finished(t, b, false) {
		if b.code != 0 {
			t.Errorf("verify of a read-only store: exit %d\n%s%s", b.code, b.stdout, b.stderr)
		} else if decode(t, b.stdout, &vr); vr.Values != 3 || vr.Corrupt+vr.Missing != 0 {
			t.Errorf("verify of a read-only store: %+v, want 3 values and no problem", vr)
		}
	}
	succeeds(t, run("verify"), []byte("all good"), false)
	succeeds(t, run("peek", "--run", "r", "good"), []byte("of three lines"), false)
	succeeds(t, run("peek", "--run", "r", "big", "--lines", fmt.Sprintf("%d-%d", n, n)), last, false)
	succeeds(t, run("resolve", "--run", "r", "good"), fx.data["good"], true)
	succeeds(t, run("resolve", "--run", "r", "big", "--max-lookup-bytes", "0", "--max-step-bytes", "0"), fx.data["big"], true)
	succeeds(t, run("resolve", "--run", "r", "big", "--lines", fmt.Sprintf("%d-%d", n, n)), append(last, '\n'), true)
	b := run("catalogue", "--run", "r")
	for _, id := range []string{"good", "v", "big"} {
		succeeds(t, b, []byte(id), false)
	}
	succeeds(t, run("catalogue", "--all"), []byte("[1 run, 3 values"), false)
}

// TestNewRunDirIsDurable: after retain makes a new run's directory, it
// fsyncs the runs-dir that holds the directory's entry before it prints
// the stub: else a power loss could take a whole run whose stubs a model
// was shown. Checked on the system calls retain makes, under strace.
func TestNewRunDirIsDurable(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is not installed (.ci/run installs it)")
		}
		t.Skip("needs strace")
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o700); err != nil {
		t.Fatal(err)
	}
	runs, _ = filepath.EvalSymlinks(runs) // as strace shows paths
	in := filepath.Join(dir, "in")
	os.WriteFile(in, bytes.Repeat([]byte("durable\n"), 100), 0o644)
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-y", "-o", trace,
		"-e", "trace=fsync,fdatasync,mkdir,mkdirat,rename,renameat,renameat2,write",
		retval, "retain", "--runs-dir", runs, "--run", "fresh", "--call", "v", "--threshold", "0", in)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && bytes.Contains(ee.Stderr, []byte("ptrace")) {
			t.Skipf("strace cannot trace here: %s", ee.Stderr)
		}
		t.Fatalf("retain under strace: %v\n%s", err, out)
	}
	if !bytes.HasPrefix(out, []byte("[retained #v]")) {
		t.Fatalf("retain printed no stub: %.300q", out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	ev := parseTrace(string(b))
	mk := -1
	for i, e := range ev {
		if (e.call == "mkdir" || e.call == "mkdirat") && e.ok && e.path == filepath.Join(runs, "fresh.values") {
			mk = i
			break
		}
	}
	if mk < 0 {
		t.Fatalf("no mkdir of %s in the trace:\n%s", filepath.Join(runs, "fresh.values"), b)
	}
	stub := -1
	for i, e := range ev[mk:] {
		if e.call == "write" && e.fd == 1 {
			stub = mk + i
			break
		}
	}
	if stub < 0 {
		t.Fatalf("no write to stdout after the mkdir in the trace:\n%s", b)
	}
	for _, e := range ev[mk:stub] {
		if (e.call == "fsync" || e.call == "fdatasync") && e.ok && e.path == runs {
			return
		}
	}
	t.Fatalf("retain made %s/fresh.values and printed its stub without an fsync of %s between:\n%s", runs, runs, b)
}

// sysEvent is one finished system call of an strace -f -y log.
type sysEvent struct {
	call string
	path string // the path the call names: the fd's for fsync, the new entry's for mkdir
	fd   int    // the fd argument of write and fsync, else -1
	ok   bool   // it returned 0 or more
}

// parseTrace reads an `strace -f -qq -y -o FILE` log into its finished
// calls, in the order they returned; an unfinished call is joined with
// its resumption.
func parseTrace(log string) []sysEvent {
	pending := map[string]string{} // pid → start of an unfinished call
	var ev []sysEvent
	for _, line := range strings.Split(log, "\n") {
		pid, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		if start, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			pending[pid] = start
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			_, tail, ok := strings.Cut(rest, " resumed>")
			if !ok {
				continue
			}
			rest = pending[pid] + tail
			delete(pending, pid)
		}
		if e, ok := parseCall(rest); ok {
			ev = append(ev, e)
		}
	}
	return ev
}

// straceCall is one whole strace line: `name(args) = ret`, strace
// padding the space before `=` to a column on short lines.
var straceCall = regexp.MustCompile(`^(\w+)\((.*)\) +=  *(\S+)`)

// parseCall reads one whole strace line.
func parseCall(s string) (sysEvent, bool) {
	m := straceCall.FindStringSubmatch(s)
	if m == nil {
		return sysEvent{}, false
	}
	name, args := m[1], m[2]
	e := sysEvent{call: name, fd: -1, ok: !strings.HasPrefix(m[3], "-")}
	// fdpath reads `N<path>` at the start of a.
	fdpath := func(a string) (int, string) {
		n, p, _ := strings.Cut(a, "<")
		fd, err := strconv.Atoi(n)
		if err != nil {
			return -1, ""
		}
		return fd, p[:max(0, strings.Index(p, ">"))]
	}
	// quoted reads the first "..." in a.
	quoted := func(a string) string {
		_, q, _ := strings.Cut(a, `"`)
		q, _, _ = strings.Cut(q, `"`)
		return q
	}
	switch name {
	case "fsync", "fdatasync", "write":
		e.fd, e.path = fdpath(args)
	case "mkdir":
		e.path = quoted(args)
	case "mkdirat":
		// The directory argument is AT_FDCWD</cwd> or N</dir>.
		dirfd, _, _ := strings.Cut(args, ",")
		_, base, _ := strings.Cut(dirfd, "<")
		base = strings.TrimSuffix(base, ">")
		if p := quoted(args); filepath.IsAbs(p) {
			e.path = p
		} else {
			e.path = filepath.Join(base, p)
		}
	}
	return e, true
}

// TestParseTrace: the strace log reader sees calls whole, split across an
// unfinished and a resumed line, and padded to strace's column.
func TestParseTrace(t *testing.T) {
	log := `9245  mkdirat(AT_FDCWD</w>, "/r/runs/fresh.values", 0700) = 0
9245  fsync(8</r/runs> <unfinished ...>
9242  --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=9242, si_uid=0} ---
9246  mkdirat(7</r/runs>, "other.values", 0700) = -1 EEXIST (File exists)
9245  <... fsync resumed>)              = 0
9245  fsync(12</r/runs/fresh.values>)  = 0
9245  write(1<pipe:[583386]>, "[retained #v] 800 bytes, 100 lin"..., 967) = 967
`
	want := []sysEvent{
		{call: "mkdirat", path: "/r/runs/fresh.values", fd: -1, ok: true},
		{call: "mkdirat", path: "/r/runs/other.values", fd: -1, ok: false},
		{call: "fsync", path: "/r/runs", fd: 8, ok: true},
		{call: "fsync", path: "/r/runs/fresh.values", fd: 12, ok: true},
		{call: "write", path: "pipe:[583386]", fd: 1, ok: true},
	}
	got := parseTrace(log)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parsed\n%v\nwant\n%v", got, want)
	}
}
