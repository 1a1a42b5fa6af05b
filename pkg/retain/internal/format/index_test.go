package format

import (
	"encoding/binary"
	"slices"
	"testing"
)

// TestIndexEntries: an index's entries read in place and entries copied
// one by one (a misaligned buffer, as a big-endian host would) are the
// same numbers.
func TestIndexEntries(t *testing.T) {
	want := []uint64{0, 1, 1 << 40, 0xfedcba9876543210, 42}
	buf := make([]byte, 1+8*len(want))
	for i, v := range want {
		binary.LittleEndian.PutUint64(buf[1+8*i:], v)
	}
	misaligned := buf[1:]
	aligned := append(make([]byte, 0, len(misaligned)), misaligned...)
	for name, p := range map[string][]byte{"aligned": aligned, "misaligned": misaligned} {
		if got := uint64s(p); !slices.Equal(got, want) {
			t.Errorf("%s: uint64s = %x, want %x", name, got, want)
		}
		if got := int64s(p); got[3] != -0x123456789abcdf0 || got[2] != 1<<40 {
			t.Errorf("%s: int64s = %d", name, got)
		}
	}
}
