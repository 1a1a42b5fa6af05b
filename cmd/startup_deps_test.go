package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// startupHeavy are packages whose init costs every retval process a
// measurable share of its start-up (GODEBUG=inittrace=1 retval --version)
// and that the shipped binary does without.
var startupHeavy = map[string]string{
	"github.com/klauspost/cpuid/v2": "≈0.7 ms: its init queries every CPUID leaf (internal/xxh3 uses golang.org/x/sys/cpu instead)",
}

// TestShippedBinaryDeps guards start-up: the default build (no tags) of
// the retval command links none of startupHeavy.
func TestShippedBinaryDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/retval/retval").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if why, ok := startupHeavy[p]; ok {
			t.Errorf("the retval binary links %s (%s)", p, why)
		}
	}
}
