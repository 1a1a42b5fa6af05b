package cmd

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// startupAllocs bounds the allocations of one small peek, in process:
// start-up work that grows with settings × flags (urfave/cli v2's Names
// ran a regexp on every call; reading each setting's flag used to call it
// for every flag of every command in the lineage; building every
// command's flags, 3,696 allocations in all, where the peek needs its own:
// 1,616) shows up here first.
const startupAllocs = 2000

func TestStartupAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race (CI runs this test apart for that)")
	}
	dir := t.TempDir()
	s := retain.Open(dir)
	l := retain.DefaultLimits()
	l.Threshold = retain.Unlimited
	if _, err := s.Retain(strings.NewReader("a\nb\n"), io.Discard, retain.RetainOptions{Run: "r", Call: "small", Limits: l}); err != nil {
		t.Fatal(err)
	}
	args := []string{"retval", "peek", "--runs-dir", dir, "--run", "r", "--lines", "1-10", "small"}
	var out bytes.Buffer
	n := testing.AllocsPerRun(20, func() {
		out.Reset()
		if code := Main(args, strings.NewReader(""), &out, io.Discard); code != 0 {
			t.Fatalf("peek: exit %d", code)
		}
	})
	t.Logf("%.0f allocations per peek", n)
	if n > startupAllocs {
		t.Errorf("one small peek makes %.0f allocations, more than %d", n, startupAllocs)
	}
}
