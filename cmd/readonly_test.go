package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

// TestReadOnlyStoreStepsAndGC: on a store nobody can write (a read-only
// bind mount, which root cannot write either), resolve --step answers,
// counting the step for the call alone from what its ledger recorded and
// saying so on stderr; gc fails with read_only (exit 1) and says what to
// do; gc --dry-run plans.
func TestReadOnlyStoreStepsAndGC(t *testing.T) {
	dir := storeWithValue(t)
	for range 2 {
		if code, _, stderr := run(t, "", "resolve", "--run", "r1", "c1", "--lines", "1-1", "--step", "old"); code != 0 {
			t.Fatalf("resolve --step on the writable store: exit %d: %s", code, stderr)
		}
	}
	if code, _, stderr := run(t, "", "gc"); code != 0 { // makes .retval and its lock
		t.Fatalf("gc on the writable store: exit %d: %s", code, stderr)
	}
	ro := testenv.MountReadOnly(t, dir)
	t.Setenv("RETVAL_RUNS_DIR", ro)

	code, stdout, stderr := run(t, "", "resolve", "--run", "r1", "c1", "--lines", "2-2", "--step", "new")
	want := "retval: resolve: warning: " + filepath.Join(ro, "r1.values") + " cannot be written (read-only file system): step \"new\" is counted for this call alone, from what its ledger recorded; nothing can carry it to the next call\n"
	if code != 0 || stdout != "line xx\n" || stderr != want {
		t.Fatalf("resolve --step on a read-only store: exit %d, stdout %q, stderr %q; want the line and %q", code, stdout, stderr, want)
	}
	// Step "old" spent 2 of its 8 lookups while the store was writable.
	refs := func(n int) string {
		return "[" + strings.Repeat(`{"$ref": "c1", "lines": [1, 1]},`, n-1) + `{"$ref": "c1", "lines": [1, 1]}]`
	}
	if code, _, stderr := run(t, refs(7), "resolve", "--run", "r1", "--batch", "--step", "old"); code != 5 || !strings.Contains(stderr, "has 6 of its 8 lookups left") {
		t.Fatalf("7 lookups in a step that has 6 left: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run(t, refs(6), "resolve", "--run", "r1", "--batch", "--step", "old"); code != 0 || strings.Count(stdout, `"ok":true`) != 6 {
		t.Fatalf("6 lookups in a step that has 6 left: exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "r1.values", ".steps", "new.json")); !os.IsNotExist(err) {
		t.Fatalf("a ledger was written on the read-only store: %v", err)
	}

	code, _, stderr = run(t, "", "gc")
	want = "retval: gc: the runs-dir " + ro + " cannot be written (read-only file system): gc can collect nothing there; run it where the store is writable (gc --dry-run shows what it would do) (read_only)\n"
	if code != 1 || stderr != want {
		t.Fatalf("gc on a read-only store: exit %d, stderr %q; want %q", code, stderr, want)
	}
	code, stdout, _ = run(t, "", "gc", "--json")
	var e struct{ Error struct{ Code string } }
	if code != 1 || json.Unmarshal([]byte(stdout), &e) != nil || e.Error.Code != "read_only" {
		t.Fatalf("gc --json on a read-only store: exit %d, %s", code, stdout)
	}
	if code, stdout, stderr := run(t, "", "gc", "--dry-run"); code != 0 || !strings.HasPrefix(stdout, "would remove 0 runs") {
		t.Fatalf("gc --dry-run on a read-only store: exit %d: %s%s", code, stdout, stderr)
	}
}
