// Package reliability holds the tests that try to make retval lose data:
// processes killed at random points, racing writers and collectors, full
// disks. They run the real binary, as a harness does.
package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/s3test"
)

// retval is the binary under test, built once by TestMain.
var retval string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "retval-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	retval = filepath.Join(dir, "retval")
	args := []string{"build", "-o", retval}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/retval/retval")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building retval:", err)
		os.Exit(1)
	}
	if raceEnabled {
		// The race runtime sleeps a second at every exit by default; a
		// race still makes the binary exit 66, which every test notices.
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	code := m.Run()
	s3test.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// quick reports whether to run the short form of the long tests: under
// -short, and under -race (CI's run), where the binary under test is
// several times slower.
func quick() bool { return testing.Short() || raceEnabled }
