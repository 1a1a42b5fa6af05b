package retain

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// cachedStore is a local store with a value cache and a clock the test
// moves.
func cachedStore(t *testing.T, max int64) (*Store, *time.Time) {
	t.Helper()
	now := time.Now()
	s := &Store{Dir: t.TempDir(), Now: func() time.Time { return now }, Cache: NewValueCache(max)}
	return s, &now
}

// readWhole opens run's value id through s and reads it whole.
func readWhole(t *testing.T, s *Store, run, id string) (*Value, []byte, error) {
	t.Helper()
	v, err := s.OpenValue(run, id)
	if err != nil {
		return nil, nil, err
	}
	defer v.Close()
	b, err := v.Bytes(0, v.Size())
	return v, b, err
}

// replaceFile puts a new file with data in place of the one at p, as a
// writer that renames does: another inode, the old one untouched.
func replaceFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p+".new", data, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
}

func TestValueCacheServesACheckedValueWithoutOpeningIt(t *testing.T) {
	for _, comp := range compressions {
		t.Run(comp, func(t *testing.T) {
			s, _ := cachedStore(t, 1<<20)
			data := toolOutput("c1", 500)
			retainComp(t, s, "r", "c1", data, comp)
			v, got, err := readWhole(t, s, "r", "c1")
			if err != nil || !bytes.Equal(got, data) || v.f == nil {
				t.Fatalf("first read: %v (from a file: %v)", err, v != nil && v.f != nil)
			}
			v, got, err = readWhole(t, s, "r", "c1")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("second read: %v", err)
			}
			if v.f != nil {
				t.Fatal("the second read opened the content file: the value was not kept")
			}
			if v.Run != "r" || v.Desc.ID != "c1" {
				t.Fatalf("cached value names run %q, id %q", v.Run, v.Desc.ID)
			}
		})
	}
}

// A kept value is used only while its files are the ones it was read
// from: content rewritten (same size, other bytes) is read again and found
// corrupt; a descriptor replaced is read again; a collected run says so.
func TestValueCacheNeverHidesAChange(t *testing.T) {
	data := toolOutput("c1", 500)
	fresh := func(t *testing.T) (*Store, *time.Time) {
		s, now := cachedStore(t, 1<<20)
		retainAll(t, s, "r", "c1", data)
		if _, _, err := readWhole(t, s, "r", "c1"); err != nil {
			t.Fatal(err)
		}
		return s, now
	}
	t.Run("content rewritten", func(t *testing.T) {
		s, _ := fresh(t)
		p := filepath.Join(s.RunDir("r"), "c1.txt")
		os.Chmod(p, 0o600)
		bad := bytes.ToUpper(data)
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readWhole(t, s, "r", "c1"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read of rewritten content: %v, want corrupt", err)
		}
	})
	t.Run("content replaced", func(t *testing.T) {
		s, _ := fresh(t)
		replaceFile(t, filepath.Join(s.RunDir("r"), "c1.txt"), bytes.ToUpper(data))
		if _, _, err := readWhole(t, s, "r", "c1"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read of replaced content: %v, want corrupt", err)
		}
	})
	t.Run("descriptor replaced", func(t *testing.T) {
		s, _ := fresh(t)
		p := filepath.Join(s.RunDir("r"), "c1.meta.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d Descriptor
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		d.SHA256 = strings.Repeat("0", 64)
		if b, err = json.Marshal(d); err != nil {
			t.Fatal(err)
		}
		replaceFile(t, p, b)
		if _, _, err := readWhole(t, s, "r", "c1"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read under a descriptor that no longer matches: %v, want corrupt", err)
		}
	})
	t.Run("descriptor removed", func(t *testing.T) {
		s, _ := fresh(t)
		if err := os.Remove(filepath.Join(s.RunDir("r"), "c1.meta.json")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readWhole(t, s, "r", "c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("read without a descriptor: %v, want unknown_reference", err)
		}
	})
	t.Run("run collected", func(t *testing.T) {
		s, now := fresh(t)
		if err := collect(t, s, idleScan(t, s, now, "r")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readWhole(t, s, "r", "c1"); !errors.Is(err, ErrCollected) {
			t.Fatalf("read after gc: %v, want collected", err)
		}
	})
}

// Values that fail their check are never kept, and the cache holds at
// most its bytes, letting go of the least recently used first.
func TestValueCacheKeepsOnlyCheckedValuesWithinItsBytes(t *testing.T) {
	s, _ := cachedStore(t, 30000)
	a, b, c := toolOutput("a", 500), toolOutput("b", 500), toolOutput("c", 500) // 11-12 KB each
	for id, data := range map[string][]byte{"a": a, "b": b, "c": c} {
		retainAll(t, s, "r", id, data)
	}
	read := func(id string) *Value {
		v, _, err := readWhole(t, s, "r", id)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	read("a")
	read("b")
	read("a") // a is now the most recent
	read("c") // over 30000 bytes: b goes
	if s.Cache.Bytes() > 30000 {
		t.Fatalf("cache holds %d bytes, max 30000", s.Cache.Bytes())
	}
	if read("a").f != nil || read("c").f != nil {
		t.Fatal("a recently used value was let go")
	}
	if read("b").f == nil {
		t.Fatal("the least recently used value was kept beyond the cache's bytes")
	}

	s2, _ := cachedStore(t, 1<<20)
	retainAll(t, s2, "r", "x", a)
	p := filepath.Join(s2.RunDir("r"), "x.txt")
	os.Chmod(p, 0o600)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("X"), 10)
	f.Close()
	for range 2 {
		if _, _, err := readWhole(t, s2, "r", "x"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read of a corrupt value: %v, want corrupt (every time)", err)
		}
	}
	if s2.Cache.Len() != 0 {
		t.Fatal("a value that failed its check was kept")
	}
}

// Readers on many goroutines share one cache.
func TestValueCacheConcurrentReaders(t *testing.T) {
	s, _ := cachedStore(t, 1<<20)
	data := toolOutput("c1", 500)
	retainAll(t, s, "r", "c1", data)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				v, err := s.OpenValue("r", "c1")
				if err != nil {
					errs <- err
					return
				}
				got, err := v.Bytes(0, v.Size())
				v.Close()
				if err != nil || !bytes.Equal(got, data) {
					errs <- errors.Join(err, errors.New("bytes differ"))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A zero ValueCache is a cache of DefaultValueCacheBytes, as is one made
// with no bytes.
func TestValueCacheZeroValueCaches(t *testing.T) {
	for name, c := range map[string]*ValueCache{"zero": {}, "NewValueCache(0)": NewValueCache(0)} {
		t.Run(name, func(t *testing.T) {
			s := &Store{Dir: t.TempDir(), Cache: c}
			data := toolOutput("c1", 500)
			retainAll(t, s, "r", "c1", data)
			for range 2 {
				if _, got, err := readWhole(t, s, "r", "c1"); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read: %v", err)
				}
			}
			if v, _, _ := readWhole(t, s, "r", "c1"); v.f != nil {
				t.Fatal("the value was not kept")
			}
			if c.Max() != DefaultValueCacheBytes {
				t.Fatalf("holds %d bytes, want %d", c.Max(), DefaultValueCacheBytes)
			}
		})
	}
}
