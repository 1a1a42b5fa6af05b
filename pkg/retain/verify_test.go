package retain

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/xxh3"
)

func verifyT(t *testing.T, s *Store, run string) *VerifyReport {
	t.Helper()
	rep, err := s.Verify(VerifyOptions{Run: run, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func oneProblem(t *testing.T, rep *VerifyReport, kind, file, msg string) {
	t.Helper()
	if len(rep.Problems) != 1 {
		t.Fatalf("problems = %+v, want one", rep.Problems)
	}
	p := rep.Problems[0]
	if p.Kind != kind || p.File != file || !strings.Contains(p.Message, msg) {
		t.Fatalf("problem = %+v, want %s %s %q", p, kind, file, msg)
	}
}

// TestVerifyBlockDigest: an index that checks out by itself but whose block
// digest does not match the content would make slice reads fail: corrupt.
func TestVerifyBlockDigest(t *testing.T) {
	s := Open(t.TempDir())
	body := bytes.Repeat([]byte("0123456789abcdef\n"), 100000)
	retainT(t, s, "r", "big", body)
	if rep := verifyT(t, s, "r"); !rep.OK() || rep.Values != 1 || rep.Bytes != int64(len(body)) {
		t.Fatalf("clean store: %+v", rep)
	}
	p := filepath.Join(s.RunDir("r"), linesName("big"))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	nLines := le.Uint64(b[56:])
	off := indexHeader + 8*int(nLines) + 8*3 // block 3's digest
	le.PutUint64(b[off:], le.Uint64(b[off:])^1)
	body2 := b[:len(b)-8]
	le.PutUint64(b[len(b)-8:], xxh3.Hash(body2))
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := verifyT(t, s, "r")
	oneProblem(t, rep, ProblemCorrupt, "big.lines", "block 3 digest does not match")
	if rep.OK() {
		t.Fatal("a bad block digest passed")
	}
	// The store's own reader agrees that such a value cannot be read.
	v, err := s.OpenValue("r", "big")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Bytes(3*BlockSize, 3*BlockSize+10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of the bad block: %v, want corrupt", err)
	}
}

// TestVerifyZstd: a seekable-zstd value is decompressed and checked.
func TestVerifyZstd(t *testing.T) {
	s := testStore(t)
	retainT(t, s, "r", "plain", []byte("x\n")) // makes the run
	body := bytes.Repeat([]byte("zstd body line\n"), 200000)
	retainComp(t, s, "r", "z", body, "zstd")
	if rep := verifyT(t, s, "r"); !rep.OK() || rep.Values != 2 || len(rep.Problems) != 0 {
		t.Fatalf("zstd value: %+v", rep)
	}
	// A changed byte inside the compressed stream is caught.
	dir := s.RunDir("r")
	p := filepath.Join(dir, contentName("z", CompressZstd))
	zb, _ := os.ReadFile(p)
	zb[len(zb)/3] ^= 0x55
	write(t, p, string(zb))
	rep := verifyT(t, s, "r")
	if rep.OK() || rep.Corrupt != 1 || rep.Problems[0].File != "z.txt.zst" {
		t.Fatalf("corrupt zstd value: %+v", rep)
	}
}

// TestVerifyProblems: missing content, wrong size, a descriptor naming
// another value, unknown runs.
func TestVerifyProblems(t *testing.T) {
	s := Open(t.TempDir())
	retainT(t, s, "r", "a", []byte("alpha\n"))
	dir := s.RunDir("r")

	os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "a.keep"))
	rep := verifyT(t, s, "r")
	// a.keep is a young stray: not debris yet.
	oneProblem(t, rep, ProblemMissing, "a.txt", "content file missing")
	if rep.OK() || rep.Missing != 1 {
		t.Fatalf("%+v", rep)
	}
	os.Rename(filepath.Join(dir, "a.keep"), filepath.Join(dir, "a.txt"))

	write(t, filepath.Join(dir, "a.txt"), "alphA\n")
	oneProblem(t, verifyT(t, s, "r"), ProblemCorrupt, "a.txt", "sha256 does not match")

	mb, _ := os.ReadFile(filepath.Join(dir, "a.meta.json"))
	write(t, filepath.Join(dir, "b.meta.json"), string(mb))
	write(t, filepath.Join(dir, "b.txt"), "alpha\n")
	write(t, filepath.Join(dir, "a.txt"), "alpha\n")
	oneProblem(t, verifyT(t, s, "r"), ProblemCorrupt, "b.meta.json", `descriptor names value "a"`)

	if _, err := s.Verify(VerifyOptions{Run: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
	s.WriteTombstone(Tombstone{Run: "gone", Collected: time.Now()})
	if _, err := s.Verify(VerifyOptions{Run: "gone"}); !errors.Is(err, ErrCollected) {
		t.Fatalf("collected run: %v", err)
	}
}
