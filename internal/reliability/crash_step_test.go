package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestCrashResolveStep kills `retval resolve --step` at random points,
// twelve calls per step: a step never answers more than its 8 lookups, its
// ledger stays readable, and it never counts fewer lookups than were
// answered (the ledger is synced before any answer is printed). -short
// (and -race) runs 10 steps; the full run 40.
func TestCrashResolveStep(t *testing.T) {
	steps := 40
	if quick() {
		steps = 10
	}
	r := seeded(t)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	in := filepath.Join(dir, "in")
	os.WriteFile(in, bytes.Repeat([]byte("a line to look up\n"), 1000), 0o644)
	mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "r", "--call", "v", "--threshold", "0", in)
	var took time.Duration
	for range 3 {
		t0 := time.Now()
		mustRun(t, 0, "resolve", "--runs-dir", runs, "--run", "r", "v", "--lines", "1-1")
		took = max(took, time.Since(t0))
	}
	kill := newKiller(r, took)
	var killed, answered, refused int
	for s := range steps {
		step := fmt.Sprintf("s%d", s)
		ok := 0
		for range 12 {
			cmd := exec.Command(retval, "resolve", "--runs-dir", runs, "--run", "r", "v", "--lines", "1-1", "--step", step)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wasKilled := kill.kill(cmd)
			switch code := cmd.ProcessState.ExitCode(); {
			case wasKilled:
				killed++
			case code == 0:
				if out.String() != "a line to look up\n" {
					t.Fatalf("answer %q", out.String())
				}
				ok++
			case code == 5:
				refused++
			default:
				t.Fatalf("resolve --step exited %d", code)
			}
		}
		b, err := os.ReadFile(filepath.Join(runs, "r.values", ".steps", step+".json"))
		var led struct{ Lookups int }
		if err == nil {
			err = json.Unmarshal(b, &led)
		}
		switch {
		case err != nil && ok > 0:
			t.Fatalf("step %s answered %d lookups but its ledger is unreadable: %v", step, ok, err)
		case ok > 8:
			t.Fatalf("step %s answered %d lookups, more than 8", step, ok)
		case led.Lookups < ok:
			t.Fatalf("step %s answered %d lookups but its ledger counts %d", step, ok, led.Lookups)
		}
		answered += ok
		// The step still works: it answers exactly up to its budget.
		for led.Lookups < 8 {
			mustRun(t, 0, "resolve", "--runs-dir", runs, "--run", "r", "v", "--lines", "1-1", "--step", step)
			led.Lookups++
		}
		mustRun(t, 5, "resolve", "--runs-dir", runs, "--run", "r", "v", "--lines", "1-1", "--step", step)
	}
	t.Logf("%d steps × 12 calls: %d killed, %d answered, %d refused (budget); 0 over-spent, 0 unreadable ledgers", steps, killed, answered, refused)
	if killed == 0 {
		t.Fatal("no call was killed")
	}
}
