package codex

import (
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

// heredoc is the shell command the model writes: cat into moved.go a
// heredoc of the new lines and the moved range of the value call_cat.
func heredoc() string {
	return e2etest.Expand(map[string]any{"$concat": []any{"cat > moved.go <<'RETVAL_EOF'\n" + e2etest.NewText(),
		map[string]any{"$ref": "call_cat", "lines": []int{e2etest.MoveFrom, e2etest.MoveTo}}, "RETVAL_EOF\n"}})
}

func hookScript(dir string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptIs("codex hook scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_cat", Name: "exec_command", Args: map[string]any{"cmd": "cat server.go"}}},
			{After: "call_cat", Reply: reply{ID: "call_write", Name: "exec_command", Args: map[string]any{"cmd": heredoc()}}},
			{After: "call_write", Reply: reply{ID: "call_mcp1", Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_string.txt"), "content": e2etest.MCPString("call_cat")}}},
			{After: "call_mcp1", Reply: reply{ID: "call_mcp2", Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_object.txt"), "content": e2etest.MCPObject("call_cat")}}},
			{After: "call_mcp2", Reply: reply{ID: "call_bad", Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{
				"path": filepath.Join(dir, "bad.txt"), "content": e2etest.BadContent("call_cat", "call_nope")}}},
			{After: "call_bad", Reply: reply{ID: "call_seq", Name: "exec_command", Args: map[string]any{"cmd": "seq 1 100000"}}},
			readMore("call_seq", "call_more"),
		},
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
	_, lines := s.MoveSource()
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
	want := e2etest.Moved(lines)
	if got, err := os.ReadFile(filepath.Join(s.Proj, "moved.go")); err != nil || string(got) != want {
		t.Errorf("moved.go: %d bytes (%v), want %d bytes exactly", len(got), err, len(want))
	}
	e2etest.CheckMCPWrites(t, s.Proj, lines)
	bad, _ := m.Result("call_bad")
	e2etest.CheckBad(t, filepath.Join(s.Proj, "bad.txt"), bad)
	reqs := m.Requests()
	body := reqs[len(reqs)-1].Body
	summary := fmt.Sprintf("[retval expanded /command: %d bytes, sha256:", len("cat > moved.go <<'RETVAL_EOF'\n"+want+"RETVAL_EOF\n"))
	if !strings.Contains(body, e2etest.JSONText(e2etest.JSONText(heredoc()))) && !strings.Contains(body, e2etest.JSONText(heredoc())) {
		t.Errorf("the history does not hold the reference form the model wrote")
	}
	if !strings.Contains(body, e2etest.JSONText(summary)) {
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

	refs, saved := s.References(sessionOf(t, s))
	if refs != 3 || saved <= 0 {
		t.Errorf("stats: %d references, %d output bytes saved", refs, saved)
	}
	t.Logf("stats: %d references saved %d output bytes", refs, saved)

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
