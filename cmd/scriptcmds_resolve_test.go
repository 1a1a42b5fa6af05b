package cmd

import (
	"bytes"
	"encoding/json"
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
	// latin1 IN OUT: write the UTF-8 text of IN to OUT as ISO-8859-1, one
	// byte per character (every character of IN must be below U+0100).
	scriptCmds["latin1"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: latin1 IN OUT")
		}
		data, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		var out []byte
		for _, r := range string(data) {
			if r >= 0x100 {
				ts.Fatalf("%s holds %q, which ISO-8859-1 has no byte for", args[0], r)
			}
			out = append(out, byte(r))
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
	}
	// listall RUN OUT: list RUN through resolve --batch, one
	// {"$list_results": N} per call, following "next" from 0 to the end.
	// Every answer must be a page of at most 8192 bytes after JSON escaping
	// (the default bound of one lookup). OUT gets a line "from N: K" per
	// page, then the ids of every value shown, one a line.
	scriptCmds["listall"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: listall RUN OUT")
		}
		prog := lookTSPath(ts, "retval")
		var pages, ids []string
		for from := 0; len(pages) < 100; {
			c := exec.Command(prog, "resolve", "--run", args[0], "--batch")
			for _, k := range []string{"RETVAL_STORE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_EC2_METADATA_DISABLED", "PATH", "HOME", "TMPDIR", "RETVAL_RUNS_DIR", "RETVAL_MAX_LOOKUP_BYTES", "GOCOVERDIR"} {
				c.Env = append(c.Env, k+"="+ts.Getenv(k))
			}
			c.Stdin = strings.NewReader(fmt.Sprintf(`[{"$list_results": %d}]`, from))
			out, err := c.Output()
			ts.Check(err)
			var ans struct {
				OK   bool            `json:"ok"`
				Text json.RawMessage `json:"text"`
			}
			if err := json.Unmarshal(out, &ans); err != nil || !ans.OK {
				ts.Fatalf("from %d: %s (%v)", from, out, err)
			}
			if n := len(ans.Text) - 2; n > 8192 {
				ts.Fatalf("from %d: an answer of %d bytes after JSON escaping, over 8192", from, n)
			}
			var text string
			ts.Check(json.Unmarshal(ans.Text, &text))
			var page struct {
				Page   int  `json:"page"`
				Next   *int `json:"next"`
				Values []struct {
					ID string `json:"id"`
				} `json:"values"`
			}
			ts.Check(json.Unmarshal([]byte(text), &page))
			if page.Page != from {
				ts.Fatalf("from %d: page %d", from, page.Page)
			}
			pages = append(pages, fmt.Sprintf("from %d: %d", from, len(page.Values)))
			for _, v := range page.Values {
				ids = append(ids, v.ID)
			}
			if page.Next == nil {
				break
			}
			from = *page.Next
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(append(pages, ids...), "\n")+"\n"), 0o644))
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
		for _, k := range []string{"RETVAL_STORE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_EC2_METADATA_DISABLED", "PATH", "HOME", "TMPDIR", "WORK", "RETVAL_RUNS_DIR", "RETVAL_RUN", "GOCOVERDIR"} {
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
