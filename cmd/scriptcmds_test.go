package cmd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are the helper commands the scripts use.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// gen FILE LINES [WIDTH]: write LINES numbered lines ("line N xxxx…").
	"gen": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: gen FILE LINES [WIDTH]")
		}
		n, _ := strconv.Atoi(args[1])
		width := 0
		if len(args) > 2 {
			width, _ = strconv.Atoi(args[2])
		}
		var b bytes.Buffer
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", width))
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
	},
	// repeat FILE COUNT TEXT: write TEXT (with \n escapes) COUNT times.
	"repeat": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: repeat FILE COUNT TEXT")
		}
		n, _ := strconv.Atoi(args[1])
		text, err := strconv.Unquote(`"` + args[2] + `"`)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Repeat(text, n)), 0o644))
	},
	// nofiles DIR GLOB: fail if DIR holds a file matching GLOB (debris check).
	"nofiles": func(ts *testscript.TestScript, neg bool, args []string) {
		m, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), args[1]))
		if len(m) > 0 && !neg {
			ts.Fatalf("unexpected files: %v", m)
		}
		if len(m) == 0 && neg {
			ts.Fatalf("no files match %s", args[1])
		}
	},
	// count DIR N: DIR holds exactly N entries.
	"count": func(ts *testscript.TestScript, neg bool, args []string) {
		ents, err := os.ReadDir(ts.MkAbs(args[0]))
		ts.Check(err)
		want, _ := strconv.Atoi(args[1])
		if len(ents) != want {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			ts.Fatalf("%s holds %d entries, want %d: %v", args[0], len(ents), want, names)
		}
	},
}

func init() {
	// race WANT_OK ARGS... -- FILE...: start one `retval ARGS... FILE` per
	// FILE at once, as separate processes; fail unless exactly WANT_OK
	// succeed and every other exits 1 (conflict).
	scriptCmds["race"] = func(ts *testscript.TestScript, neg bool, args []string) {
		want, _ := strconv.Atoi(args[0])
		var cmdArgs, files []string
		for i, a := range args[1:] {
			if a == "--" {
				cmdArgs, files = args[1:i+1], args[i+2:]
				break
			}
		}
		bin, err := lookPath(ts, "retval")
		ts.Check(err)
		cmds := make([]*exec.Cmd, len(files))
		for i, f := range files {
			c := exec.Command(bin, append(cmdArgs, ts.MkAbs(f))...)
			c.Env = scriptEnv(ts)
			c.Dir = ts.MkAbs(".")
			ts.Check(c.Start())
			cmds[i] = c
		}
		ok, conflict := 0, 0
		for _, c := range cmds {
			err := c.Wait()
			switch {
			case err == nil:
				ok++
			case c.ProcessState.ExitCode() == 1:
				conflict++
			default:
				ts.Fatalf("retval exited %v", err)
			}
		}
		if ok != want || ok+conflict != len(files) {
			ts.Fatalf("%d succeeded, %d conflicted; want %d to succeed", ok, conflict, want)
		}
	}
}

func lookPath(ts *testscript.TestScript, name string) (string, error) {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not in the script's PATH", name)
}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"RETVAL_STORE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_EC2_METADATA_DISABLED", "PATH", "HOME", "TMPDIR", "RETVAL_RUNS_DIR", "GOCOVERDIR"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	// testscript's re-exec of the test binary as "retval" is keyed by this.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TESTSCRIPT_") || strings.HasPrefix(kv, "GO") {
			env = append(env, kv)
		}
	}
	return env
}

func init() {
	// flipbyte FILE OFFSET: invert one byte of FILE (a corrupt value or a
	// damaged index).
	scriptCmds["flipbyte"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: flipbyte FILE OFFSET")
		}
		p := ts.MkAbs(args[0])
		off, err := strconv.Atoi(args[1])
		ts.Check(err)
		ts.Check(os.Chmod(p, 0o600))
		b, err := os.ReadFile(p)
		ts.Check(err)
		b[off] ^= 0xff
		ts.Check(os.WriteFile(p, b, 0o600))
	}
}

// scriptCondition answers the scripts' own conditions: [root] holds when
// the tests run as root (CI does), which chown needs.
func scriptCondition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	if cond == "s3" {
		return false, nil // TestScriptS3 says true
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
