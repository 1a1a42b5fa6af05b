package retain

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func zstdValue(t *testing.T) (*Store, []byte, string) {
	t.Helper()
	s := testStore(t)
	data := bigValue(2<<20 + 777)
	retainComp(t, s, "r", "z", data, "zstd")
	return s, data, filepath.Join(s.RunDir("r"), "z.txt.zst")
}

// The zstd CLI reads a stored value unchanged.
func TestZstdCLIReads(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("zstd not installed")
	}
	_, data, p := zstdValue(t)
	out, err := exec.Command("zstd", "-dc", p).Output()
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("zstd -dc: %v (%d bytes, want %d)", err, len(out), len(data))
	}
}

func rewrite(t *testing.T, p string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, f(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// setStored makes the descriptor agree with a rewritten content file's
// size, so the open gets past the size check and the zstd checks are what
// is tested.
func setStored(t *testing.T, s *Store, n int64) {
	t.Helper()
	mp := filepath.Join(s.RunDir("r"), "z.meta.json")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var d Descriptor
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	d.StoredBytes = n
	b, _ = marshalDescriptor(&d)
	os.Chmod(mp, 0o600)
	os.WriteFile(mp, b, 0o600)
}

func TestZstdTruncated(t *testing.T) {
	s, _, p := zstdValue(t)
	rewrite(t, p, func(b []byte) []byte { return b[:len(b)-100] })
	if _, err := s.OpenValue("r", "z"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated zst: %v", err)
	}
	fi, _ := os.Stat(p)
	setStored(t, s, fi.Size())
	if _, err := s.OpenValue("r", "z"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated zst with matching size: %v", err)
	}
}

func TestZstdBadSeekTable(t *testing.T) {
	s, _, p := zstdValue(t)
	rewrite(t, p, func(b []byte) []byte {
		// 9 frames with checksums: the table is an 8-byte header, 9
		// entries of 12 bytes and a 9-byte footer. Make the first entry
		// claim another decompressed size.
		table := len(b) - (8 + 9*12 + 9)
		b[table+8+4] ^= 0x01
		return b
	})
	if _, err := s.OpenValue("r", "z"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad seek table: %v", err)
	}
}

func TestZstdFrameCorrupt(t *testing.T) {
	s, _, p := zstdValue(t)
	rewrite(t, p, func(b []byte) []byte { b[5000] ^= 0xFF; return b })
	v, err := s.OpenValue("r", "z")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Bytes(0, 100); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt frame: %v", err)
	}
}

// A value whose frames inflate past what the seek table and descriptor
// say: a decompression bomb is refused, never decoded in full.
func TestZstdInflatesPastDescriptor(t *testing.T) {
	s := testStore(t)
	data := bytes.Repeat([]byte("x"), 100)
	retainComp(t, s, "r", "z", data, "zstd")
	p := filepath.Join(s.RunDir("r"), "z.txt.zst")

	// A frame of 64 MiB of zeros (a few KiB compressed) behind a seek
	// table that claims 100 bytes.
	enc, _ := zstd.NewWriter(nil)
	bomb := enc.EncodeAll(make([]byte, 64<<20), nil)
	forged := append(append([]byte{}, bomb...), forgeTable(uint32(len(bomb)), 100)...)
	os.Chmod(p, 0o600)
	os.WriteFile(p, forged, 0o600)
	setStored(t, s, int64(len(forged)))
	v, err := s.OpenValue("r", "z")
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return
		}
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Bytes(0, 100); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bomb: %v, want corrupt", err)
	}
}

// forgeTable builds a one-frame seek table (no checksums).
func forgeTable(csize, dsize uint32) []byte {
	le := func(b []byte, v uint32) []byte { return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }
	var t []byte
	t = le(t, 0x184D2A5E)
	t = le(t, 8+9)
	t = le(t, csize)
	t = le(t, dsize)
	t = le(t, 1)
	t = append(t, 0)
	return le(t, 0x8F92EAB1)
}

// The auto rule: at least 1 MiB, and the first 256 KiB compress 1.5×.
func TestCompressAuto(t *testing.T) {
	s := testStore(t)
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize = Unlimited, Unlimited
	text := bytes.Repeat([]byte("a compressible line of text\n"), 1<<17)
	for _, tc := range []struct {
		name string
		data []byte
		want Compression
	}{
		{"exactly-1MiB", text[:1<<20], CompressZstd},
		{"just-under", text[:1<<20-1], CompressNone},
		{"incompressible", binaryBlobN(2 << 20), CompressNone},
	} {
		res, err := s.Retain(bytes.NewReader(tc.data), new(bytes.Buffer), RetainOptions{Run: "r", Call: tc.name, Limits: L, Policy: PolicyLegacy, Compress: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Descriptor.Compression != tc.want {
			t.Errorf("%s: stored as %s, want %s", tc.name, res.Descriptor.Compression, tc.want)
		}
		checkRoundTrip(t, s, "r", tc.name, tc.data)
	}
}
