package retain

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"

	"github.com/retval/retval/internal/fsx"
)

// within fails the test if f does not return within a minute: a hang
// becomes a failure instead of a stuck test binary.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute", what)
	}
}

// lookupCode is the code a lookup in a missing run gets.
func lookupCode(t *testing.T, s *Store, run string) Code {
	t.Helper()
	var err error
	within(t, "a lookup in run "+run, func() {
		var v *Value
		v, err = s.OpenValue(run, "v")
		if v != nil {
			v.Close()
		}
	})
	return CodeOf(err)
}

func TestTombstoneRoundTrip(t *testing.T) {
	s := Open(t.TempDir())
	when := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.WriteTombstone(Tombstone{Run: "r", Collected: when, Values: 2, Bytes: 99}); err != nil {
		t.Fatal(err)
	}
	tb, ok := s.ReadTombstone("r")
	if !ok || tb.Run != "r" || !tb.Collected.Equal(when) || tb.Values != 2 || tb.Bytes != 99 {
		t.Fatalf("read back %+v %v", tb, ok)
	}
	if c := lookupCode(t, s, "r"); c != CodeCollected {
		t.Fatalf("lookup: %s", c)
	}
	files, err := s.TombstoneFiles()
	if err != nil || len(files) != 1 || files[0].Tombstone == nil || files[0].Temp {
		t.Fatalf("files %+v %v", files, err)
	}
	if err := s.RemoveTombstone("r"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ReadTombstone("r"); ok {
		t.Fatal("tombstone still read after removal")
	}
	if err := s.RemoveTombstone("r"); err != nil {
		t.Fatalf("removing no tombstone: %v", err)
	}
}

// TestHostileTombstones: a tombstone that is a FIFO, a symlink (to
// /dev/zero, or to a real tombstone outside the store), a directory, huge,
// or a tombstone of another run is no tombstone: every lookup says
// unknown_reference at once, and nothing is followed or read unbounded.
func TestHostileTombstones(t *testing.T) {
	outsideDir := t.TempDir()
	good := filepath.Join(outsideDir, "good.json")
	os.WriteFile(good, []byte(`{"run":"r","collected":"2030-01-02T03:04:05Z"}`+"\n"), 0o600)
	for name, mk := range map[string]func(t *testing.T, p string) error{
		"fifo":      func(t *testing.T, p string) error { testenv.Mkfifo(t, p); return nil },
		"dev-zero":  func(t *testing.T, p string) error { return testenv.Symlink(t, "/dev/zero", p) },
		"link":      func(t *testing.T, p string) error { return testenv.Symlink(t, good, p) },
		"directory": func(t *testing.T, p string) error { return os.Mkdir(p, 0o700) },
		"huge":      func(t *testing.T, p string) error { return os.WriteFile(p, make([]byte, MaxTombstoneBytes+1), 0o600) },
		"other-run": func(t *testing.T, p string) error {
			return os.WriteFile(p, []byte(`{"run":"x","collected":"2030-01-02T03:04:05Z"}`), 0o600)
		},
		"not-json":   func(t *testing.T, p string) error { return os.WriteFile(p, []byte("hello"), 0o600) },
		"empty-file": func(t *testing.T, p string) error { return os.WriteFile(p, nil, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			s := Open(t.TempDir())
			dir := filepath.Join(s.Dir, storeDirName, tombstoneDir)
			os.MkdirAll(dir, 0o700)
			if err := mk(t, filepath.Join(dir, "r.json")); err != nil {
				t.Fatal(err)
			}
			within(t, "ReadTombstone", func() {
				if tb, ok := s.ReadTombstone("r"); ok {
					t.Errorf("read %+v", tb)
				}
			})
			if c := lookupCode(t, s, "r"); c != CodeUnknownReference {
				t.Errorf("lookup: %s, want unknown_reference", c)
			}
			var files []TombstoneFile
			within(t, "TombstoneFiles", func() {
				var err error
				if files, err = s.TombstoneFiles(); err != nil {
					t.Errorf("TombstoneFiles: %v", err)
				}
			})
			if len(files) != 1 || files[0].Tombstone != nil || files[0].Problem == nil {
				t.Fatalf("files %+v", files)
			}
			if err := s.RemoveTombstoneFile("r.json"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "r.json")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("not removed: %v", err)
			}
			if b, err := os.ReadFile(good); err != nil || len(b) == 0 {
				t.Fatalf("the link's target was touched: %v", err)
			}
		})
	}
}

// TestSymlinkedTombstoneDirs: a symlink in place of .retval or of
// .retval/tombstones is never followed: no tombstone is read through it,
// none is written or removed through it, and the files it points at stay.
func TestSymlinkedTombstoneDirs(t *testing.T) {
	for _, at := range []string{"retval", "tombstones"} {
		t.Run(at, func(t *testing.T) {
			s := Open(t.TempDir())
			out := t.TempDir()
			// What the link points at looks like a store's own directory,
			// with a tombstone of run r.
			target := filepath.Join(out, "tombstones")
			os.MkdirAll(target, 0o700)
			tomb := filepath.Join(target, "r.json")
			os.WriteFile(tomb, []byte(`{"run":"r","collected":"2030-01-02T03:04:05Z"}`+"\n"), 0o600)
			if at == "retval" {
				testenv.Symlink(t, out, filepath.Join(s.Dir, storeDirName))
			} else {
				os.Mkdir(filepath.Join(s.Dir, storeDirName), 0o700)
				testenv.Symlink(t, target, filepath.Join(s.Dir, storeDirName, tombstoneDir))
			}
			if _, ok := s.ReadTombstone("r"); ok {
				t.Error("tombstone read through a symlink")
			}
			if c := lookupCode(t, s, "r"); c != CodeUnknownReference {
				t.Errorf("lookup: %s", c)
			}
			if err := s.WriteTombstone(Tombstone{Run: "w", Collected: time.Now()}); !errors.Is(err, fsx.ErrSymlink) {
				t.Errorf("WriteTombstone through a symlink: %v", err)
			}
			if _, err := s.TombstoneFiles(); !errors.Is(err, fsx.ErrSymlink) {
				t.Errorf("TombstoneFiles through a symlink: %v", err)
			}
			s.RemoveTombstone("r")
			s.RemoveTombstoneFile("r.json")
			ents, _ := os.ReadDir(target)
			if len(ents) != 1 || ents[0].Name() != "r.json" {
				t.Errorf("the link's target changed: %v", ents)
			}
			if _, err := os.Stat(tomb); err != nil {
				t.Errorf("outside tombstone gone: %v", err)
			}
		})
	}
}

// TestTombstoneWriteLeavesNoTemp: WriteTombstone replaces an existing
// tombstone whole and leaves no temporary file.
func TestTombstoneWriteLeavesNoTemp(t *testing.T) {
	s := Open(t.TempDir())
	for i := range 3 {
		if err := s.WriteTombstone(Tombstone{Run: "r", Collected: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(s.Dir, storeDirName, tombstoneDir))
	if len(ents) != 1 || ents[0].Name() != "r.json" {
		t.Fatalf("left %v", ents)
	}
	if tb, ok := s.ReadTombstone("r"); !ok || tb.Collected.Unix() != 2 {
		t.Fatalf("%+v", tb)
	}
}
