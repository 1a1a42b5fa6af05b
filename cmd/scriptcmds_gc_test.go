package cmd

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/internal/testenv"
	"github.com/retval/retval/pkg/config"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	testenv.BecomeLockHolder()
	// holds are the lock-holder processes of the running script, by path.
	holds := map[string]*exec.Cmd{}
	var mu sync.Mutex // scripts run in parallel
	scriptCmds["touchold"] = touchOld
	scriptCmds["holdlock"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || len(args) > 2 || len(args) == 2 && args[0] != "-ex" {
			ts.Fatalf("usage: holdlock [-ex] FILE")
		}
		spec := ts.MkAbs(args[len(args)-1])
		if len(args) == 2 {
			spec = "ex:" + spec
		}
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), testenv.HoldLockEnv+"="+spec)
		stdin, err := c.StdinPipe()
		ts.Check(err)
		out, err := c.StdoutPipe()
		ts.Check(err)
		c.Stderr = os.Stderr
		ts.Check(c.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "locked\n" {
			c.Process.Kill()
			c.Wait()
			ts.Fatalf("lock holder did not take %s: %q %v", spec, line, err)
		}
		key := ts.MkAbs(args[len(args)-1])
		mu.Lock()
		holds[key] = c
		mu.Unlock()
		ts.Defer(func() {
			stdin.Close()
			c.Process.Kill()
			c.Wait()
		})
	}
	scriptCmds["unlock"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: unlock FILE")
		}
		key := ts.MkAbs(args[0])
		mu.Lock()
		c, ok := holds[key]
		delete(holds, key)
		mu.Unlock()
		if !ok {
			ts.Fatalf("no lock held on %s", args[0])
		}
		c.Process.Kill()
		c.Wait()
	}
	// mkfifo PATH: make a named pipe, which a store must never open in a
	// way that blocks.
	scriptCmds["mkfifo"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: mkfifo PATH")
		}
		ts.Check(makeFIFO(ts.MkAbs(args[0])))
	}
	// sub FILE OLD NEW: replace every OLD in FILE with NEW (literal text).
	scriptCmds["sub"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: sub FILE OLD NEW")
		}
		p := ts.MkAbs(args[0])
		b, err := os.ReadFile(p)
		ts.Check(err)
		if !strings.Contains(string(b), args[1]) {
			ts.Fatalf("%s does not contain %q", args[0], args[1])
		}
		ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(string(b), args[1], args[2])), 0o644))
	}
}

// touchOld: touchold PATH DURATION sets the modification time of PATH, and
// of everything under it when it is a directory, to DURATION before now —
// RETVAL_NOW when the script sets it, else the real clock. So a script
// makes a run idle without sleeping.
func touchOld(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: touchold PATH DURATION")
	}
	d, err := config.ParseDuration(args[1])
	ts.Check(err)
	now := time.Now()
	if v := ts.Getenv("RETVAL_NOW"); v != "" {
		now, err = time.Parse(time.RFC3339, v)
		ts.Check(err)
	}
	t := now.Add(-d)
	root := ts.MkAbs(args[0])
	var paths []string
	ts.Check(filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	// Children first: changing a file's time does not change its
	// directory's, but be explicit about the order anyway. A symlink's own
	// time is set, never its target's (gc judges a link by its own).
	for i := len(paths) - 1; i >= 0; i-- {
		ts.Check(lchtimes(paths[i], t))
	}
}
