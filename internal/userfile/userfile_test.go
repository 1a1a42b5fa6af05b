package userfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceThroughSymlink: a symlinked file is edited where it points,
// the link stays a link, and the backup named is the one written, beside
// the target.
func TestReplaceThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dot", "settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f, err := Load(link, 1<<20)
	if err != nil || !f.Exists || string(f.Old) != "old\n" {
		t.Fatalf("Load: %+v %v", f, err)
	}
	backup, err := f.Replace([]byte("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(backup); err != nil || string(b) != "old\n" {
		t.Errorf("the backup named, %s, holds %q (%v)", backup, b, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v %v", fi, err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode not kept: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(link); string(b) != "new\n" {
		t.Errorf("through the link: %q", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(target))
	if len(ents) != 2 {
		t.Errorf("left in the target's directory: %v (want the file and its backup)", ents)
	}
}

// TestLoadMissing: a missing file is not an error, and Replace makes it
// (and its directory) without a backup.
func TestLoadMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "new", "settings.json")
	f, err := Load(p, 1<<20)
	if err != nil || f.Exists {
		t.Fatalf("Load: %+v %v", f, err)
	}
	backup, err := f.Replace([]byte("{}\n"))
	if err != nil || backup != "" {
		t.Fatalf("Replace: %q %v", backup, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "{}\n" {
		t.Errorf("wrote %q", b)
	}
}

// A symlink whose target does not exist yet (a dotfile manager's link
// made before its file) is written through: the target is created and
// the link stays a link; with no directory for the target, Load refuses.
func TestDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dotfiles"), 0o755)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(filepath.Join("dotfiles", "claude.json"), link); err != nil {
		t.Fatal(err)
	}
	f, err := Load(link, 1<<20)
	if err != nil || f.Exists || f.Path != filepath.Join(dir, "dotfiles", "claude.json") {
		t.Fatalf("Load: %+v %v", f, err)
	}
	if _, err := f.Replace([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "dotfiles", "claude.json")); string(b) != "{}\n" {
		t.Errorf("the target holds %q", b)
	}
	if err := f.Remove(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(link); !os.IsNotExist(err) {
		t.Errorf("the target is still there: %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Remove took the link: %v %v", fi, err)
	}

	nowhere := filepath.Join(dir, "nowhere.json")
	os.Symlink(filepath.Join(dir, "missing", "x.json"), nowhere)
	if _, err := Load(nowhere, 1<<20); err == nil || !strings.Contains(err.Error(), "is a symlink to "+filepath.Join(dir, "missing", "x.json")+", whose directory does not exist") {
		t.Errorf("Load of a link into a missing directory: %v", err)
	}
}

// MissingDirs says which directories writing the file makes; Remove takes
// them away again when they are left empty.
func TestMissingDirs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "settings.json")
	f, _ := Load(p, 1<<20)
	made := f.MissingDirs()
	if want := []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")}; strings.Join(made, ",") != strings.Join(want, ",") {
		t.Errorf("missing %v, want %v", made, want)
	}
	if _, err := f.Replace([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(made); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
