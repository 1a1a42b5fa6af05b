//go:build linux

package retain

import (
	"bytes"
	"errors"
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
