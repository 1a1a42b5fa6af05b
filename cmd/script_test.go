package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"retval": func() { os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs the end-to-end scripts in testdata/script, one per
// feature. Each runs retval as a separate process, as a harness does.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../testdata/script",
		RequireExplicitExec: false,
		Setup: func(e *testscript.Env) error {
			e.Setenv("RETVAL_RUNS_DIR", e.WorkDir+"/runs")
			e.Setenv("LONGID", strings.Repeat("a", 10000))
			return nil
		},
		Cmds: scriptCmds,
	})
}
