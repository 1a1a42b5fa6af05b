//go:build linux

package reliability

import (
	"bytes"
	"errors"
	"github.com/retval/retval/internal/testenv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fill writes a file until the file system is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// Whatever a page could not take, a byte at a time.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			break
		}
	}
	return p
}

// noisy is incompressible text-free bytes: zstd cannot shrink them.
func noisy(n int) []byte {
	r := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestFullDiskCLI fills a 1 MiB file system and checks each command on it:
// retain (plain and zstd) falls back to the verbatim input with a warning
// and no debris; verify still checks every value; resolve --step on a new
// step fails clearly before answering, and an existing step's ledger keeps
// counting in place, so the budget is never over-spent; gc still collects
// an idle run (freeing the disk) and old debris; then retain works again.
func TestFullDiskCLI(t *testing.T) {
	mnt := testenv.MountTiny(t, "1m")
	runs := filepath.Join(mnt, "runs")
	dir := t.TempDir()
	text := func(name string, n int) (string, []byte) {
		b := bytes.Repeat([]byte(name+" line on a small disk\n"), n/len(name+" line on a small disk\n")+1)[:n]
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p, b
	}
	oldPath, oldBody := text("old", 300<<10)
	keepPath, keepBody := text("keep", 100<<10)
	mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "old", "--call", "v", "--threshold", "0", oldPath)
	mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "keep", "--call", "v", "--threshold", "0", keepPath)
	// An existing step, its ledger written while there was room.
	mustRun(t, 0, "resolve", "--runs-dir", runs, "--run", "keep", "v", "--lines", "1-1", "--step", "s")
	ageTree(t, filepath.Join(runs, "old.values"), time.Now().Add(-40*24*time.Hour))
	debrisPath := filepath.Join(runs, "keep.values", ".tmp-dead-writer")
	os.WriteFile(debrisPath, []byte("debris"), 0o600)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(debrisPath, old, old)
	filler := fill(t, mnt)

	// retain: verbatim, warned, no debris — plain and zstd (the zstd
	// sink fails inside its frame writer).
	bigPath := filepath.Join(dir, "big")
	big := noisy(600 << 10)
	os.WriteFile(bigPath, big, 0o644)
	for _, comp := range []string{"none", "zstd"} {
		r := mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "keep", "--call", "big-"+comp, "--threshold", "0", "--compress", comp, bigPath)
		if !bytes.Equal(r.stdout, big) {
			t.Fatalf("retain --compress %s on a full disk printed %d bytes, want the %d of its input", comp, len(r.stdout), len(big))
		}
		if !bytes.Contains(r.stderr, []byte("no space left on device")) {
			t.Fatalf("retain --compress %s on a full disk: no warning: %s", comp, r.stderr)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(runs, "keep.values"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "big") || strings.HasPrefix(e.Name(), ".tmp-") && e.Name() != ".tmp-dead-writer" {
			t.Fatalf("left on the full disk: %s", e.Name())
		}
	}

	// verify reads everything and writes nothing.
	var vr verifyReport
	decode(t, mustRun(t, 0, "verify", "--runs-dir", runs, "--json").stdout, &vr)
	if vr.Values != 2 || vr.Corrupt+vr.Missing != 0 {
		t.Fatalf("verify on a full disk: %+v", vr)
	}

	// resolve --step: a new step cannot write its ledger, so nothing is
	// answered; the existing step counts on in place and stops at 8.
	for range 3 {
		r := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", "keep", "v", "--lines", "1-1", "--step", "new")
		if r.code != 1 || len(r.stdout) != 0 || !bytes.Contains(r.stderr, []byte("no space left on device")) {
			t.Fatalf("resolve on a new step, disk full: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
		}
	}
	answered := 1 // before the disk filled
	for range 10 {
		r := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", "keep", "v", "--lines", "1-1", "--step", "s")
		switch {
		case r.code == 0 && bytes.Equal(r.stdout, keepBody[:bytes.IndexByte(keepBody, '\n')+1]):
			answered++
		case r.code == 5:
		default:
			t.Fatalf("resolve on an existing step, disk full: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
		}
	}
	if answered != 8 {
		t.Fatalf("the step answered %d lookups, want exactly 8", answered)
	}

	// gc collects the idle run and the old debris, on the full disk.
	var rep gcReport
	res := retvalRun(t, nil, "gc", "--runs-dir", runs, "--json")
	decode(t, res.stdout, &rep)
	if res.code != 0 || len(rep.Removed) != 1 || rep.Removed[0].Run != "old" || len(rep.Debris) != 1 {
		t.Fatalf("gc on a full disk: exit %d, %+v\nstderr: %s", res.code, rep, res.stderr)
	}
	if r := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", "old", "v"); r.code != 3 {
		t.Fatalf("lookup in the run gc collected on a full disk: exit %d: %s", r.code, r.stderr)
	}
	_ = oldBody

	// Room again: retain stores, and the store is whole.
	os.Remove(filler)
	r := mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "keep", "--call", "after", "--threshold", "0", keepPath)
	if !bytes.HasPrefix(r.stdout, []byte("[retained #after]")) {
		t.Fatalf("retain after space was freed: %.200s", r.stdout)
	}
	decode(t, mustRun(t, 0, "verify", "--runs-dir", runs, "--grace", "0s", "--json").stdout, &vr)
	if vr.Values != 2 || vr.Corrupt+vr.Missing+vr.Debris != 0 {
		t.Fatalf("verify after the full disk: %+v", vr)
	}
}
