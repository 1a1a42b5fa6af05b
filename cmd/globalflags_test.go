package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The global flags (--runs-dir, --run, --config, --json) work before the
// command's name as after it, for every command: the same output, the
// same status, and the flags are obeyed (a command that ignored them would
// fail for want of a run or find an empty store).
func TestGlobalFlagsEitherSide(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	big := filepath.Join(dir, "big.txt")
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("line " + strings.Repeat("x", i%7) + "\n")
	}
	if err := os.WriteFile(big, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "cfg.toml")
	if err := os.WriteFile(cfg, []byte("threshold = \"1KiB\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		st := Main(append([]string{"retval"}, args...), strings.NewReader(stdin), &out, &errb)
		return st, out.String(), errb.String()
	}
	if st, _, e := run("", "retain", "--runs-dir", runs, "--run", "r", "--call", "c1", "--threshold", "0", big); st != 0 {
		t.Fatal(e)
	}
	global := []string{"--runs-dir", runs, "--run", "r", "--config", cfg}
	// The hook takes its run from the hook input's session id and answers
	// in Claude Code's JSON: --run and --json do not apply to it.
	hookGlobal := []string{"--runs-dir", runs, "--config", cfg}
	type tc struct {
		args  []string // the command's name (and subcommand), then its own arguments
		words int      // how many of args name the command
		stdin string
		want  int      // the status
		flags []string // the global flags given (nil: global)
		out   string   // stdout holds this
	}
	cases := map[string]tc{
		"retain":     {args: []string{"retain", "--call", "c2", big}, words: 1, out: "[retained #c2]"},
		"exec":       {args: []string{"exec", "--call", "c3", "--", "cat", big}, words: 1, out: "[retained #c3]"},
		"replay":     {args: []string{"replay", "--call", "c1", big}, words: 1, out: "[retained #c1]"},
		"peek":       {args: []string{"peek", "c1", "--lines", "2"}, words: 1, out: "2: line x\n"},
		"resolve":    {args: []string{"resolve", "c1", "--lines", "3"}, words: 1, out: "line xx\n"},
		"expand":     {args: []string{"expand"}, words: 1, stdin: `{"a": {"$ref": "c1", "lines": "1"}}`, out: `{"a": "line \n"}`},
		"catalogue":  {args: []string{"catalogue"}, words: 1, out: "c1"},
		"gc":         {args: []string{"gc", "--dry-run"}, words: 1, out: "would remove 0 runs"},
		"verify":     {args: []string{"verify"}, words: 1, out: "all good"},
		"config":     {args: []string{"config"}, words: 1, out: "threshold"},
		"completion": {args: []string{"completion", "bash"}, words: 1, out: "retval"},
		"hook":       {args: []string{"hook", "claude-code"}, words: 2, flags: hookGlobal, stdin: `{"session_id":"s","tool_use_id":"t","tool_name":"Bash","tool_response":{"stdout":"hi","stderr":""}}`},
		"mcp":        {args: []string{"mcp", "serve"}, words: 2, stdin: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n", out: "retval_peek"},
	}
	app := newApp(&env{})
	for _, c := range app.Commands {
		t.Run(c.Name, func(t *testing.T) {
			k, ok := cases[c.Name]
			if !ok {
				// A command added since: it must at least take the global
				// flags before its name.
				if st, _, e := run("", append(append(clone(global), "--json"), c.Name, "--help")...); st != 0 {
					t.Fatalf("retval %v %s --help: %d %s", global, c.Name, st, e)
				}
				return
			}
			g := global
			if k.flags != nil {
				g = k.flags
			}
			name, rest := k.args[:k.words], k.args[k.words:]
			before := append(append(clone(g), name...), rest...)
			after := append(append(clone(name), g...), rest...)
			st1, out1, err1 := run(k.stdin, before...)
			st2, out2, err2 := run(k.stdin, after...)
			if st1 != k.want || !strings.Contains(out1, k.out) {
				t.Errorf("retval %s: status %d, stdout %q, stderr %q; want %d with %q", strings.Join(before, " "), st1, out1, err1, k.want, k.out)
			}
			if st1 != st2 || out1 != out2 || err1 != err2 {
				t.Errorf("before and after the name differ:\n%v: %d %q %q\n%v: %d %q %q", before, st1, out1, err1, after, st2, out2, err2)
			}
			// --json before the name is --json.
			if c.Name == "catalogue" || c.Name == "config" {
				st, out, e := run("", append([]string{"--json"}, before...)...)
				if st != 0 || !strings.HasPrefix(out, "{") {
					t.Errorf("--json before %s: %d %q %q", c.Name, st, out, e)
				}
			}
		})
	}
}

func clone(s []string) []string { return append([]string(nil), s...) }
