package retain

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

// readsBack checks that call of run holds exactly data.
func readsBack(t *testing.T, s *Store, run, call string, data []byte) {
	t.Helper()
	v, err := s.OpenValue(run, call)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer v.Close()
	got, err := v.Bytes(0, v.Size())
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("reads back %d bytes, %v; want the %d retained", len(got), err, len(data))
	}
	rep, err := s.Verify(VerifyOptions{Run: run})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestRetainAgainRestores damages a value in place and retains the same
// bytes again: the stub is printed only once the value verifies again,
// restored from the new input.
func TestRetainAgainRestores(t *testing.T) {
	small := []byte(strings.Repeat("a line of the value\n", 2000))
	big := bigValue(3 << 20)
	damage := map[string]func(t *testing.T, dir string, d *Descriptor){
		"flipped byte": func(t *testing.T, dir string, d *Descriptor) {
			p := filepath.Join(dir, contentName(d.ID, d.Compression))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			os.Chmod(p, 0o600)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"content removed": func(t *testing.T, dir string, d *Descriptor) {
			os.Remove(filepath.Join(dir, contentName(d.ID, d.Compression)))
		},
		"index removed": func(t *testing.T, dir string, d *Descriptor) {
			os.Remove(filepath.Join(dir, linesName(d.ID)))
		},
	}
	for name, hurt := range damage {
		for _, data := range [][]byte{small, big} {
			for _, comps := range [][2]string{{"none", "none"}, {"zstd", "zstd"}, {"zstd", "none"}, {"none", "zstd"}} {
				if name == "index removed" && len(data) <= IndexMinSize {
					continue
				}
				t.Run(name+"/"+comps[0]+"-"+comps[1], func(t *testing.T) {
					s := testStore(t)
					first := retainComp(t, s, "r", "c", data, comps[0])
					hurt(t, s.RunDir("r"), first.Descriptor)
					L := DefaultLimits()
					L.Threshold, L.MaxValueSize = Unlimited, Unlimited
					var out bytes.Buffer
					res, err := s.Retain(bytes.NewReader(data), &out, RetainOptions{Run: "r", Call: "c", Limits: L, Compress: comps[1]})
					if err != nil || !res.Retained || res.Stub != first.Stub {
						t.Fatalf("retain again: %+v %v", res, err)
					}
					readsBack(t, s, "r", "c", data)
					// Nothing is left over: the other representation's
					// file of a restore across representations is gone.
					if rep, err := Open(s.Dir).Verify(VerifyOptions{Run: "r", Grace: Unlimited}); err != nil || rep.Debris != 0 {
						t.Errorf("debris after the restore: %+v %v", rep, err)
					}
				})
			}
		}
	}
}

// TestRetainAgainBeforeLimits retains a value under raised limits and then
// the same bytes under the defaults: the identical-value check comes
// before every capacity rule, under both policies.
func TestRetainAgainBeforeLimits(t *testing.T) {
	data := bigValue(17 << 20) // over the default max-value-size
	s := testStore(t)
	first := retainAll(t, s, "r", "c", data)
	for _, pol := range []Policy{PolicyLegacy, PolicyBounded} {
		L := DefaultLimits()
		L.MaxRunBytes = 1 << 20 // the run is over this already
		res, err := s.Retain(bytes.NewReader(data), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L, Policy: pol})
		if err != nil || !res.Retained || res.NotRetained != "" {
			t.Fatalf("%s: same bytes again under lower limits: %+v %v", pol, res, err)
		}
		if pol == PolicyLegacy && res.Stub != first.Stub {
			t.Errorf("%s: stub differs:\n%s\nwant\n%s", pol, res.Stub, first.Stub)
		}
		var out bytes.Buffer
		st, err := s.Replay(bytes.NewReader(data), &out, "r", "c", L.StubSettings(pol))
		if err != nil || st != res.Stub {
			t.Errorf("%s: replay %q %v, retain printed %q", pol, st, err, res.Stub)
		}
	}
	// Other bytes for the call are still refused, as a conflict.
	if _, err := s.Retain(bytes.NewReader(data[1:]), io.Discard, RetainOptions{Run: "r", Call: "c"}); CodeOf(err) != CodeConflict {
		t.Errorf("different bytes: %v, want conflict", err)
	}
}

// TestDescriptorBounded retains under call ids and tool names whose JSON
// escaping is huge: every committed descriptor stays readable, and the
// call can be retained again.
func TestDescriptorBounded(t *testing.T) {
	s := testStore(t)
	call := strings.Repeat("\x01\"<", 200000) // 600 KB, ~3.6 MB escaped
	tool := strings.Repeat("\x02", 300000)
	data := []byte(strings.Repeat("x\n", 20000))
	L := DefaultLimits()
	opts := RetainOptions{Run: "r", Call: call, Meta: Meta{Tool: tool}, Limits: L}
	res, err := s.Retain(bytes.NewReader(data), io.Discard, opts)
	if err != nil || !res.Retained {
		t.Fatalf("retain: %+v %v", res, err)
	}
	d := res.Descriptor
	if len(d.CallID) != MaxCallIDBytes || d.CallIDXXH3 == "" || len(d.Tool) != MaxToolBytes {
		t.Errorf("descriptor keeps call id %d bytes (xxh3 %q), tool %d bytes", len(d.CallID), d.CallIDXXH3, len(d.Tool))
	}
	fi, err := os.Stat(filepath.Join(s.RunDir("r"), metaName(d.ID)))
	if err != nil || fi.Size() > 16<<10 {
		t.Fatalf("descriptor is %d bytes (%v)", fi.Size(), err)
	}
	readsBack(t, s, "r", call, data)
	again, err := s.Retain(bytes.NewReader(data), io.Discard, opts)
	if err != nil || again.Stub != res.Stub {
		t.Errorf("again: %+v %v", again, err)
	}
	// A multi-byte character at the cut is not split.
	if got := truncateUTF8("ab😀", 3); got != "ab" {
		t.Errorf("truncateUTF8 = %q", got)
	}
}

// TestRetainAgainLongerStopsWriting: other, longer bytes under a call that
// holds a value stop being written once past both max-value-size and the
// stored value's size — on a disk with no room for them they are still a
// conflict, not a full-disk fallback.
func TestRetainAgainLongerStopsWriting(t *testing.T) {
	dir := testenv.MountTiny(t, "1m")
	s := Open(filepath.Join(dir, "runs"))
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize = Unlimited, 64<<10
	if res, err := s.Retain(strings.NewReader("a small value\n"), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L}); err != nil || !res.Retained {
		t.Fatal(res, err)
	}
	big := strings.Repeat("other bytes\n", 400000) // 4.8 MB, far over the 1 MiB disk
	res, err := s.Retain(strings.NewReader(big), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L})
	if CodeOf(err) != CodeConflict {
		t.Fatalf("longer other bytes: %+v, %v; want conflict", res, err)
	}
	readsBack(t, s, "r", "c", []byte("a small value\n"))
}

// TestRetainAgainContentAndIndexDamaged: with both the content and the
// index of a large value damaged, retaining the same bytes restores both
// (verify reports the content first and says nothing of the index).
func TestRetainAgainContentAndIndexDamaged(t *testing.T) {
	data := bigValue(3 << 20)
	s := testStore(t)
	first := retainAll(t, s, "r", "c", data)
	dir := s.RunDir("r")
	os.Remove(filepath.Join(dir, contentName("c", CompressNone)))
	lines := filepath.Join(dir, linesName("c"))
	b, err := os.ReadFile(lines)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[200:], "ZZZZZZZZ")
	os.Chmod(lines, 0o600)
	if err := os.WriteFile(lines, b, 0o600); err != nil {
		t.Fatal(err)
	}
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize = Unlimited, Unlimited
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(data), &out, RetainOptions{Run: "r", Call: "c", Limits: L})
	if err != nil || !res.Retained || res.Stub != first.Stub {
		t.Fatalf("retain again: %+v %v (printed %d bytes)", res, err, out.Len())
	}
	readsBack(t, s, "r", "c", data)
}
