package retain

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"
)

// noHang runs f and fails the test if it has not returned within a
// generous bound: the operations under test must never block on a FIFO,
// and a hang would otherwise hang the whole suite.
func noHang(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// fifoAt replaces path with a FIFO.
func fifoAt(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	testenv.Mkfifo(t, path)
}

// TestFIFOsNeverBlock puts a FIFO, in turn, in place of every file a read
// or a retain opens, and checks that each operation finishes: with corrupt
// where the FIFO is the value's own file, and untouched where it is not.
func TestFIFOsNeverBlock(t *testing.T) {
	big := bigValue(3 << 20) // over IndexMinSize: has a .lines index
	small := []byte(strings.Repeat("a small line\n", 100))
	setup := func(t *testing.T) (*Store, string) {
		s := testStore(t)
		s.Now = nil // file times are real here
		retainAll(t, s, "r", "big", big)
		retainAll(t, s, "r", "small", small)
		return s, s.RunDir("r")
	}
	readSmall := func(t *testing.T, s *Store) {
		t.Helper()
		v, err := s.OpenValue("r", "small")
		if err != nil {
			t.Fatalf("a good value of the run: %v", err)
		}
		defer v.Close()
		if b, err := v.Bytes(0, v.Size()); err != nil || !bytes.Equal(b, small) {
			t.Fatalf("a good value of the run reads back wrong: %v", err)
		}
	}
	t.Run("descriptor", func(t *testing.T) {
		s, dir := setup(t)
		fifoAt(t, filepath.Join(dir, metaName("big")))
		noHang(t, "open", func() {
			if _, err := s.OpenValue("r", "big"); !errors.Is(err, ErrCorrupt) {
				t.Errorf("open: %v, want corrupt", err)
			}
		})
		noHang(t, "values", func() {
			vals, err := s.Values("r")
			if err != nil || len(vals) != 1 {
				t.Errorf("values: %v %v", vals, err)
			}
		})
		noHang(t, "retain with a run byte cap", func() {
			L := DefaultLimits()
			L.Threshold = Unlimited
			if _, err := s.Retain(bytes.NewReader([]byte("new\n")), io.Discard, RetainOptions{Run: "r", Call: "new", Limits: L}); err != nil {
				t.Errorf("retain: %v", err)
			}
		})
		noHang(t, "verify", func() {
			// Not a file retval writes: corrupt, and the content it
			// stood for has no descriptor: debris.
			rep, err := s.Verify(VerifyOptions{Run: "r", Grace: Unlimited})
			if err != nil || rep.Corrupt != 1 || rep.Debris != 2 || rep.OK() {
				t.Errorf("verify: %+v %v, want the FIFO corrupt, and the orphaned content and index debris", rep, err)
			}
		})
	})
	for _, name := range []string{contentName("big", CompressNone), linesName("big")} {
		t.Run(name, func(t *testing.T) {
			s, dir := setup(t)
			fifoAt(t, filepath.Join(dir, name))
			noHang(t, "read", func() {
				v, err := s.OpenValue("r", "big")
				if err == nil {
					_, err = v.Bytes(v.Size()-10, v.Size())
					v.Close()
				}
				if name == linesName("big") {
					if err != nil {
						t.Errorf("read with an unusable index: %v (it falls back to a scan)", err)
					}
				} else if !errors.Is(err, ErrCorrupt) {
					t.Errorf("read: %v, want corrupt", err)
				}
			})
			noHang(t, "verify", func() {
				rep, err := s.Verify(VerifyOptions{Run: "r"})
				if err != nil || rep.OK() == (name != linesName("big")) && name != linesName("big") {
					t.Errorf("verify: %+v %v", rep, err)
				}
				if rep.Corrupt == 0 {
					t.Errorf("verify found nothing wrong with a FIFO %s", name)
				}
			})
			noHang(t, "replay", func() {
				var out bytes.Buffer
				if _, err := s.Replay(bytes.NewReader(big), &out, "r", "big", DefaultLimits().StubSettings(PolicyLegacy)); err != nil {
					t.Errorf("replay: %v", err)
				}
			})
		})
	}
	for _, name := range []string{activityName, lockName} {
		t.Run(name, func(t *testing.T) {
			s, dir := setup(t)
			fifoAt(t, filepath.Join(dir, name))
			old := time.Now().Add(-2 * time.Hour)
			os.Chtimes(filepath.Join(dir, name), old, old)
			noHang(t, "read", func() { readSmall(t, s) })
			noHang(t, "retain", func() {
				L := DefaultLimits()
				L.Threshold = Unlimited
				var out bytes.Buffer
				res, err := s.Retain(bytes.NewReader([]byte("more\n")), &out, RetainOptions{Run: "r", Call: "more", Limits: L})
				if err != nil {
					t.Errorf("retain: %v", err)
				} else if name == lockName && !res.Verbatim {
					t.Errorf("retain into a run whose lock is a FIFO stored the value: %+v", res)
				}
			})
			noHang(t, "verify", func() { s.Verify(VerifyOptions{Run: "r"}) })
			noHang(t, "busy", func() { s.RunBusy("r") })
		})
	}
}
