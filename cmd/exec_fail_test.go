package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"syscall"
	"testing"
)

// fullWriter is /dev/full: every write fails.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A stub that cannot be written is a failure, said, exit 1, as retain's.
func TestExecWriteError(t *testing.T) {
	runs := t.TempDir()
	for _, json := range []bool{false, true} {
		args := []string{"retval", "exec", "--runs-dir", runs, "--run", "r", "--", "seq", "1", "20000"}
		if json {
			args = append(args[:2], append([]string{"--json"}, args[2:]...)...)
		}
		var stderr bytes.Buffer
		code := Main(args, strings.NewReader(""), fullWriter{}, &stderr)
		// With --json the error goes to stdout too, where it is lost
		// as well: the exit status still says it.
		if code != 1 || (!json && !strings.Contains(stderr.String(), "no space left on device (io)")) {
			t.Errorf("json %v: exit %d, stderr %q", json, code, stderr.String())
		}
	}
}

// A stub that could not be written never reached the model: stats must
// not count it as shown (it overstated what was kept out of context).
// Written to a working stdout, the same stub is counted: the test can
// fail.
func TestStubNotWrittenNotCounted(t *testing.T) {
	big := strings.Repeat("a line of output\n", 3000)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"exec", []string{"exec", "--", "sh", "-c", "yes 'a line of output' | head -n 3000"}},
		{"retain", []string{"retain", "--call", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, written := range []bool{false, true} {
				runs := t.TempDir()
				args := append([]string{"retval", "--runs-dir", runs, "--run", "r"}, tc.args...)
				var out io.Writer = fullWriter{}
				if written {
					out = io.Discard
				}
				var stderr bytes.Buffer
				code := Main(args, strings.NewReader(big), out, &stderr)
				if (code == 0) != written {
					t.Fatalf("written %v: exit %d, stderr %q", written, code, stderr.String())
				}
				code, stats, errs := run(t, "", "stats", "--runs-dir", runs, "--run", "r", "--json")
				if code != 0 {
					t.Fatalf("stats: exit %d: %s", code, errs)
				}
				var s struct {
					Total struct {
						Values    int   `json:"values"`
						StubBytes int64 `json:"stub_bytes"`
					} `json:"total"`
				}
				if err := json.Unmarshal([]byte(stats), &s); err != nil {
					t.Fatal(err)
				}
				if shown := s.Total.Values > 0 || s.Total.StubBytes > 0; shown != written {
					t.Errorf("stub written %v, counted as shown %v (%+v)", written, shown, s.Total)
				}
			}
		})
	}
}
