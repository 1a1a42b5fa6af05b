package retain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a file system that ignores case (NTFS; APFS by default), ids that
// differ only in case name the same files. The second is refused with a
// conflict that says so, whatever its bytes (its stub would otherwise
// name the first), and a lookup of it is an unknown value, never the
// other's bytes. Skipped where the file system tells case apart.
func TestIDsDifferingInCase(t *testing.T) {
	s := testStore(t)
	probe := filepath.Join(t.TempDir(), "a")
	os.WriteFile(probe, nil, 0o600)
	if _, err := os.Stat(filepath.Join(filepath.Dir(probe), "A")); err != nil {
		t.Skip("this file system tells case apart")
	}
	data := bytes.Repeat([]byte("build output\n"), 1000)
	retainAll(t, s, "r", "build-log", data)
	L := DefaultLimits()
	L.Threshold = Unlimited // retained, however small
	for _, b := range [][]byte{data, []byte("other bytes\n")} {
		_, err := s.Retain(bytes.NewReader(b), new(bytes.Buffer), RetainOptions{Run: "r", Call: "BUILD-LOG", Limits: L})
		if CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), `needs the files of value "build-log"`) {
			t.Errorf("retain of BUILD-LOG beside build-log: %v", err)
		}
	}
	_, err := s.OpenValue("r", "BUILD-LOG")
	var uv *UnknownValueError
	if !errors.As(err, &uv) || len(uv.Nearest) == 0 || uv.Nearest[0] != "build-log" {
		t.Errorf("OpenValue(BUILD-LOG) = %v, want unknown, nearest build-log", err)
	}
}
