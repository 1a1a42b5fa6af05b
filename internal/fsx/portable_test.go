package fsx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

// These tests hold on every system, Windows included (where they run
// under Wine in CI): what the store's write path needs of a file system.

// A file a reader holds open is still replaced by WriteFileAtomic, and
// the reader keeps reading the old bytes, as on Unix: Windows refuses to
// rename over a file opened without FILE_SHARE_DELETE.
func TestReplaceWhileOpen(t *testing.T) {
	testenv.SkipUnderWine(t, "POSIX rename semantics (FileRenameInformationEx), which Windows has since 10 1709 on NTFS")
	d, p := root(t)
	if err := d.WriteFileAtomic("a", "tmp-1", []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(filepath.Join(p, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := d.WriteFileAtomic("a", "tmp-2", []byte("new"), 0o600); err != nil {
		t.Fatalf("replacing a file a reader holds open: %v", err)
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "old" {
		t.Errorf("the reader read %q, %v; want the old bytes", b, err)
	}
	if b, err := d.ReadFile("a", 10); err != nil || string(b) != "new" {
		t.Errorf("a is %q, %v; want the new bytes", b, err)
	}
	if names, _ := d.Names(); !slices.Equal(names, []string{"a"}) {
		t.Errorf("left %v", names)
	}
}

// A temporary file is renamed into place while its writer still holds it
// open (the store's write path does that), and removed while open.
func TestCreateTempRenameAndRemoveWhileOpen(t *testing.T) {
	_, p := root(t)
	f, err := CreateTemp(p, ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("value"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Name(), filepath.Join(p, "v.txt")); err != nil {
		t.Fatalf("renaming an open temporary file: %v", err)
	}
	g, err := CreateTemp(p, ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := os.Remove(g.Name()); err != nil {
		t.Fatalf("removing an open temporary file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(p, "v.txt")); err != nil || string(b) != "value" {
		t.Errorf("v.txt is %q, %v", b, err)
	}
}

// A directory that a Dir holds is still renamed (gc renames a run away
// while readers may hold it), between two directories.
func TestRenameHeldDirectory(t *testing.T) {
	d, p := root(t)
	run, err := d.MkdirOpen("r.values", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if err := run.WriteFileAtomic("c1.txt", "tmp", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	trash, err := d.MkdirOpen("trash", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer trash.Close()
	if err := d.Rename("r.values", trash, "r-1"); err != nil {
		t.Fatalf("renaming a directory a Dir holds: %v", err)
	}
	run.Close() // Wine keeps a directory removed while held until it is let go
	if b, err := os.ReadFile(filepath.Join(p, "trash", "r-1", "c1.txt")); err != nil || string(b) != "x" {
		t.Errorf("moved file %q, %v", b, err)
	}
	if err := trash.RemoveAll("r-1"); err != nil {
		t.Fatal(err)
	}
	if names, _ := trash.Names(); len(names) != 0 {
		t.Errorf("trash holds %v", names)
	}
}

// A directory where a regular file belongs, and a name that is not one
// path element, are refused.
func TestOpenFileRefusesDirectoriesAndPaths(t *testing.T) {
	d, p := root(t)
	if err := os.Mkdir(filepath.Join(p, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_CREATE} {
		if _, err := d.OpenFile("sub", flag, 0o600); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Dir.OpenFile(sub, %#x) = %v, want ErrNotRegular", flag, err)
		}
		if _, err := OpenFile(filepath.Join(p, "sub"), flag, 0o600); !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenFile(sub, %#x) = %v, want ErrNotRegular", flag, err)
		}
	}
	for _, name := range []string{"", ".", "..", "a/b", "../x"} {
		if _, err := d.OpenFile(name, os.O_RDONLY, 0); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("OpenFile(%q) = %v, want fs.ErrInvalid", name, err)
		}
	}
	if _, err := d.OpenDir("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenDir(missing) = %v", err)
	}
	if _, err := OpenRoot(filepath.Join(p, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRoot(missing) = %v", err)
	}
	os.WriteFile(filepath.Join(p, "file"), nil, 0o600)
	if _, err := OpenRoot(filepath.Join(p, "file")); !errors.Is(err, ErrNotDir) {
		t.Errorf("OpenRoot(file) = %v, want ErrNotDir", err)
	}
}

// A symlink in an entry's place is never followed, where the system lets
// the test make one (Windows asks for a privilege or developer mode).
func TestSymlinksNeverFollowedPortable(t *testing.T) {
	testenv.SkipUnderWine(t, "symlinks Windows programs can open (CreateSymbolicLink makes a Unix link to a Windows path)")
	d, p := root(t)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "secret"), []byte("keep"), 0o600)
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(p, "file-link")); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	if err := os.Symlink(out, filepath.Join(p, "dir-link")); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_TRUNC, os.O_RDWR | os.O_CREATE} {
		if f, err := d.OpenFile("file-link", flag, 0o600); !errors.Is(err, ErrSymlink) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Dir.OpenFile(file-link, %#x) = %v, want ErrSymlink", flag, err)
		}
		if f, err := OpenFile(filepath.Join(p, "file-link"), flag, 0o600); !errors.Is(err, ErrSymlink) {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenFile(file-link, %#x) = %v, want ErrSymlink", flag, err)
		}
	}
	if _, err := d.OpenDir("dir-link"); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenDir(dir-link) = %v, want ErrSymlink", err)
	}
	if err := d.RemoveAll("dir-link"); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove("file-link"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "secret")); err != nil || string(b) != "keep" {
		t.Errorf("the link's target was touched: %q, %v", b, err)
	}
}

func root(t *testing.T) (*Dir, string) {
	t.Helper()
	p := t.TempDir()
	d, err := OpenRoot(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, p
}
