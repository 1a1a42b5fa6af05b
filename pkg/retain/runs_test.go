package retain

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"
)

func retainT(t *testing.T, s *Store, run, call string, body []byte) {
	t.Helper()
	L := DefaultLimits()
	L.Threshold = Unlimited
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(body), &out, RetainOptions{Run: run, Call: call, Limits: L, Policy: PolicyLegacy})
	if err != nil || !res.Retained {
		t.Fatalf("retain %s/%s: %v %+v", run, call, err, res)
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestScanRunKinds checks what every kind of entry is taken for: the rule
// gc deletes by, so a mistake here loses data.
func TestScanRunKinds(t *testing.T) {
	s := Open(t.TempDir())
	retainT(t, s, "r", "a", []byte("alpha\n"))
	retainT(t, s, "r", "b", bytes.Repeat([]byte("beta line\n"), 200000)) // > 1 MiB: has an index
	dir := s.RunDir("r")
	write(t, filepath.Join(dir, ".activity"), "")
	write(t, filepath.Join(dir, ".steps", "s1.json"), "{}")
	write(t, filepath.Join(dir, ".steps", ".tmp-s1.json-1"), "{}")
	write(t, filepath.Join(dir, ".tmp-c-1"), "x")
	write(t, filepath.Join(dir, "c.txt"), "orphan")
	write(t, filepath.Join(dir, "c.lines"), "orphan index")
	write(t, filepath.Join(dir, "a.txt.zst"), "stray copy")
	write(t, filepath.Join(dir, "README"), "stray")
	write(t, filepath.Join(dir, "bad name.txt"), "stray")
	write(t, filepath.Join(dir, "sub", "x"), "stray dir")
	if err := testenv.Symlink(t, "/etc/passwd", filepath.Join(dir, "d.meta.json")); err != nil {
		t.Fatal(err)
	}
	ri, err := s.ScanRun("r")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]EntryKind{}
	for _, e := range ri.Entries {
		got[e.Name] = e.Kind
	}
	want := map[string]EntryKind{
		".lock": KindOwn, ".activity": KindOwn, ".reads": KindOwn, ".steps": KindOwn, ".steps/s1.json": KindOwn,
		".steps/.tmp-s1.json-1": KindTemp, ".tmp-c-1": KindTemp,
		"a.txt": KindValue, "a.meta.json": KindValue, "b.txt": KindValue, "b.meta.json": KindValue, "b.lines": KindValue,
		"c.txt": KindOrphan, "c.lines": KindOrphan, "a.txt.zst": KindOrphan,
		"README": KindStray, "bad name.txt": KindStray, "sub": KindStray, "d.meta.json": KindStray,
	}
	for name, k := range want {
		if got[name] != k {
			t.Errorf("%s: kind %v, want %v", name, got[name], k)
		}
		delete(got, name)
	}
	for name, k := range got {
		t.Errorf("unexpected entry %s (%v)", name, k)
	}
	if ri.Values != 2 {
		t.Errorf("Values = %d, want 2", ri.Values)
	}
}

// TestRunBytesIsDuSb: a run's bytes are its apparent size as du -sb counts it.
func TestRunBytesIsDuSb(t *testing.T) {
	if _, err := exec.LookPath("du"); err != nil {
		t.Skip("no du")
	}
	s := Open(t.TempDir())
	retainT(t, s, "r", "a", bytes.Repeat([]byte("x\n"), 3000))
	retainT(t, s, "r", "b", bytes.Repeat([]byte("y\n"), 700000))
	write(t, filepath.Join(s.RunDir("r"), ".steps", "s.json"), `{"n":1}`)
	write(t, filepath.Join(s.RunDir("r"), "junk", "deep", "f"), "12345")
	ri, err := s.ScanRun("r")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("du", "-sb", s.RunDir("r")).Output()
	if err != nil {
		t.Fatal(err)
	}
	du, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if ri.Bytes != du {
		t.Errorf("Bytes = %d, du -sb says %d", ri.Bytes, du)
	}
}

// TestLastActivity: the newest mtime of the run's files, .activity and
// ledgers included, directories not (gc removing debris changes those).
func TestLastActivity(t *testing.T) {
	s := Open(t.TempDir())
	retainT(t, s, "r", "a", []byte("alpha\n"))
	dir := s.RunDir("r")
	old := time.Now().Add(-100 * time.Hour).Truncate(time.Second)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	ri, _ := s.ScanRun("r")
	if !ri.LastActivity.Equal(old) {
		t.Fatalf("LastActivity = %v, want %v", ri.LastActivity, old)
	}
	stamp := old.Add(50 * time.Hour)
	write(t, filepath.Join(dir, ".steps", "s.json"), "{}")
	os.Chtimes(filepath.Join(dir, ".steps", "s.json"), stamp, stamp)
	os.Chtimes(filepath.Join(dir, ".steps"), old, old)
	os.Chtimes(dir, time.Now(), time.Now())
	ri, _ = s.ScanRun("r")
	if !ri.LastActivity.Equal(stamp) {
		t.Fatalf("LastActivity = %v, want the ledger's %v", ri.LastActivity, stamp)
	}
}

// TestTouchHourly: opening a value stamps .activity, at most once an hour.
func TestTouchHourly(t *testing.T) {
	s := Open(t.TempDir())
	retainT(t, s, "r", "a", []byte("alpha\n"))
	act := filepath.Join(s.RunDir("r"), activityName)
	os.Remove(act)
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	s.Now = func() time.Time { return now }
	read := func() time.Time {
		t.Helper()
		v, err := s.OpenValue("r", "a")
		if err != nil {
			t.Fatal(err)
		}
		v.Close()
		fi, err := os.Stat(act)
		if err != nil {
			t.Fatalf("no .activity after a read: %v", err)
		}
		return fi.ModTime()
	}
	if got := read(); !got.Equal(t0) {
		t.Fatalf("first read stamped %v, want %v", got, t0)
	}
	now = t0.Add(59 * time.Minute)
	if got := read(); !got.Equal(t0) {
		t.Fatalf("a read within the hour restamped: %v", got)
	}
	now = t0.Add(61 * time.Minute)
	if got := read(); !got.Equal(now) {
		t.Fatalf("a read after an hour stamped %v, want %v", got, now)
	}
	// Listing is not reading.
	now = t0.Add(5 * time.Hour)
	if _, err := s.CataloguePage("r", 0, 0); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(act); !fi.ModTime().Equal(t0.Add(61 * time.Minute)) {
		t.Fatalf("catalogue stamped .activity")
	}
	ri, _ := s.ScanRun("r")
	if ri.LastActivity.Before(t0.Add(61 * time.Minute)) {
		t.Fatalf("LastActivity %v ignores the read stamp", ri.LastActivity)
	}
}

// TestRunsActive: Active is busy or within grace.
func TestRunsActive(t *testing.T) {
	s := Open(t.TempDir())
	retainT(t, s, "a", "x", []byte("1\n"))
	retainT(t, s, "b", "x", []byte("2\n"))
	old := time.Now().Add(-3 * time.Hour)
	filepath.Walk(s.RunDir("a"), func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	os.Mkdir(filepath.Join(s.Dir, "notarun"), 0o700)
	write(t, filepath.Join(s.Dir, "file.values"), "")
	runs, err := s.Runs(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Run != "a" || runs[1].Run != "b" {
		t.Fatalf("runs = %+v", runs)
	}
	if runs[0].Active || !runs[1].Active {
		t.Fatalf("active = %v %v, want false true", runs[0].Active, runs[1].Active)
	}
	l, err := s.LockRun("a")
	if err != nil {
		t.Fatal(err)
	}
	runs, _ = s.Runs(time.Hour)
	if !runs[0].Active || !runs[0].Busy {
		t.Fatalf("a locked run is not active: %+v", runs[0])
	}
	if _, err := s.LockRunExclusive("a"); err == nil {
		t.Fatal("exclusive lock taken while a writer holds it")
	}
	l.Unlock()
	x, err := s.LockRunExclusive("a")
	if err != nil {
		t.Fatal(err)
	}
	x.Unlock()
}
