package retain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A mapped value is checked block by block, and a content file that
// shrinks under its mapping (a damaged or hostile store) is ErrCorrupt,
// not a fault that ends the process.
func TestMapping(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("values are not mapped on Windows: a scan reads them with ReadBlocks")
	}
	s := Open(t.TempDir())
	b := bytes.Repeat([]byte("0123456789abcdef line\n"), (IndexMinSize+3*BlockSize)/22+1000)
	l := DefaultLimits()
	l.Threshold = Unlimited
	if _, err := s.Retain(bytes.NewReader(b), new(bytes.Buffer), RetainOptions{Run: "r", Call: "v", Limits: l}); err != nil {
		t.Fatal(err)
	}
	v, err := s.OpenValue("r", "v")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	m, err := v.Map()
	if err != nil || m == nil {
		t.Fatalf("Map = %v, %v", m, err)
	}
	defer m.Close()
	size := int64(len(b))
	if err := m.Check(0, size); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(BlockSize, 2*BlockSize); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Data(), b) {
		t.Fatal("the mapping does not hold the value")
	}
	if err := m.Check(1, BlockSize); err == nil {
		t.Error("a check of a range that is not whole blocks passed")
	}
	p := filepath.Join(s.RunDir("r"), contentName("v", CompressNone))
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, IndexMinSize); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(0, size); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a check past the end of a shrunk file: %v, want corrupt", err)
	}
	err = m.Guard(func() error {
		_ = bytes.IndexByte(m.Data()[IndexMinSize+2*BlockSize:], 0)
		return nil
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("a read past the end of a shrunk file: %v, want corrupt", err)
	}
}
