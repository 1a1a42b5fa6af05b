package retain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/internal/testenv"
)

// backends runs f on a local store and on one on object storage, each
// with a clock the test sets.
func backends(t *testing.T, f func(t *testing.T, s *Store, now *time.Time)) {
	t.Run("local", func(t *testing.T) {
		now := time.Now()
		s := &Store{Dir: t.TempDir(), Now: func() time.Time { return now }}
		f(t, s, &now)
	})
	t.Run("s3", func(t *testing.T) {
		s3test.Each(t, func(t *testing.T, srv *s3test.Server) {
			s, _, now := s3Store(t, srv)
			f(t, s, now)
		})
	})
}

// unknownWithout fails the test unless looking up id in run is
// unknown_reference suggesting exactly want.
func unknownWithout(t *testing.T, s *Store, run, id string, want ...ID) {
	t.Helper()
	_, err := s.OpenValue(run, id)
	var uv *UnknownValueError
	if !errors.As(err, &uv) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("lookup of %s: %v, want unknown_reference", id, err)
	}
	if strings.Join(idStrings(uv.Nearest), " ") != strings.Join(idStrings(want), " ") {
		t.Fatalf("lookup of %s suggests %v, want %v", id, uv.Nearest, want)
	}
}

func idStrings(ids []ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// After gc collected a run, the run written again (the hook and exec
// reuse the session's run) answers collected for the values gc took,
// through every later generation, never unknown_reference with one of
// the new values, whose content is unrelated, as a suggestion.
func TestCollectedGenerationSaysCollected(t *testing.T) {
	backends(t, func(t *testing.T, s *Store, now *time.Time) {
		retainAll(t, s, "X", "c1", toolOutput("c1", 100))
		if err := collect(t, s, idleScan(t, s, now, "X")); err != nil {
			t.Fatal(err)
		}
		first := s.Clock().UTC().Format(time.RFC3339)
		if _, err := s.OpenValue("X", "c1"); !errors.Is(err, ErrCollected) {
			t.Fatalf("lookup in the collected run: %v", err)
		}
		retainAll(t, s, "X", "c2", toolOutput("c2", 100))
		_, err := s.OpenValue("X", "c1")
		if !errors.Is(err, ErrCollected) || strings.Contains(err.Error(), "did you mean") {
			t.Fatalf("lookup of a value of the collected generation: %v, want collected", err)
		}
		if want := `value "c1" of run "X" was collected by gc at ` + first + `; the run was written again since`; err.Error() != want {
			t.Fatalf("message %q, want %q", err, want)
		}
		// Ids the run never held are unknown; a spelling near-miss of a
		// value is still suggested.
		unknownWithout(t, s, "X", "c3")
		unknownWithout(t, s, "X", "c2x", "c2")

		// A second collection keeps the first generation's ids.
		if err := collect(t, s, idleScan(t, s, now, "X")); err != nil {
			t.Fatal(err)
		}
		retainAll(t, s, "X", "c3", toolOutput("c3", 100))
		for _, id := range []string{"c1", "c2"} {
			if _, err := s.OpenValue("X", id); !errors.Is(err, ErrCollected) {
				t.Fatalf("lookup of %s after two collections: %v, want collected", id, err)
			}
		}
		v, err := s.OpenValue("X", "c3")
		if err != nil {
			t.Fatalf("the live value: %v", err)
		}
		v.Close()
	})
}

// A collected-ids record that is a symlink, a FIFO or not a record names
// nothing: the lookup says unknown_reference, reads nothing behind the
// link and does not hang.
func TestCollectedIDsHostile(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	s := &Store{Dir: dir, Now: func() time.Time { return now }}
	retainAll(t, s, "X", "c2", toolOutput("c2", 10))
	tomb := filepath.Join(dir, storeDirName, tombstoneDir)
	if err := os.MkdirAll(tomb, dirMode); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "ids.json")
	if err := os.WriteFile(outside, []byte(`{"run":"X","generations":[{"collected":"2030-01-01T00:00:00Z","ids":["c1"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(tomb, collectedIDsName("X"))
	if err := testenv.Symlink(t, outside, rec); err != nil {
		t.Fatal(err)
	}
	within(t, "a lookup past a symlinked record", func() { unknownWithout(t, s, "X", "c1") })
	os.Remove(rec)
	testenv.Mkfifo(t, rec)
	within(t, "a lookup past a FIFO record", func() { unknownWithout(t, s, "X", "c1") })
	os.Remove(rec)
	// Another run's record under this run's name is not this run's.
	if err := os.WriteFile(rec, []byte(`{"run":"Y","generations":[{"collected":"2030-01-01T00:00:00Z","ids":["c1"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	unknownWithout(t, s, "X", "c1")
}

// The record stays within its bound however many values a run held: the
// oldest generations go first, then the ids of the newest that do not fit.
func TestCollectedIDsBounded(t *testing.T) {
	c := &CollectedIDs{Run: "X"}
	for g, n := range []int{9000, 20000} {
		var ids []ID
		for i := range n {
			ids = append(ids, ID(fmt.Sprintf("%s-%d-%d", strings.Repeat("a", 50), g, i)))
		}
		c.Generations = append(c.Generations, Generation{Collected: time.Unix(int64(g), 0), IDs: ids})
	}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxCollectedIDsBytes || len(b) < MaxCollectedIDsBytes-100 {
		t.Fatalf("%d bytes, bound %d: want it filled, not passed", len(b), MaxCollectedIDsBytes)
	}
	got, err := parseCollectedIDs(collectedIDsName("X"), b)
	if err != nil || len(got.Generations) != 1 || !got.Newest().Equal(time.Unix(1, 0)) || len(got.Generations[0].IDs) < 10000 {
		t.Fatalf("parsed %v: want the newest generation, cut to the bound", err)
	}
}
