package retain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A run directory that belongs to another user is neither written into
// nor read from: as root, simulate one with chown.
func TestForeignRunDirRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	s := testStore(t)
	data := bytes.Repeat([]byte("owned by someone else\n"), 2000)
	retainAll(t, s, "r", "c", data)
	dir := s.RunDir("r")
	if err := os.Chown(dir, 4242, 4242); err != nil {
		t.Skipf("chown: %v", err)
	}
	L := DefaultLimits()
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(data), &out, RetainOptions{Run: "r", Call: "d", Limits: L, Policy: PolicyLegacy})
	if err != nil || !res.Verbatim || res.Warning == nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("retain into a foreign run: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.meta.json")); err == nil {
		t.Fatal("wrote into another user's run directory")
	}
	if _, err := s.OpenValue("r", "c"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read from a foreign run: %v, want corrupt", err)
	}
}

// Values and descriptors are owner-only, whatever the umask.
func TestOwnerOnlyModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix modes: who may read a file is its ACL, inherited from the directory it is made in")
	}
	s := testStore(t)
	retainAll(t, s, "r", "c", bytes.Repeat([]byte("x\n"), 1<<20))
	ents, _ := os.ReadDir(s.RunDir("r"))
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", e.Name(), fi.Mode())
		}
	}
	fi, _ := os.Stat(s.RunDir("r"))
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("run directory has mode %v", fi.Mode())
	}
}
