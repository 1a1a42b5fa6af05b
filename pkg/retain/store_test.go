package retain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/retval/retval/internal/testenv"
)

func retainAll(t testing.TB, s *Store, run, call string, data []byte) *Result {
	t.Helper()
	return retainComp(t, s, run, call, data, "none")
}

// compressions are the representations every read test runs over.
var compressions = []string{"none", "zstd"}

func retainComp(t testing.TB, s *Store, run, call string, data []byte, comp string) *Result {
	t.Helper()
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize, L.MaxRunBytes = Unlimited, Unlimited, Unlimited
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(data), &out, RetainOptions{Run: run, Call: call, Limits: L, Policy: PolicyLegacy, Compress: comp})
	if err != nil {
		t.Fatalf("retain: %v", err)
	}
	if want := map[string]Compression{"none": CompressNone, "zstd": CompressZstd}[comp]; want != "" && res.Descriptor.Compression != want {
		t.Fatalf("stored as %s, want %s", res.Descriptor.Compression, want)
	}
	if !res.Retained {
		t.Fatalf("not retained: %+v", res)
	}
	return res
}

func checkRoundTrip(t testing.TB, s *Store, run, call string, data []byte) {
	t.Helper()
	v, err := s.OpenValue(run, call)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	got, err := v.Bytes(0, v.Size())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes differ from the %d retained", len(got), len(data))
	}
	sum := sha256.Sum256(data)
	d := v.Desc
	if d.SHA256 != hex.EncodeToString(sum[:]) || d.Size != int64(len(data)) {
		t.Fatalf("descriptor digest/size wrong: %+v", d)
	}
	wantLines := int64(bytes.Count(data, []byte("\n")))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		wantLines++
	}
	if d.Lines != wantLines {
		t.Fatalf("lines = %d, want %d", d.Lines, wantLines)
	}
	if d.UTF8 != utf8.Valid(data) {
		t.Fatalf("utf8 = %v", d.UTF8)
	}
	if d.JSON != (utf8.Valid(data) && json.Valid(data)) {
		t.Fatalf("json = %v", d.JSON)
	}
}

func FuzzRetainRoundTrip(f *testing.F) {
	f.Add([]byte("hello\nworld"))
	f.Add([]byte(`{"a": [1, 2.50, "x"]}`))
	f.Add([]byte("\xff\xfe\x00 binary\r\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := testStore(t)
		for _, comp := range compressions {
			retainComp(t, s, "r", comp, data, comp)
			checkRoundTrip(t, s, "r", comp, data)
		}
	})
}

// bigValue is a deterministic multi-MiB text with mixed line lengths.
func bigValue(size int) []byte {
	r := rand.New(rand.NewPCG(9, 9))
	var b bytes.Buffer
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%d héllo %s\n", i, bytes.Repeat([]byte("z"), r.IntN(200)))
	}
	return b.Bytes()[:size]
}

func TestLargeValueIndexAndBlocks(t *testing.T) {
	for _, comp := range compressions {
		t.Run(comp, func(t *testing.T) { testLargeValue(t, comp) })
	}
}

func testLargeValue(t *testing.T, comp string) {
	s := testStore(t)
	data := bigValue(3<<20 + 12345)
	retainComp(t, s, "r", "big", data, comp)
	checkRoundTrip(t, s, "r", "big", data)
	v, err := s.OpenValue("r", "big")
	if err != nil {
		t.Fatal(err)
	}
	ix := v.Index()
	if ix == nil {
		t.Fatal("no line index for a 3 MiB value")
	}
	// Every indexed line start is right.
	for i, off := range ix.Starts {
		line := int64(i)*ix.Stride + 1
		if got := int64(bytes.Count(data[:off], []byte("\n"))) + 1; got != line || off > 0 && data[off-1] != '\n' {
			t.Fatalf("entry %d: offset %d is line %d, want %d", i, off, got, line)
		}
	}
	v.Close()
	// Random slices equal the value's bytes.
	v, _ = s.OpenValue("r", "big")
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 200; i++ {
		off := r.Int64N(int64(len(data)))
		end := min(int64(len(data)), off+r.Int64N(300000))
		got, err := v.Bytes(off, end)
		if err != nil || !bytes.Equal(got, data[off:end]) {
			t.Fatalf("slice %d-%d wrong: %v", off, end, err)
		}
	}
	v.Close()
	if comp != "none" {
		return
	}

	// A corrupted byte is reported, never returned.
	p := filepath.Join(s.RunDir("r"), "big.txt")
	os.Chmod(p, 0o600)
	b, _ := os.ReadFile(p)
	b[2<<20+7] ^= 1
	os.WriteFile(p, b, 0o600)
	v, _ = s.OpenValue("r", "big")
	buf := make([]byte, 100)
	if _, err := v.ReadAt(buf, 2<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of a corrupted block: %v, want corrupt", err)
	}
	// Other blocks still read.
	if _, err := v.ReadAt(buf, 0); err != nil {
		t.Fatalf("read of an intact block: %v", err)
	}
	v.Close()

	// A damaged index is ignored (and reads fall back to whole-value
	// checking, which now finds the corruption).
	ip := filepath.Join(s.RunDir("r"), "big.lines")
	os.Chmod(ip, 0o600)
	ib, _ := os.ReadFile(ip)
	ib[100] ^= 1
	os.WriteFile(ip, ib, 0o600)
	v, _ = s.OpenValue("r", "big")
	if v.Index() != nil {
		t.Fatal("damaged index trusted")
	}
	if _, err := v.ReadAt(buf, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("whole-value check missed corruption: %v", err)
	}
	v.Close()
}

func TestSmallValueCorruption(t *testing.T) {
	s := testStore(t)
	data := bytes.Repeat([]byte("abc\n"), 10000)
	retainAll(t, s, "r", "c", data)
	p := filepath.Join(s.RunDir("r"), "c.txt")
	os.Chmod(p, 0o600)
	b, _ := os.ReadFile(p)
	b[5] = 'X'
	os.WriteFile(p, b, 0o600)
	v, err := s.OpenValue("r", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Bytes(0, 10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want corrupt", err)
	}
	// Truncated content is caught at open.
	os.WriteFile(p, b[:100], 0o600)
	if _, err := s.OpenValue("r", "c"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v, want corrupt", err)
	}
}

func TestSymlinkedContentRefused(t *testing.T) {
	s := testStore(t)
	retainAll(t, s, "r", "c", bytes.Repeat([]byte("x"), 100))
	p := filepath.Join(s.RunDir("r"), "c.txt")
	os.Remove(p)
	testenv.Symlink(t, "/etc/passwd", p)
	if _, err := s.OpenValue("r", "c"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("symlinked content: %v, want corrupt", err)
	}
	// A run directory replaced by a symlink is refused too.
	dir := s.RunDir("r2")
	testenv.Symlink(t, s.RunDir("r"), dir)
	if _, err := s.OpenValue("r2", "c"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("symlinked run: %v, want corrupt", err)
	}
}

// TestRacingRetains: processes (here goroutines with separate writers)
// retaining one call id: identical bytes all succeed with one stub;
// different bytes leave exactly one winner, the rest conflict.
func TestRacingRetains(t *testing.T) {
	s := testStore(t)
	data := bytes.Repeat([]byte("same bytes\n"), 5000)
	var wg sync.WaitGroup
	stubs := make([]string, 8)
	for i := range stubs {
		wg.Go(func() { stubs[i] = retainAll(t, s, "r", "same", data).Stub })
	}
	wg.Wait()
	for _, st := range stubs[1:] {
		if st != stubs[0] {
			t.Fatal("identical retains printed different stubs")
		}
	}
	L := DefaultLimits()
	L.Threshold = Unlimited
	var mu sync.Mutex
	wins, conflicts := 0, 0
	var winner []byte
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			d := bytes.Repeat(fmt.Appendf(nil, "writer %d\n", i), 3000)
			_, err := s.Retain(bytes.NewReader(d), new(bytes.Buffer), RetainOptions{Run: "r", Call: "diff", Limits: L, Policy: PolicyLegacy})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
				winner = d
			case errors.Is(err, ErrConflict):
				conflicts++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Fatalf("wins %d conflicts %d, want 1 and 7", wins, conflicts)
	}
	checkRoundTrip(t, s, "r", "diff", winner)
	ents, _ := os.ReadDir(s.RunDir("r"))
	for _, e := range ents {
		if isTemp(e.Name()) {
			t.Errorf("debris left: %s", e.Name())
		}
	}
}

func TestCapacityPolicies(t *testing.T) {
	s := testStore(t)
	L := DefaultLimits()
	L.Threshold = 10
	L.MaxRunValues = 2
	data := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "v%d\n", i), 100) }
	for i := 0; i < 2; i++ {
		if res, err := s.Retain(bytes.NewReader(data(i)), new(bytes.Buffer), RetainOptions{Run: "r", Call: fmt.Sprint(i), Limits: L, Policy: PolicyLegacy}); err != nil || !res.Retained {
			t.Fatal(err, res)
		}
	}
	res, err := s.Retain(bytes.NewReader(data(3)), new(bytes.Buffer), RetainOptions{Run: "r", Call: "3", Limits: L, Policy: PolicyLegacy})
	if err != nil || res.Retained || res.NotRetained == "" {
		t.Fatalf("legacy at capacity: %v %+v", err, res)
	}
	if _, err := s.Retain(bytes.NewReader(data(3)), new(bytes.Buffer), RetainOptions{Run: "r", Call: "3", Limits: L, Policy: PolicyBounded}); !errors.Is(err, ErrCapacity) {
		t.Fatalf("bounded at capacity: %v", err)
	}
	// Existing references stay usable; nothing else was stored.
	checkRoundTrip(t, s, "r", "0", data(0))
	if _, err := s.OpenValue("r", "3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("value 3: %v", err)
	}
	// Re-retaining an existing value at capacity is still the no-op.
	if res, err := s.Retain(bytes.NewReader(data(1)), new(bytes.Buffer), RetainOptions{Run: "r", Call: "1", Limits: L, Policy: PolicyBounded}); err != nil || !res.Retained {
		t.Fatalf("identical re-retain at capacity: %v", err)
	}
}
