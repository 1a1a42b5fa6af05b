package peek

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// retainValue stores b as value id of run r in a new store and opens it.
func retainValue(t testing.TB, b []byte) (*retain.Store, *retain.Value) {
	t.Helper()
	s := retain.Open(t.TempDir())
	l := retain.DefaultLimits()
	l.Threshold, l.MaxValueSize, l.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
	if _, err := s.Retain(bytes.NewReader(b), new(bytes.Buffer), retain.RetainOptions{Run: "r", Call: "v", Limits: l, Policy: retain.PolicyLegacy}); err != nil {
		t.Fatal(err)
	}
	v, err := s.OpenValue("r", "v")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return s, v
}

// TestStoreSeek reads a large retained value through its real index: a
// page at the end reads a bounded number of bytes, and the same pages come
// out when the index is missing or damaged.
func TestStoreSeek(t *testing.T) {
	b := bigLog(120_000) // ~5.5 MiB, indexed by retain
	n := int64(len(refSplit(b)))
	s, v := retainValue(t, b)
	if v.Index() == nil {
		t.Fatal("a large value has no index")
	}
	type peekFn func(src source) (page, error)
	pages := map[string]peekFn{
		"start":  func(src source) (page, error) { return lines(src, 1, 400, DefaultCaps) },
		"middle": func(src source) (page, error) { return lines(src, n/2, n/2+399, DefaultCaps) },
		"end":    func(src source) (page, error) { return lines(src, n-399, n, DefaultCaps) },
		"to end": func(src source) (page, error) { return lines(src, n-10, ToEnd, DefaultCaps) },
		"query": func(src source) (page, error) {
			return query(src, QueryOptions{Query: "日本語 ok", AfterLine: n / 3}, DefaultCaps)
		},
		"regex": func(src source) (page, error) {
			return query(src, QueryOptions{Query: `^0599\d\d level=3`, Regex: true, Context: 1}, DefaultCaps)
		},
		"bytes": func(src source) (page, error) { return bytesPage(src, int64(len(b))-5000, int64(len(b)), DefaultCaps) },
	}
	want := map[string][]byte{}
	for name, f := range pages {
		c := &countingSource{source: sourceOf(v)}
		p, err := f(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[name] = p.Render()
		if name != "query" && name != "regex" && c.read > 4*int64(scanChunk) {
			t.Errorf("%s: read %d bytes through the index", name, c.read)
		}
		// The same page from the bytes in memory, without an index.
		q, err := f(newMem(b, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q.Render(), want[name]) {
			t.Errorf("%s: the stored value and the bytes give different pages", name)
		}
	}
	// Damaged, then missing: the index is ignored and the pages are the same.
	idx := filepath.Join(s.RunDir("r"), "v.lines")
	raw, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	if err := os.Chmod(idx, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"damaged", "missing"} {
		if state == "missing" {
			if err := os.Remove(idx); err != nil {
				t.Fatal(err)
			}
		}
		v2, err := s.OpenValue("r", "v")
		if err != nil {
			t.Fatal(err)
		}
		if v2.Index() != nil {
			t.Fatalf("%s index was used", state)
		}
		for name, f := range pages {
			p, err := f(sourceOf(v2))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p.Render(), want[name]) {
				t.Errorf("%s index, %s: the page differs", state, name)
			}
		}
		v2.Close()
	}
}

// TestStoreErrors: the library's errors carry the codes of SPEC §5.
func TestStoreErrors(t *testing.T) {
	_, v := retainValue(t, []byte("a\nb\n"))
	if _, err := Lines(v, 3, 4, DefaultCaps); retain.CodeOf(err) != retain.CodeInvalidRange {
		t.Errorf("line past the end: %v", err)
	}
	if _, err := Bytes(v, 0, 5, DefaultCaps); retain.CodeOf(err) != retain.CodeInvalidRange {
		t.Errorf("bytes past the end: %v", err)
	}
	p, err := Query(v, QueryOptions{Query: "b"}, DefaultCaps)
	if err != nil || string(p.Render()) != "2: b\n[1 match; shown 1-1]\n" {
		t.Errorf("query: %q, %v", p.Render(), err)
	}
}

var benchLog []byte

// retainValueB retains a ~46 MiB log for benchmarks.
func retainValueB(b *testing.B) (*retain.Store, *retain.Value) {
	if benchLog == nil {
		benchLog = bigLog(1_000_000)
	}
	return retainValue(b, benchLog)
}

// TestStoreCorrupt: a search reads every block of a large value, and a
// damaged block is reported as corrupt, never searched as if it were data.
func TestStoreCorrupt(t *testing.T) {
	b := bigLog(60_000) // ~2.7 MiB, indexed
	s, v := retainValue(t, b)
	v.Close()
	p := filepath.Join(s.RunDir("r"), "v.txt")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x20
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []QueryOptions{{Query: "no such text"}, {Query: "no such text", Regex: true}, {Query: "NO SUCH TEXT", IgnoreCase: true}} {
		v, err := s.OpenValue("r", "v")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Query(v, o, DefaultCaps); !errors.Is(err, retain.ErrCorrupt) {
			t.Errorf("%+v: got %v, want corrupt", o, err)
		}
		v.Close()
	}
	// Without its index, the value is checked whole against its SHA-256.
	if err := os.Remove(filepath.Join(s.RunDir("r"), "v.lines")); err != nil {
		t.Fatal(err)
	}
	v, err = s.OpenValue("r", "v")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := Query(v, QueryOptions{Query: "x"}, DefaultCaps); !errors.Is(err, retain.ErrCorrupt) {
		t.Errorf("without an index: got %v, want corrupt", err)
	}
}

// TestStoreReadAhead searches a large plain value read ahead, block by
// block, by several goroutines at once (retain.Value.ConcurrentBlocks),
// mapped and read: the pages are the reference's, and a damaged block
// fails the search.
func TestStoreReadAhead(t *testing.T) {
	for _, mapped := range []bool{true, false} {
		t.Run(fmt.Sprintf("mapped=%v", mapped), func(t *testing.T) {
			defer func(u bool) { useMapping = u }(useMapping)
			useMapping = mapped
			testStoreReadAhead(t)
		})
	}
}

func testStoreReadAhead(t *testing.T) {
	b := bigLog(30_000) // ~1.4 MiB, indexed
	s, v := retainValue(t, b)
	if v.ConcurrentBlocks() != retain.BlockSize {
		t.Fatalf("a plain indexed value: ConcurrentBlocks = %d", v.ConcurrentBlocks())
	}
	if m, err := v.Map(); runtime.GOOS == "windows" {
		// Values are not mapped there: scans read them with ReadBlocks.
	} else if m == nil || err != nil {
		t.Fatalf("a plain indexed value is not mapped: %v", err)
	} else {
		m.Close()
	}
	caps := Caps{Lines: -1, Bytes: -1}
	opts := []QueryOptions{{Query: "日本語 ok"}, {Query: "RÉSUMÉ", IgnoreCase: true}, {Query: "level=3 msg=ok", AfterLine: 1000},
		{Query: "029999 level"}, {Query: "no such text"}, {Query: "TIMEOUT 🙂", IgnoreCase: true}, {Query: "user=99"}}
	withReadAhead(int(retain.BlockSize), 3, func() {
		for _, o := range opts {
			want, err := refQuery(b, o, caps)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Query(v, o, caps)
			if err != nil {
				t.Fatalf("%+v: %v", o, err)
			}
			checkPage(t, o.Query, got, want, caps)
		}
	})
	v.Close()
	p := filepath.Join(s.RunDir("r"), "v.txt")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-100] ^= 0x20 // in the last block, read by the last reader
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	withReadAhead(int(retain.BlockSize), 3, func() {
		for _, o := range opts {
			v, err := s.OpenValue("r", "v")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Query(v, o, caps); !errors.Is(err, retain.ErrCorrupt) {
				t.Errorf("%+v: got %v, want corrupt", o, err)
			}
			v.Close()
		}
	})
}
