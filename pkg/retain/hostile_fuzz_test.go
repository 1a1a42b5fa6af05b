package retain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// hostileBases stores the values whose files FuzzHostileStore damages: a
// small and a large (indexed, block-digested) value, plain and zstd.
func hostileBases(dir string) error {
	s := Open(dir)
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize, L.MaxRunBytes = Unlimited, Unlimited, Unlimited
	for _, b := range hostileKinds {
		var out bytes.Buffer
		res, err := s.Retain(bytes.NewReader(b.data()), &out, RetainOptions{Run: b.run, Call: "v", Limits: L, Policy: PolicyLegacy, Compress: b.comp})
		if err != nil {
			return err
		}
		if !res.Retained {
			return errors.New("base value not retained")
		}
	}
	return nil
}

var hostileKinds = []struct {
	run, comp string
	data      func() []byte
}{
	{"small", "none", func() []byte { return bigValue(40 << 10) }},
	{"large", "none", func() []byte { return bigValue(IndexMinSize + 3*BlockSize + 17) }},
	{"zsmall", "zstd", func() []byte { return bigValue(40 << 10) }},
	{"zlarge", "zstd", func() []byte { return bigValue(IndexMinSize + 3*BlockSize + 17) }},
}

// FuzzHostileStore damages one file of a stored value (content, index or
// descriptor: overwrite bytes anywhere, or truncate) and reads it back:
// a read either fails or returns exactly the bytes that were retained —
// whole or any slice — and verify reports a problem whenever a whole read
// fails. Nothing panics.
func FuzzHostileStore(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint32(100), []byte("X"), false)
	f.Add(uint8(1), uint8(0), uint32(1<<20), []byte("\x00\x00"), false)
	f.Add(uint8(1), uint8(1), uint32(80), []byte("\xff"), false)
	f.Add(uint8(2), uint8(0), uint32(9), []byte{}, true)
	f.Add(uint8(3), uint8(0), uint32(4000), []byte("zz"), false)
	f.Add(uint8(3), uint8(1), uint32(70), []byte{}, true)
	f.Add(uint8(0), uint8(2), uint32(20), []byte(`"size":1`), false)
	f.Add(uint8(2), uint8(2), uint32(0), []byte(`{"id":"v","size":5,"stored_bytes":5,"compression":"none"}`), true)
	src := f.TempDir()
	if err := hostileBases(src); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, base, file uint8, off uint32, patch []byte, truncate bool) {
		kind := hostileKinds[int(base)%len(hostileKinds)]
		want := kind.data()
		dir := t.TempDir()
		s := Open(dir)
		s.Now = func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
		runDir := s.RunDir(ID(kind.run))
		if err := os.Mkdir(runDir, 0o700); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(src, kind.run+".values"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			if !e.Type().IsRegular() || e.Name() == lockName || e.Name() == activityName {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, kind.run+".values", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(runDir, e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
			names = append(names, e.Name())
		}
		target := names[int(file)%len(names)]
		p := filepath.Join(runDir, target)
		b, _ := os.ReadFile(p)
		at := int(off) % (len(b) + 1)
		if truncate {
			b = append(b[:at], patch...)
		} else {
			end := min(at+len(patch), len(b))
			copy(b[at:end], patch)
			b = append(b, patch[end-at:]...)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}

		rep, verr := s.Verify(VerifyOptions{Grace: time.Hour})
		v, err := s.OpenValue(kind.run, "v")
		if err != nil {
			if verr == nil && rep.OK() {
				t.Fatalf("%s damaged: open fails (%v) but verify is clean", target, err)
			}
			return
		}
		defer v.Close()
		whole, err := v.Bytes(0, v.Size())
		if err != nil {
			if verr == nil && rep.OK() {
				t.Fatalf("%s damaged: read fails (%v) but verify is clean", target, err)
			}
		} else if !bytes.Equal(whole, want) {
			t.Fatalf("%s damaged: a whole read returned %d other bytes", target, len(whole))
		}
		// Slices near the damage and across block boundaries.
		size := v.Size()
		for _, r := range [][2]int64{{0, min(size, 10)}, {int64(at) % (size + 1), min(size, int64(at)%(size+1)+BlockSize+1)},
			{max(0, size-BlockSize-5), size}, {min(size, BlockSize-1), min(size, 2*BlockSize+1)}} {
			got, err := v.Bytes(r[0], r[1])
			if err == nil && r[0] < r[1] && (size != int64(len(want)) || !bytes.Equal(got, want[r[0]:r[1]])) {
				t.Fatalf("%s damaged: slice %d-%d returned other bytes", target, r[0], r[1])
			}
		}
	})
}
