package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// result is one finished retval process.
type result struct {
	stdout, stderr []byte
	code           int
}

// retvalRun runs the binary with args and returns its output and exit
// status; it fails the test only when the process cannot be run at all.
func retvalRun(t testing.TB, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(retval, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running retval %v: %v", args, err)
	}
	return result{out.Bytes(), errb.Bytes(), cmd.ProcessState.ExitCode()}
}

// mustRun is retvalRun that fails the test unless the exit status is want.
func mustRun(t testing.TB, want int, args ...string) result {
	t.Helper()
	r := retvalRun(t, nil, args...)
	if r.code != want {
		t.Fatalf("retval %v: exit %d, want %d\nstdout: %.2000s\nstderr: %s", args, r.code, want, r.stdout, r.stderr)
	}
	return r
}

// decode parses JSON output into v, failing the test on bad JSON.
func decode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("bad JSON output: %v\n%.2000s", err, b)
	}
}

// verifyReport is `retval verify --json`'s report.
type verifyReport struct {
	Runs, Values             int
	Corrupt, Missing, Debris int
	Problems                 []struct{ Run, File, Kind, Message string }
}

// gcReport is the part of `retval gc --json` the tests look at.
type gcReport struct {
	Removed []struct{ Run string }
	Skipped []struct{ Run, Rule, Reason string }
	Debris  []struct{ Path, Kind string }
	Trash   []struct{ Path string }
	Failed  []struct{ Run, Path, Error string }
}

// copyTree copies the regular files and directories under src to dst,
// keeping their modes.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, fi.Mode().Perm())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ageTree sets the modification time of everything under dir to at.
func ageTree(t testing.TB, dir string, at time.Time) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seeded returns a random source and logs its seed; RETVAL_TEST_SEED
// replays a run.
func seeded(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RETVAL_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay with RETVAL_TEST_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 1))
}

// killer chooses when a crash test SIGKILLs the process it started: at a
// random point below a bound, first a little past how long an
// uninterrupted run took. A process that finished before its kill point
// halves the bound, down to a kill right after the start, and a kill that
// landed lets it grow back: a calibration slowed by a loaded machine, or a
// machine that got faster, still gets its kills. Which stage each kill
// hits is left to chance; that a test kills at all is not.
type killer struct {
	r          *rand.Rand
	max, bound time.Duration
}

func newKiller(r *rand.Rand, took time.Duration) *killer {
	return &killer{r: r, max: took * 13 / 10, bound: took * 13 / 10}
}

// next is the next kill point.
func (k *killer) next() time.Duration {
	if k.bound <= 0 {
		return 0
	}
	return time.Duration(k.r.Int64N(int64(k.bound) + 1))
}

// landed reports how the last kill went: killed, or finished first.
func (k *killer) landed(killed bool) {
	if killed {
		k.bound = min(k.max, k.bound*5/4+time.Millisecond)
	} else {
		k.bound /= 2
		if k.bound < 100*time.Microsecond {
			k.bound = 0
		}
	}
}

// kill sends SIGKILL to cmd after the next kill point (at once for a
// point of 0), waits for it and reports whether the kill ended it.
func (k *killer) kill(cmd *exec.Cmd) (killed bool) {
	if d := k.next(); d > 0 {
		time.Sleep(d)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
	k.landed(killed)
	return killed
}
