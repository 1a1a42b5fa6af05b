//go:build unix

package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// outside makes a directory with files that no operation on the store may
// touch, and returns a function that fails the test unless it is intact.
func outside(t *testing.T) (string, func()) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "precious")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	files := []string{"a.txt", "sub/b.txt"}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("keep me\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, func() {
		t.Helper()
		for _, f := range files {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "keep me\n" {
				t.Errorf("outside file %s touched: %q %v", f, b, err)
			}
		}
	}
}

func TestOpenDirNeverFollows(t *testing.T) {
	d, p := root(t)
	out, _ := outside(t)
	os.Symlink(out, filepath.Join(p, "link"))
	os.WriteFile(filepath.Join(p, "file"), nil, 0o600)
	syscall.Mkfifo(filepath.Join(p, "fifo"), 0o600)
	os.Mkdir(filepath.Join(p, "real"), 0o700)
	for name, want := range map[string]error{"link": ErrSymlink, "file": ErrNotDir, "fifo": ErrNotDir, "missing": fs.ErrNotExist} {
		sub, err := d.OpenDir(name)
		if !errors.Is(err, want) {
			t.Errorf("OpenDir(%s) = %v, want %v", name, err, want)
		}
		if sub != nil {
			sub.Close()
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "real/x", "/etc"} {
		if _, err := d.OpenDir(bad); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("OpenDir(%q) = %v, want invalid", bad, err)
		}
		if err := d.RemoveAll(bad); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("RemoveAll(%q) = %v, want invalid", bad, err)
		}
	}
	sub, err := d.OpenDir("real")
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	if _, err := d.MkdirOpen("link", 0o700); !errors.Is(err, ErrSymlink) {
		t.Errorf("MkdirOpen over a symlink: %v", err)
	}
}

// TestRemoveAllNeverCrossesSymlinks: a tree holding symlinks to an outside
// directory, at every depth and as the entry itself, is removed link by
// link; the outside files stay.
func TestRemoveAllNeverCrossesSymlinks(t *testing.T) {
	d, p := root(t)
	out, intact := outside(t)
	tree := filepath.Join(p, "tree")
	os.MkdirAll(filepath.Join(tree, "deep", "deeper"), 0o700)
	os.WriteFile(filepath.Join(tree, "deep", "f"), []byte("x"), 0o600)
	os.Symlink(out, filepath.Join(tree, "to-outside"))
	os.Symlink(filepath.Join(out, "a.txt"), filepath.Join(tree, "deep", "to-file"))
	os.Symlink(out, filepath.Join(tree, "deep", "deeper", "again"))
	os.Symlink(out, filepath.Join(p, "entry-link"))
	syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o600)
	for _, name := range []string{"tree", "entry-link", "missing"} {
		if err := d.RemoveAll(name); err != nil {
			t.Fatalf("RemoveAll(%s): %v", name, err)
		}
		if _, err := os.Lstat(filepath.Join(p, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there: %v", name, err)
		}
	}
	intact()
}

// TestRootSymlinkFollowed: the directory a user names may be a link (a
// runs-dir on another disk); only what is below it is never followed.
func TestRootSymlinkFollowed(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "runs")
	os.Symlink(real, link)
	d, err := OpenRoot(link)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sub, err := d.MkdirOpen("x", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	if fi, err := os.Stat(filepath.Join(real, "x")); err != nil || !fi.IsDir() {
		t.Fatalf("not made in the link's target: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := OpenRoot(f); !errors.Is(err, ErrNotDir) {
		t.Fatalf("OpenRoot of a file: %v", err)
	}
	if _, err := OpenRoot(filepath.Join(real, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenRoot of nothing: %v", err)
	}
}

// recordSyncs replaces fsync of directories with a recorder of their paths.
func recordSyncs(t *testing.T) *[]string {
	var synced []string
	TestHookSync = func(dir string) { synced = append(synced, dir) }
	t.Cleanup(func() { TestHookSync = nil })
	return &synced
}

// TestDurableDirectoryChanges: a directory MkdirOpen creates, a Rename and
// a WriteFileAtomic are followed by fsync of every directory whose entries
// changed.
func TestDurableDirectoryChanges(t *testing.T) {
	d, p := root(t)
	synced := recordSyncs(t)
	a, err := d.MkdirOpen("a", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !slices.Equal(*synced, []string{p}) {
		t.Fatalf("after mkdir, synced %v, want the parent", *synced)
	}
	*synced = nil
	again, err := d.MkdirOpen("a", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if len(*synced) != 0 {
		t.Fatalf("opening an existing directory synced %v", *synced)
	}
	b, err := d.MkdirOpen("b", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	os.WriteFile(filepath.Join(p, "a", "f"), []byte("x"), 0o600)
	*synced = nil
	if err := a.Rename("f", b, "g"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(*synced)
	if want := []string{filepath.Join(p, "a"), filepath.Join(p, "b")}; !slices.Equal(*synced, want) {
		t.Fatalf("after rename, synced %v, want %v", *synced, want)
	}
	*synced = nil
	if err := b.WriteFileAtomic("t.json", ".tmp-t", []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(p, "b")}; !slices.Equal(*synced, want) {
		t.Fatalf("after an atomic write, synced %v, want %v", *synced, want)
	}
	if got, _ := os.ReadFile(filepath.Join(p, "b", "t.json")); string(got) != "{}\n" {
		t.Fatalf("written %q", got)
	}
	names, _ := b.Names()
	if slices.Sort(names); !slices.Equal(names, []string{"g", "t.json"}) {
		t.Fatalf("left %v", names)
	}
}

// TestWriteFileAtomicReplacesALink: a symlink at the destination is
// replaced, never written through; an existing temporary name is refused.
func TestWriteFileAtomicReplacesALink(t *testing.T) {
	d, p := root(t)
	out, intact := outside(t)
	os.Symlink(filepath.Join(out, "a.txt"), filepath.Join(p, "t.json"))
	if err := d.WriteFileAtomic("t.json", ".tmp-1", []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(p, "t.json")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("not a file now: %v %v", fi, err)
	}
	intact()
	os.Symlink(filepath.Join(out, "a.txt"), filepath.Join(p, ".tmp-2"))
	if err := d.WriteFileAtomic("u.json", ".tmp-2", []byte("new\n"), 0o600); err == nil {
		t.Fatal("wrote through an existing temporary name")
	}
	intact()
}

// TestReadFileRefuses: a symlink (to /dev/zero, say), a FIFO and a file
// over the bound are refused at once, never read or waited on.
func TestReadFileRefuses(t *testing.T) {
	d, p := root(t)
	os.Symlink("/dev/zero", filepath.Join(p, "zero"))
	syscall.Mkfifo(filepath.Join(p, "fifo"), 0o600)
	os.WriteFile(filepath.Join(p, "big"), make([]byte, 100), 0o600)
	os.WriteFile(filepath.Join(p, "ok"), []byte("fine"), 0o600)
	os.Mkdir(filepath.Join(p, "dir"), 0o700)
	for name, want := range map[string]error{"zero": ErrSymlink, "fifo": ErrNotRegular, "big": ErrTooLarge, "dir": ErrNotRegular, "missing": fs.ErrNotExist} {
		if _, err := d.ReadFile(name, 64); !errors.Is(err, want) {
			t.Errorf("ReadFile(%s) = %v, want %v", name, err, want)
		}
	}
	if b, err := d.ReadFile("ok", 64); err != nil || string(b) != "fine" {
		t.Errorf("ReadFile(ok) = %q %v", b, err)
	}
}

// TestTreeSizeNeverFollows counts a link as itself, as du -sb does.
func TestTreeSizeNeverFollows(t *testing.T) {
	d, p := root(t)
	out, _ := outside(t)
	os.MkdirAll(filepath.Join(p, "t", "s"), 0o700)
	os.WriteFile(filepath.Join(p, "t", "s", "f"), make([]byte, 1000), 0o600)
	os.Symlink(out, filepath.Join(p, "t", "l"))
	n, err := d.TreeSize("t")
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	filepath.WalkDir(filepath.Join(p, "t"), func(path string, _ fs.DirEntry, _ error) error {
		fi, _ := os.Lstat(path)
		want += fi.Size()
		return nil
	})
	if n != want {
		t.Fatalf("TreeSize %d, want %d (not through the link)", n, want)
	}
	if fi, err := d.Lstat("t"); err != nil || !fi.IsDir() || fi.Name() != "t" {
		t.Fatalf("Lstat: %v %v", fi, err)
	}
	if fi, err := d.Lstat("t/l"); err == nil {
		t.Fatalf("Lstat of a path: %v", fi)
	}
}
