package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// deepjson FILE DEPTH: write DEPTH nested arrays around the number 1.
	scriptCmds["deepjson"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: deepjson FILE DEPTH")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		doc := strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + "\n"
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(doc), 0o644))
	}
	// parallel N OUT PROG ARGS...: start N copies of PROG at once, as
	// separate processes, and wait for all. OUT gets one "exit CODE" line per
	// process (sorted); OUT.stdout and OUT.stderr their outputs.
	scriptCmds["parallel"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 3 {
			ts.Fatalf("usage: parallel N OUT PROG ARGS...")
		}
		n, err := strconv.Atoi(args[0])
		ts.Check(err)
		prog := lookTSPath(ts, args[2])
		var env []string
		for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "RETVAL_RUNS_DIR", "RETVAL_RUN", "GOCOVERDIR"} {
			env = append(env, k+"="+ts.Getenv(k))
		}
		var (
			mu             sync.Mutex
			wg             sync.WaitGroup
			codes          []string
			stdout, stderr bytes.Buffer
		)
		start := make(chan struct{})
		for range n {
			wg.Go(func() {
				c := exec.Command(prog, args[3:]...)
				c.Env, c.Dir = env, ts.MkAbs(".")
				var o, e bytes.Buffer
				c.Stdout, c.Stderr = &o, &e
				<-start
				err := c.Run()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					code = -1
				}
				mu.Lock()
				defer mu.Unlock()
				codes = append(codes, fmt.Sprintf("exit %d", code))
				stdout.Write(o.Bytes())
				stderr.Write(e.Bytes())
			})
		}
		close(start)
		wg.Wait()
		sort.Strings(codes)
		out := ts.MkAbs(args[1])
		ts.Check(os.WriteFile(out, []byte(strings.Join(codes, "\n")+"\n"), 0o644))
		ts.Check(os.WriteFile(out+".stdout", stdout.Bytes(), 0o644))
		ts.Check(os.WriteFile(out+".stderr", stderr.Bytes(), 0o644))
	}
}

// lookTSPath finds prog in the script's PATH.
func lookTSPath(ts *testscript.TestScript, prog string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	ts.Fatalf("%s not found in PATH", prog)
	return ""
}
