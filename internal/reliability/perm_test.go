//go:build linux

package reliability

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestForeignRunCLI: a run directory that belongs to another user (made
// with chown, as root) is never written into, read, or removed. retain
// prints its input instead; peek, resolve (with and without --step) and
// verify --run refuse it with corrupt; verify of the whole store reports it
// and checks the other runs; gc skips it, says why, and still collects the
// other idle runs.
func TestForeignRunCLI(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a run directory to another user")
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	in := filepath.Join(dir, "in.txt")
	var b bytes.Buffer
	for i := range 3000 {
		b.WriteString("line of a value that another user owns ")
		b.WriteString(string(rune('a' + i%26)))
		b.WriteByte('\n')
	}
	os.WriteFile(in, b.Bytes(), 0o644)
	for _, run := range []string{"foreign", "idle", "mine"} {
		mustRun(t, 0, "retain", "--runs-dir", runs, "--run", run, "--call", "v", "--threshold", "0", in)
	}
	fdir := filepath.Join(runs, "foreign.values")
	before := snapshot(t, fdir)
	for _, p := range append([]string{fdir}, listFiles(t, fdir)...) {
		if err := os.Lchown(p, 4242, 4242); err != nil {
			t.Skipf("chown: %v", err)
		}
	}
	old := time.Now().Add(-40 * 24 * time.Hour)
	ageTree(t, fdir, old)
	ageTree(t, filepath.Join(runs, "idle.values"), old)
	refused := []byte("belongs to uid 4242, not to us")

	r := mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "foreign", "--call", "w", "--threshold", "0", in)
	if !bytes.Equal(r.stdout, b.Bytes()) || !bytes.Contains(r.stderr, refused) {
		t.Fatalf("retain into a foreign run: %d bytes out, stderr %s", len(r.stdout), r.stderr)
	}
	for _, args := range [][]string{
		{"peek", "--run", "foreign", "v"},
		{"resolve", "--run", "foreign", "v", "--lines", "1-1"},
		{"resolve", "--run", "foreign", "v", "--lines", "1-1", "--step", "s"},
		{"catalogue", "--run", "foreign"},
		{"verify", "--run", "foreign"},
	} {
		r := retvalRun(t, nil, append(args, "--runs-dir", runs)...)
		if r.code != 1 || len(r.stdout) != 0 || !bytes.Contains(r.stderr, refused) || !bytes.HasSuffix(bytes.TrimSpace(r.stderr), []byte("(corrupt)")) {
			t.Fatalf("retval %v on a foreign run: exit %d, stdout %q, stderr %s", args, r.code, r.stdout, r.stderr)
		}
	}

	// verify of the whole store reports the foreign run and checks the rest.
	var vr verifyReport
	r = retvalRun(t, nil, "verify", "--runs-dir", runs, "--json")
	decode(t, bytes.SplitN(r.stdout, []byte("\n"), 2)[0], &vr)
	if r.code != 1 || vr.Values != 2 || vr.Corrupt != 1 || len(vr.Problems) != 1 || vr.Problems[0].Run != "foreign" {
		t.Fatalf("verify of a store with a foreign run: exit %d, %+v", r.code, vr)
	}

	// gc leaves the foreign run alone, says so, and collects the idle one.
	var rep gcReport
	decode(t, mustRun(t, 0, "gc", "--runs-dir", runs, "--json").stdout, &rep)
	if len(rep.Removed) != 1 || rep.Removed[0].Run != "idle" || len(rep.Skipped) != 1 || rep.Skipped[0].Run != "foreign" || rep.Skipped[0].Reason != "refused" {
		t.Fatalf("gc of a store with a foreign run: %+v", rep)
	}
	r = mustRun(t, 0, "gc", "--runs-dir", runs, "--grace", "0s", "--max-age", "0", "--keep-runs", "1")
	if !bytes.Contains(r.stdout, []byte("skipped run foreign (refused): ")) {
		t.Fatalf("gc does not say it skipped the foreign run: %s", r.stdout)
	}
	if after := snapshot(t, fdir); after != before {
		t.Fatalf("the foreign run changed:\nbefore %s\nafter  %s", before, after)
	}
	mustRun(t, 0, "resolve", "--runs-dir", runs, "--run", "mine", "v", "--lines", "1-1")
}

// listFiles lists the paths under dir (not dir itself).
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && p != dir {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// snapshot describes every file under dir: name, size and content digest.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var s bytes.Buffer
	for _, p := range listFiles(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		s.WriteString(rel + ":" + sha(b)[:12] + " ")
	}
	return s.String()
}
