package expand

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"

	"github.com/retval/retval/pkg/retain"
)

// stepWithin runs one lookup in step s and fails the test if it has not
// returned within a minute: a hang becomes a failure, not a stuck run.
func stepWithin(t *testing.T, rs *Resolver, s string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := rs.Step(s, lookups(t, `{"$ref": "nl"}`), Budget{})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("step %q: no answer after a minute: the ledger blocked", s)
		return nil
	}
}

// A step ledger, or the directory that holds them, that is anything but
// what retval writes there is corrupt, with what to do: never followed,
// never blocked on, never read without a bound, and left as it is.
func TestLedgerHostile(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, steps string) // steps: the .steps path
		msg   string
		check func(t *testing.T, steps string)
	}{
		{"fifo ledger", func(t *testing.T, steps string) {
			mkdir(t, steps)
			testenv.Mkfifo(t, filepath.Join(steps, "s.json"))
		}, "step ledger " + "%s/s.json is not a regular file (a FIFO, a device or a directory) and is never read; remove it, or start a new step with another --step id", func(t *testing.T, steps string) {
			if fi, err := os.Lstat(filepath.Join(steps, "s.json")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Fatal(fi, err)
			}
		}},
		{"ledger linked to /dev/zero", func(t *testing.T, steps string) {
			mkdir(t, steps)
			if err := testenv.Symlink(t, "/dev/zero", filepath.Join(steps, "s.json")); err != nil {
				t.Fatal(err)
			}
		}, "step ledger %s/s.json is a symlink and is never followed; start a new step with another --step id", nil},
		{"ledger linked outside", func(t *testing.T, steps string) {
			mkdir(t, steps)
			if err := testenv.Symlink(t, filepath.Join(outside, "x.json"), filepath.Join(steps, "s.json")); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink and is never followed", func(t *testing.T, steps string) {
			if _, err := os.Lstat(filepath.Join(outside, "x.json")); !os.IsNotExist(err) {
				t.Fatal("a file was made through the link:", err)
			}
		}},
		{"ledger is a directory", func(t *testing.T, steps string) {
			mkdir(t, steps)
			mkdir(t, filepath.Join(steps, "s.json"))
		}, "s.json is not a regular file", nil},
		{"ledger over its bound", func(t *testing.T, steps string) {
			mkdir(t, steps)
			big := `{"step":"s","lookups":0,"bytes":0}` + strings.Repeat(" ", 1<<20)
			if err := os.WriteFile(filepath.Join(steps, "s.json"), []byte(big), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "s.json is unreadable (over 1024 bytes, and retval writes 256); start a new step with another --step id", nil},
		{"steps is a fifo", func(t *testing.T, steps string) {
			testenv.Mkfifo(t, steps)
		}, "step ledgers' directory %s cannot hold ledgers: remove it and retval makes it again, or resolve without --step; it is not a directory (symlinks are never followed)", nil},
		{"steps is a file", func(t *testing.T, steps string) {
			if err := os.WriteFile(steps, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "it is not a directory", nil},
		{"steps linked outside", func(t *testing.T, steps string) {
			if err := testenv.Symlink(t, outside, steps); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory (symlinks are never followed)", func(t *testing.T, steps string) {
			if names, _ := os.ReadDir(outside); len(names) != 0 {
				t.Fatalf("%d entries made outside", len(names))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newStore(t, testValues)
			steps := filepath.Join(rs.Store.RunDir("r"), ".steps")
			tc.make(t, steps)
			err := stepWithin(t, rs, "s")
			msg := strings.Replace(tc.msg, "%s", steps, 1)
			if retain.CodeOf(err) != retain.CodeCorrupt || !strings.Contains(err.Error(), msg) {
				t.Fatalf("%v (%s); want corrupt containing %q", err, retain.CodeOf(err), msg)
			}
			if _, err := rs.StepSpent("s"); retain.CodeOf(err) != retain.CodeCorrupt {
				t.Fatalf("StepSpent: %v", err)
			}
			if tc.check != nil {
				tc.check(t, steps)
			}
			// Another step is refused or answered, never blocked.
			if err := stepWithin(t, rs, "other"); err != nil && retain.CodeOf(err) != retain.CodeCorrupt {
				t.Fatal(err)
			}
		})
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
}
