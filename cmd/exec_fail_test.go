package cmd

import (
	"bytes"
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
