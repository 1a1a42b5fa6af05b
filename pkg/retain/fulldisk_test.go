//go:build linux

package retain

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

// TestFullDisk: a value that does not fit is printed verbatim (the part
// already written read back), no debris is left, and the values already
// stored stay whole and readable.
func TestFullDisk(t *testing.T) {
	dir := testenv.MountTiny(t, "1m")
	s := Open(filepath.Join(dir, "runs"))
	small := bytes.Repeat([]byte("fits on the disk\n"), 20000) // 340 KB
	retainAll(t, s, "r", "small", small)

	big := bigValue(3 << 20)
	L := DefaultLimits()
	L.MaxValueSize, L.MaxRunBytes = Unlimited, Unlimited
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(big), &out, RetainOptions{Run: "r", Call: "big", Limits: L, Policy: PolicyLegacy})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verbatim || res.Warning == nil || !errors.Is(res.Warning, syscall.ENOSPC) {
		t.Fatalf("want a verbatim fallback warning of ENOSPC, got %+v", res)
	}
	if !bytes.Equal(out.Bytes(), big) {
		t.Fatalf("verbatim output differs from the input (%d vs %d bytes)", out.Len(), len(big))
	}
	ents, _ := os.ReadDir(s.RunDir("r"))
	for _, e := range ents {
		switch e.Name() {
		case "small.txt", "small.meta.json", ".lock", ".reads": // (the read log is the run's own)
		default:
			t.Errorf("left behind: %s", e.Name())
		}
	}
	checkRoundTrip(t, s, "r", "small", small)
}

// TestFullDiskZstd: the same for a compressed value, whose frames are
// written by the sink's writer goroutine: the disk fills part-way, the
// frames written are decoded back from the temporary file and the ones
// still in memory follow, so the output is the input; nothing is left.
func TestFullDiskZstd(t *testing.T) {
	dir := testenv.MountTiny(t, "1m")
	s := Open(filepath.Join(dir, "runs"))
	big := make([]byte, 3<<20+4321) // random: zstd cannot shrink it below the disk
	rand.NewChaCha8([32]byte{7}).Read(big)
	L := DefaultLimits()
	L.MaxValueSize, L.MaxRunBytes = Unlimited, Unlimited
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(big), &out, RetainOptions{Run: "r", Call: "big", Limits: L, Policy: PolicyLegacy, Compress: "zstd"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verbatim || res.Warning == nil || !errors.Is(res.Warning, syscall.ENOSPC) {
		t.Fatalf("want a verbatim fallback warning of ENOSPC, got %+v", res)
	}
	if !bytes.Equal(out.Bytes(), big) {
		t.Fatalf("verbatim output differs from the input (%d vs %d bytes)", out.Len(), len(big))
	}
	noSinkGoroutines(t)
	ents, _ := os.ReadDir(s.RunDir("r"))
	for _, e := range ents {
		switch e.Name() {
		case ".lock", ".reads":
		default:
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
