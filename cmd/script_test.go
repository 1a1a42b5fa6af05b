package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/s3test"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(stopS3After{m}, map[string]func(){
		"retval": func() {
			installTestSeams()
			os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// stopS3After runs the tests, then stops the S3 server TestScriptS3
// started, if any.
type stopS3After struct{ m *testing.M }

func (s stopS3After) Run() int {
	code := s.m.Run()
	s3test.StopShared()
	return code
}

// TestScript runs the end-to-end scripts in testdata/script, one per
// feature. Each runs retval as a separate process, as a harness does.
// Scripts about object storage alone are TestScriptS3's: left out here
// rather than skipped.
func TestScript(t *testing.T) {
	all, err := filepath.Glob("../testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !objectStorageOnly(t, f) {
			files = append(files, f)
		}
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: false,
		Setup: func(e *testscript.Env) error {
			e.Setenv("RETVAL_RUNS_DIR", e.WorkDir+"/runs")
			e.Setenv("LONGID", strings.Repeat("a", 10000))
			return nil
		},
		Cmds:      scriptCmds,
		Condition: scriptCondition,
	})
}

// TestScriptZstd runs the reading scripts (peek, resolve, expand) again
// with every value stored as seekable zstd: their output must not change
// with the representation.
func TestScriptZstd(t *testing.T) {
	var files []string
	for _, pat := range []string{"peek_*.txtar", "resolve_*.txtar", "expand_*.txtar"} {
		m, err := filepath.Glob(filepath.Join("../testdata/script", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no reading scripts found")
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(e *testscript.Env) error {
			e.Setenv("RETVAL_RUNS_DIR", e.WorkDir+"/runs")
			e.Setenv("LONGID", strings.Repeat("a", 10000))
			e.Setenv("RETVAL_COMPRESS", "zstd")
			return nil
		},
		Cmds:      scriptCmds,
		Condition: scriptCondition,
	})
}
