package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// The store TestCrashGC collects: old runs (idle 40 days) of a few values
// each, some large enough for a line index, some zstd, some with a step
// ledger; and live runs that gc must leave whole, with old debris that it
// removes.
const (
	gcOldRuns  = 24
	gcLiveRuns = 3
)

type gcFixture struct {
	dir    string            // template runs-dir
	inputs map[string][]byte // value id → bytes (ids are unique across runs)
	runs   map[string][]string
}

func buildGCFixture(t *testing.T) *gcFixture {
	t.Helper()
	fx := &gcFixture{dir: filepath.Join(t.TempDir(), "template"), inputs: map[string][]byte{}, runs: map[string][]string{}}
	s := retain.Open(fx.dir)
	L := retain.DefaultLimits()
	L.Threshold, L.MaxValueSize, L.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
	put := func(run, call string, body []byte, comp string) {
		var out bytes.Buffer
		res, err := s.Retain(bytes.NewReader(body), &out, retain.RetainOptions{Run: run, Call: call, Limits: L, Policy: retain.PolicyLegacy, Compress: comp})
		if err != nil || !res.Retained {
			t.Fatalf("building the fixture: %v %+v", err, res)
		}
		fx.inputs[call] = body
		fx.runs[run] = append(fx.runs[run], call)
	}
	body := func(tag string, n int) []byte {
		var b bytes.Buffer
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%s line %d %s\n", tag, i, strings.Repeat("·", i%50))
		}
		return b.Bytes()[:n]
	}
	for i := range gcOldRuns {
		run := fmt.Sprintf("old%02d", i)
		put(run, run+"-a", body(run+"a", 30<<10), "none")
		put(run, run+"-b", body(run+"b", 90<<10), []string{"none", "zstd"}[i%2])
		if i%4 == 0 {
			put(run, run+"-c", body(run+"c", 1200<<10), []string{"none", "zstd"}[i/4%2])
		}
		if i%3 == 0 {
			steps := filepath.Join(s.RunDir(retain.ID(run)), ".steps")
			os.Mkdir(steps, 0o700)
			os.WriteFile(filepath.Join(steps, "s.json"), []byte(`{"step":"s","lookups":1,"bytes":10}`), 0o600)
		}
	}
	for i := range gcLiveRuns {
		run := fmt.Sprintf("live%d", i)
		put(run, run+"-a", body(run, 50<<10), "none")
		os.WriteFile(filepath.Join(s.RunDir(retain.ID(run)), ".tmp-dead-writer"), []byte("debris"), 0o600)
	}
	return fx
}

// instantiate copies the template to a fresh runs-dir and sets its clock:
// old runs idle 40 days, live runs just written, their debris 2 hours old.
func (fx *gcFixture) instantiate(t *testing.T, runs string) {
	t.Helper()
	copyTree(t, fx.dir, runs)
	now := time.Now()
	for run := range fx.runs {
		dir := filepath.Join(runs, run+".values")
		if strings.HasPrefix(run, "old") {
			ageTree(t, dir, now.Add(-40*24*time.Hour))
		} else {
			old := now.Add(-2 * time.Hour)
			os.Chtimes(filepath.Join(dir, ".tmp-dead-writer"), old, old)
		}
	}
}

// reage makes the old runs still present idle again after a check read them.
func (fx *gcFixture) reage(t *testing.T, runs string) {
	t.Helper()
	for run := range fx.runs {
		dir := filepath.Join(runs, run+".values")
		if _, err := os.Lstat(dir); err == nil && strings.HasPrefix(run, "old") {
			ageTree(t, dir, time.Now().Add(-40*24*time.Hour))
		}
	}
}

// gcState is what a check of the store after a kill found.
type gcState struct {
	collected, whole, tombstonedWhole, trash int
}

// checkAfterGC asserts the store's promises while (or after) gc works on
// it: every descriptor has its whole content; every old run is either
// whole or gone with a tombstone, and a lookup in it either succeeds with
// the retained bytes or says collected; live runs are whole.
func (fx *gcFixture) checkAfterGC(t *testing.T, runs string) gcState {
	t.Helper()
	checkStore(t, runs, fx.inputs)
	s := retain.Open(runs)
	var st gcState
	for run, ids := range fx.runs {
		dir := filepath.Join(runs, run+".values")
		_, err := os.Lstat(dir)
		_, tomb := s.ReadTombstone(retain.ID(run))
		if errors.Is(err, os.ErrNotExist) {
			if !tomb {
				t.Fatalf("run %s is gone without a tombstone", run)
			}
			if strings.HasPrefix(run, "live") {
				t.Fatalf("live run %s was collected", run)
			}
			for _, id := range ids {
				if _, err := s.OpenValue(run, id); !errors.Is(err, retain.ErrCollected) {
					t.Fatalf("%s/%s after collection: %v, want collected", run, id, err)
				}
			}
			st.collected++
			continue
		}
		// Present: whole, every value readable and exact (checkStore
		// checked the bytes of every descriptor; here: none is missing).
		for _, id := range ids {
			if _, err := os.Lstat(filepath.Join(dir, id+".meta.json")); err != nil {
				t.Fatalf("run %s is present but lost value %s: %v", run, id, err)
			}
		}
		st.whole++
		if tomb {
			st.tombstonedWhole++
		}
	}
	if ents, err := os.ReadDir(filepath.Join(runs, ".retval", "trash")); err == nil {
		st.trash = len(ents)
	}
	return st
}

// lookupOne resolves the first value of run through the CLI: it must
// print exactly the retained bytes, or fail with collected (exit 3).
func (fx *gcFixture) lookupOne(t *testing.T, runs, run string) {
	t.Helper()
	id := fx.runs[run][0]
	r := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", run, id, "--max-lookup-bytes", "0", "--max-step-bytes", "0")
	switch {
	case r.code == 0 && bytes.Equal(r.stdout, fx.inputs[id]):
	case r.code == 3 && bytes.Contains(r.stderr, []byte("(collected)\n")):
	default:
		t.Fatalf("resolve %s/%s: exit %d, %d bytes out (want %d), stderr %s", run, id, r.code, len(r.stdout), len(fx.inputs[id]), r.stderr)
	}
}

// TestCrashGC kills `retval gc` with SIGKILL at random points while it
// collects 24 old runs and the debris of 3 live ones, checks the store
// after each kill (see checkAfterGC), then lets the next gc finish the job:
// every old run gone with a tombstone, live runs whole, nothing left in
// .retval but gc's lock and the tombstones, verify clean. -short (and
// -race) runs 20 iterations; the full run 100.
func TestCrashGC(t *testing.T) {
	iters := 100
	if quick() {
		iters = 20
	}
	r := seeded(t)
	fx := buildGCFixture(t)
	base := t.TempDir()

	// Calibrate: how long an uninterrupted gc of this store takes here.
	cal := filepath.Join(base, "calibrate")
	fx.instantiate(t, cal)
	start := time.Now()
	var rep gcReport
	decode(t, mustRun(t, 0, "gc", "--runs-dir", cal, "--json").stdout, &rep)
	took := time.Since(start)
	if len(rep.Removed) != gcOldRuns || len(rep.Debris) != gcLiveRuns {
		t.Fatalf("an uninterrupted gc removed %d runs and %d debris files, want %d and %d", len(rep.Removed), len(rep.Debris), gcOldRuns, gcLiveRuns)
	}
	fx.checkAfterGC(t, cal)
	os.RemoveAll(cal)

	kill := newKiller(r, took)
	var killed, finished, partial, collectedAtKill, trashLeft, tombWhole int
	for i := range iters {
		runs := filepath.Join(base, fmt.Sprintf("runs%d", i))
		fx.instantiate(t, runs)
		cmd := exec.Command(retval, "gc", "--runs-dir", runs, "--json")
		cmd.Stdout = new(bytes.Buffer)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Anywhere from start-up to a little past the usual end.
		if kill.kill(cmd) {
			killed++
		} else if cmd.ProcessState.ExitCode() == 0 {
			finished++
		} else {
			t.Fatalf("gc exited %d before its kill: %s", cmd.ProcessState.ExitCode(), cmd.Stdout)
		}
		st := fx.checkAfterGC(t, runs)
		if st.collected > 0 && st.collected < gcOldRuns {
			partial++
		}
		collectedAtKill += st.collected
		trashLeft += st.trash
		tombWhole += st.tombstonedWhole
		old := fmt.Sprintf("old%02d", r.IntN(gcOldRuns))
		fx.lookupOne(t, runs, old)
		// The checks read the runs, which marks them active (a run in
		// use is not idle): make those reads 40 days old.
		fx.reage(t, runs)

		// The next gc finishes the job.
		var rep gcReport
		decode(t, mustRun(t, 0, "gc", "--runs-dir", runs, "--json").stdout, &rep)
		if len(rep.Failed) != 0 {
			t.Fatalf("the gc after the kill failed: %+v", rep.Failed)
		}
		st = fx.checkAfterGC(t, runs)
		if st.collected != gcOldRuns || st.whole != gcLiveRuns || st.trash != 0 {
			t.Fatalf("after the next gc: %+v, want %d collected, %d whole, empty trash; its report: %+v", st, gcOldRuns, gcLiveRuns, rep)
		}
		checkStoreDir(t, runs)
		var vr verifyReport
		decode(t, mustRun(t, 0, "verify", "--runs-dir", runs, "--grace", "0s", "--json").stdout, &vr)
		if vr.Runs != gcLiveRuns || vr.Values != gcLiveRuns || vr.Corrupt+vr.Missing+vr.Debris != 0 {
			t.Fatalf("verify after the next gc: %+v", vr)
		}
		fx.lookupOne(t, runs, old)
		os.RemoveAll(runs)
	}
	t.Logf("an uninterrupted gc took %v; %d iterations: %d killed, %d finished; %d kills mid-collection (some runs gone, some not), "+
		"%d runs collected at the kills in all, %d runs left in the trash, %d whole runs already tombstoned; after the next gc: 0 lost, 0 leftovers, verify clean",
		took, iters, killed, finished, partial, collectedAtKill, trashLeft, tombWhole)
	if killed == 0 {
		t.Fatal("no gc was killed: the kill points missed")
	}
}

// checkStoreDir asserts that gc left nothing in the runs-dir's own
// directory but its lock, an empty trash and whole tombstones.
func checkStoreDir(t *testing.T, runs string) {
	t.Helper()
	top := filepath.Join(runs, ".retval")
	ents, err := os.ReadDir(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch e.Name() {
		case "gc.lock":
		case "trash":
			if sub, _ := os.ReadDir(filepath.Join(top, "trash")); len(sub) != 0 {
				t.Fatalf("trash left after gc: %v", sub)
			}
		case "tombstones":
			sub, _ := os.ReadDir(filepath.Join(top, "tombstones"))
			for _, f := range sub {
				if !strings.HasSuffix(f.Name(), ".json") || strings.HasPrefix(f.Name(), ".tmp-") {
					t.Fatalf("left in tombstones: %s", f.Name())
				}
			}
		default:
			if !slices.Contains([]string{"gc.lock", "trash", "tombstones"}, e.Name()) {
				t.Fatalf("left in %s: %s", ".retval", e.Name())
			}
		}
	}
}
