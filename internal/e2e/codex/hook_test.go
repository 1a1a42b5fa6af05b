package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// TestCodexHook proves retval's Codex hook with the real Codex CLI:
// installed with --wrap-shell and --expand-shell, a shell command's
// whole output is retained (the model sees the stub and reads more with
// retval peek), a heredoc written as an $expand: reference creates a
// byte-exact file, an MCP tool receives the expanded text (string and
// object forms), a failing reference is refused naming each failure, and
// uninstall leaves no trace.
func TestCodexHook(t *testing.T) {
	if e2etest.Isolated() {
		hookScenarios(t)
		return
	}
	codex := e2etest.Bin(t, codexPackage, "codex")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envCodex+"="+codex, envFS+"="+fs, envRetval+"="+retval)
}

const moveFrom, moveTo = 2100, 2399

func newText() string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "// new line %d of the moved handler file\n", i)
	}
	return b.String()
}

func expandNode(v any) string {
	b, _ := json.Marshal(v)
	return "$expand:" + string(b)
}

// heredoc is the shell command the model writes: cat into moved.go a
// heredoc of the new lines and the moved range of the value call_cat.
func heredoc() string {
	return expandNode(map[string]any{"$concat": []any{"cat > moved.go <<'RETVAL_EOF'\n" + newText(),
		map[string]any{"$ref": "call_cat", "lines": []int{moveFrom, moveTo}}, "RETVAL_EOF\n"}})
}

func hookScript(dir string) func(conversation) reply {
	return func(c conversation) reply {
		if c.Prompt != "codex hook scenario" {
			return reply{Text: "ok"}
		}
		last := c.Last()
		switch {
		case last == nil:
			return reply{CallID: "call_cat", Name: "exec_command", Args: map[string]any{"cmd": "cat server.go"}}
		case last.ID == "call_cat":
			return reply{CallID: "call_write", Name: "exec_command", Args: map[string]any{"cmd": heredoc()}}
		case last.ID == "call_write":
			return reply{CallID: "call_mcp1", Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_string.txt"), "content": `$expand:{"$ref": "call_cat", "lines": [1, 50]}`}}
		case last.ID == "call_mcp1":
			return reply{CallID: "call_mcp2", Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_object.txt"), "content": map[string]any{"$ref": "call_cat", "lines": []int{51, 60}}}}
		case last.ID == "call_mcp2":
			return reply{CallID: "call_bad", Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{
				"path": filepath.Join(dir, "bad.txt"), "content": `$expand:{"$concat": ["x", {"$ref": "call_cat", "lines": [9000, 9001]}, {"$ref": "call_nope"}]}`}}
		case last.ID == "call_bad":
			return reply{CallID: "call_seq", Name: "exec_command", Args: map[string]any{"cmd": "seq 1 100000"}}
		case last.ID == "call_seq":
			if cmd := e2etest.ReadMore(shellOutput(last.Text)); cmd != "" {
				return reply{CallID: "call_more", Name: "exec_command", Args: map[string]any{"cmd": cmd}}
			}
		}
		return reply{Text: "done"}
	}
}

func hookScenarios(t *testing.T) {
	without := 0
	{ // the same command through the shell alone, for the before/after
		s := newSession(t)
		m := startMock(t, shellScript("seq 1 100000"))
		s.configureShell(m)
		s.run(m, "codex scenario")
		got, _ := m.Result("call_run")
		without = len(got)
	}
	s := newSession(t)
	src := e2etest.GoSource(t, "src/net/http/server.go")
	lines := strings.SplitAfter(string(src), "\n")
	if err := os.WriteFile(filepath.Join(s.Proj, "server.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(s.codexHome, "hooks.json")
	out := s.RunRetval("hook", "codex", "install", "--user", "--wrap-shell", "--expand-shell")
	if !strings.Contains(out, "added the hook") {
		t.Fatalf("install: %s", out)
	}
	s.installOnLoginPath() // the read-more line runs retval by name
	m := startMock(t, hookScript(s.Proj))
	s.configure(m, os.Getenv(envFS), s.Proj)
	s.runArgs(m, "codex hook scenario", "--dangerously-bypass-hook-trust")

	stub, _ := m.Result("call_cat")
	if !strings.Contains(stub, "[retained #call_cat] ") {
		t.Fatalf("cat through the shell: the model did not receive a stub: %.300q", stub)
	}
	want := newText() + strings.Join(lines[moveFrom-1:moveTo], "")
	if got, err := os.ReadFile(filepath.Join(s.Proj, "moved.go")); err != nil || string(got) != want {
		t.Errorf("moved.go: %d bytes (%v), want %d bytes exactly", len(got), err, len(want))
	}
	for name, r := range map[string][2]int{"mcp_string.txt": {1, 50}, "mcp_object.txt": {51, 60}} {
		got, err := os.ReadFile(filepath.Join(s.Proj, name))
		if w := strings.Join(lines[r[0]-1:r[1]], ""); err != nil || string(got) != w {
			t.Errorf("%s: %q (%v), want lines %d-%d", name, got, err, r[0], r[1])
		}
	}
	bad, _ := m.Result("call_bad")
	if _, err := os.Stat(filepath.Join(s.Proj, "bad.txt")); err == nil || !strings.Contains(bad, `"/content/$concat/1"`) ||
		!strings.Contains(bad, "(invalid_range)") || !strings.Contains(bad, `"/content/$concat/2"`) || !strings.Contains(bad, "(unknown_reference)") {
		t.Errorf("the bad write: file written %v, result %q", err == nil, bad)
	}
	reqs := m.Requests()
	body := reqs[len(reqs)-1].Body
	summary := fmt.Sprintf("[retval expanded /command: %d bytes, sha256:", len("cat > moved.go <<'RETVAL_EOF'\n"+want+"RETVAL_EOF\n"))
	if !strings.Contains(body, jsonEscape(jsonEscape(heredoc()))) && !strings.Contains(body, jsonEscape(heredoc())) {
		t.Errorf("the history does not hold the reference form the model wrote")
	}
	if !strings.Contains(body, jsonEscape(summary)) {
		t.Errorf("the model was not told %s…", summary)
	}

	seq := e2etest.SeqOutput(100000)
	got, _ := m.Result("call_seq")
	t.Logf("the model received for seq 1 100000 (%d bytes): %d bytes through the hook, %d through the shell alone:\n%s", len(seq), len(got), without, got)
	if !strings.Contains(got, "] 588895 bytes, 100000 lines, sha256:"+e2etest.SHA(seq)+", complete, exit 0\n") || len(got) > 2000 {
		t.Errorf("seq 1 100000: not a stub of at most 2,000 bytes whose value verifies")
	}
	if v := s.StoredValue(sessionOf(t, s), "call_seq"); e2etest.SHA(v) != e2etest.SHA(seq) {
		t.Errorf("the stored value is %d bytes, not seq's output", len(v))
	}
	cmd := e2etest.ReadMore(shellOutput(got))
	a, b := e2etest.PeekRange(t, cmd)
	more, ok := m.Result("call_more")
	if !ok {
		t.Fatalf("the model never ran the read-more command %q", cmd)
	}
	e2etest.CheckPeek(t, shellOutput(more), e2etest.Lines(string(seq)), a, b)

	var ledger struct {
		Total struct {
			References  int64 `json:"references"`
			OutputSaved int64 `json:"output_saved_bytes"`
		} `json:"total"`
	}
	json.Unmarshal(s.Ledger(sessionOf(t, s)), &ledger)
	if ledger.Total.References != 3 || ledger.Total.OutputSaved <= 0 {
		t.Errorf("stats: %+v", ledger.Total)
	}
	t.Logf("stats: %d references saved %d output bytes", ledger.Total.References, ledger.Total.OutputSaved)

	s.RunRetval("hook", "codex", "uninstall", "--user")
	if _, err := os.Stat(hooks); !os.IsNotExist(err) {
		t.Errorf("uninstall left %s: %v", hooks, err)
	}
}

// sessionOf is the one run of the session's store: Codex's session id.
func sessionOf(t *testing.T, s *session) string {
	ents, err := os.ReadDir(s.StoreDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".values"); ok {
			return name
		}
	}
	t.Fatal("no run in the store")
	return ""
}

// jsonEscape is s as it stands inside a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
