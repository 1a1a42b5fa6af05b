package retain

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Collection is retain's: a collector locks the store, and collects a run
// only as it was scanned, never one a writer holds or one that changed.
func TestCollectRun(t *testing.T) {
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("one"))
	l, err := s.LockCollector(true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if _, err := s.LockCollector(true); !errors.Is(err, ErrBusy) || CodeOf(err) != CodeBusy {
		t.Fatalf("a second collector: %v", err)
	}
	c, err := s.OpenCollection(true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ri, err := s.ScanRun("r")
	if err != nil {
		t.Fatal(err)
	}
	tomb := Tombstone{Run: "r", Collected: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Values: ri.Values, Bytes: ri.Bytes}

	// A writer holds the run: busy, nothing done.
	w, err := s.LockRun("r")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CollectRun(ri, tomb); !errors.Is(err, ErrBusy) {
		t.Fatalf("collect under a writer: %v", err)
	}
	w.Unlock()
	// A value arrived since the scan: changed, nothing done.
	retainAll(t, s, "r", "c2", []byte("two"))
	var changed *RunChangedError
	if err := c.CollectRun(ri, tomb); !errors.As(err, &changed) || changed.What != "c2.meta.json appeared" {
		t.Fatalf("collect of a changed run: %v", err)
	}
	if vals, err := s.Values("r"); err != nil || len(vals) != 2 {
		t.Fatal(vals, err)
	}
	// As scanned: collected whole, with its tombstone.
	if ri, err = s.ScanRun("r"); err != nil {
		t.Fatal(err)
	}
	if err := c.CollectRun(ri, tomb); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Values("r"); !errors.Is(err, ErrCollected) {
		t.Fatal(err)
	}
	if trash, err := c.Trash(); err != nil || len(trash) != 0 {
		t.Fatal(trash, err)
	}
	if err := c.CollectRun(ri, tomb); !errors.Is(err, ErrCollected) {
		t.Fatalf("collect of a collected run: %v", err)
	}
}

// RemoveDebris re-checks each entry under the run's lock: content whose
// descriptor arrived since the scan is a value now, and stays.
func TestRemoveDebris(t *testing.T) {
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("one"))
	dir := s.RunDir("r")
	old := time.Now().Add(-2 * time.Hour)
	for _, n := range []string{".tmp-x", "c9.txt", "c8.txt"} {
		os.WriteFile(filepath.Join(dir, n), []byte("xx"), 0o600)
		os.Chtimes(filepath.Join(dir, n), old, old)
	}
	ri, err := s.ScanRun("r")
	if err != nil {
		t.Fatal(err)
	}
	var debris []RunEntry
	for _, e := range ri.Entries {
		if e.Kind.Debris() {
			debris = append(debris, e)
		}
	}
	if len(debris) != 3 {
		t.Fatal(debris)
	}
	// c8's descriptor arrives after the scan.
	os.WriteFile(filepath.Join(dir, "c8.meta.json"), []byte("{}"), 0o600)
	c, err := s.OpenCollection(true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	removed, fails, err := c.RemoveDebris("r", debris, time.Now(), time.Hour)
	if err != nil || len(fails) != 0 {
		t.Fatal(fails, err)
	}
	for i, e := range debris {
		_, serr := os.Lstat(filepath.Join(dir, e.Name))
		if want := e.Name != "c8.txt"; removed[i] != want || (serr == nil) == want {
			t.Errorf("%s: removed %v (%v), want %v", e.Name, removed[i], serr, want)
		}
	}
}
