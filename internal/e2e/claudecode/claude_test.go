package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// session is one fresh Claude Code environment (see e2etest.Session),
// with the Claude Code CLI and the filesystem MCP server.
type session struct {
	*e2etest.Session
	t             *testing.T
	claude, mcpFS string
}

func newSession(t *testing.T) *session {
	s := &session{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t,
		claude: os.Getenv(envClaude), mcpFS: os.Getenv(envFS)}
	s.Extra = []string{"CLAUDE_CODE_TMPDIR=" + s.Tmp,
		"ANTHROPIC_API_KEY=dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}
	return s
}

// result is what claude -p --output-format json prints at the end.
type result struct {
	SessionID string `json:"session_id"`
	IsError   bool   `json:"is_error"`
	Result    string `json:"result"`
	NumTurns  int    `json:"num_turns"`
}

// run runs claude -p PROMPT against the mock and returns its result.
func (s *session) run(m *e2etest.Mock, prompt string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	all := append([]string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}, args...)
	cmd := exec.CommandContext(ctx, s.claude, all...)
	cmd.Dir = s.Proj
	cmd.Env = s.Env("ANTHROPIC_BASE_URL=" + m.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("claude -p: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
	if err != nil {
		s.t.Fatalf("claude: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		s.t.Fatalf("claude printed no result: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	if r.IsError {
		s.t.Fatalf("claude reports an error: %s", out)
	}
	return r
}

func scenarios(t *testing.T) {
	start := time.Now()
	seq := e2etest.SeqOutput(20000)
	if len(seq) != 108894 {
		t.Fatalf("seq 1 20000 is %d bytes", len(seq))
	}
	var bashWith, bashWithout, bashMidWith, bashMidWithout, mcpWith, mcpWithout int
	// What the model received reading the values back, and the ledgers of
	// the sessions with retval (for bench/efficiency.sh).
	var bashPeek, bashMidPeek, mcpPeek int
	var bashLedger, bashMidLedger, mcpLedger json.RawMessage

	t.Run("bash", func(t *testing.T) {
		s := newSession(t)
		// The hook goes into the project's settings, the allow entries into
		// the user's; Claude Code runs a project's hooks untrusted.
		out := s.RunRetval("hook", "claude-code", "install", "--project", s.Proj)
		if !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		m := startMock(t, bashScript)
		r := s.run(m, "bash scenario 20000")
		stub, ok := m.Result("toolu_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		bashWith = len(stub)
		t.Logf("the model received for seq 1 20000 (%d bytes):\n%s", len(stub), stub)
		if !strings.HasPrefix(stub, "[retained #toolu_seq] 108894 bytes, 20000 lines, sha256:"+e2etest.SHA(seq)+", complete\n") {
			t.Fatalf("the model did not receive the stub: %.300q", stub)
		}
		if len(stub) >= 2048 {
			t.Errorf("the stub is %d bytes", len(stub))
		}
		if got := s.StoredValue(r.SessionID, "toolu_seq"); e2etest.SHA(got) != e2etest.SHA(seq) {
			t.Errorf("the stored value is %d bytes, sha256 %s: not the whole output", len(got), e2etest.SHA(got))
		}
		cmd := e2etest.ReadMore(stub)
		a, b := e2etest.PeekRange(t, cmd)
		got, ok := m.Result("toolu_peek")
		if !ok {
			t.Fatalf("the model never ran the read-more command %q", cmd)
		}
		e2etest.CheckPeek(t, got, strings.Split(strings.TrimSuffix(string(seq), "\n"), "\n"), a, b)
		bashPeek, bashLedger = len(got), s.Ledger(r.SessionID)
		if r.Result != "done" {
			t.Errorf("claude's result: %q", r.Result)
		}
		// Under Claude Code's own 30,000-character cut the whole output
		// would reach the model; the hook keeps it out too. The value is
		// stdout as Claude Code hands it over: without its last newline.
		m = startMock(t, bashScript)
		r = s.run(m, "bash scenario 5000")
		stub, _ = m.Result("toolu_seq")
		bashMidWith = len(stub)
		got, _ = m.Result("toolu_peek")
		bashMidPeek, bashMidLedger = len(got), s.Ledger(r.SessionID)
		if !strings.HasPrefix(stub, "[retained #toolu_seq] 23892 bytes, 5000 lines, sha256:"+e2etest.SHA(bytes.TrimSuffix(e2etest.SeqOutput(5000), []byte("\n")))+", complete\n") {
			t.Errorf("seq 1 5000: the model did not receive the stub: %.300q", stub)
		}
	})

	t.Run("bash without the hook", func(t *testing.T) {
		s := newSession(t)
		m := startMock(t, bashScript)
		s.run(m, "bash scenario 20000")
		got, ok := m.Result("toolu_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		bashWithout = len(got)
		if !strings.HasPrefix(got, "<persisted-output>") || strings.Contains(got, "[retained #") {
			t.Errorf("without the hook the model should see Claude Code's own preview: %.300q", got)
		}
		m = startMock(t, bashScript)
		s.run(m, "bash scenario 5000")
		got, _ = m.Result("toolu_seq")
		bashMidWithout = len(got)
		if strings.TrimSuffix(got, "\n") != strings.TrimSuffix(string(e2etest.SeqOutput(5000)), "\n") {
			t.Errorf("seq 1 5000 without the hook: the model should see the whole output, got %d bytes", len(got))
		}
	})

	text := e2etest.FileText(100 << 10)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	t.Run("mcp", func(t *testing.T) {
		s := newSession(t)
		// A user settings file written compactly, on one line: the hook
		// goes in in that layout, Claude Code runs it, and uninstall
		// gives back the file byte for byte.
		user := filepath.Join(s.Home, ".claude", "settings.json")
		compact := `{"cleanupPeriodDays":99,"permissions":{"allow":["Bash(ls:*)"]}}`
		os.MkdirAll(filepath.Dir(user), 0o755)
		if err := os.WriteFile(user, []byte(compact), 0o644); err != nil {
			t.Fatal(err)
		}
		out := s.RunRetval("hook", "claude-code", "install", "--user")
		if !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		if b, _ := os.ReadFile(user); bytes.Contains(b, []byte("\n")) {
			t.Errorf("install wrote a compact file on several lines:\n%s", b)
		}
		defer func() {
			s.RunRetval("hook", "claude-code", "uninstall", "--user")
			if b, _ := os.ReadFile(user); string(b) != compact {
				t.Errorf("after uninstall: %s\nwant %s", b, compact)
			}
		}()
		file := s.mcpSetup(text)
		m := startMock(t, mcpScript(file))
		r := s.run(m, "mcp scenario", s.mcpArgs()...)
		stub, ok := m.Result("toolu_mcp")
		if !ok {
			t.Fatal("the model never received the MCP result")
		}
		mcpWith = len(stub)
		t.Logf("the model received for read_text_file of %d bytes (%d bytes):\n%s", len(text), len(stub), stub)
		want := fmt.Sprintf("[retained #toolu_mcp] %d bytes, %d lines, sha256:%s, complete\n", len(text), len(lines), e2etest.SHA([]byte(text)))
		if !strings.HasPrefix(stub, want) {
			t.Fatalf("the model did not receive the stub of the file's text: %.300q, want %q", stub, want)
		}
		if !strings.Contains(stub, "\n[the value is the text of member \"content\", decoded from the result's JSON]\n") {
			t.Errorf("the stub does not say where the text came from")
		}
		if len(stub) >= 2048 {
			t.Errorf("the stub is %d bytes", len(stub))
		}
		if got := s.StoredValue(r.SessionID, "toolu_mcp"); string(got) != text {
			t.Errorf("the stored value is %d bytes: not the file's text", len(got))
		}
		cmd := e2etest.ReadMore(stub)
		a, b := e2etest.PeekRange(t, cmd)
		got, ok := m.Result("toolu_mpeek")
		if !ok {
			t.Fatalf("the model never ran the read-more command %q", cmd)
		}
		e2etest.CheckPeek(t, got, lines, a, b)
		mcpPeek, mcpLedger = len(got), s.Ledger(r.SessionID)
	})

	t.Run("mcp without the hook", func(t *testing.T) {
		s := newSession(t)
		file := s.mcpSetup(text)
		m := startMock(t, mcpScript(file))
		s.run(m, "mcp scenario", s.mcpArgs()...)
		got, ok := m.Result("toolu_mcp")
		if !ok {
			t.Fatal("the model never received the MCP result")
		}
		mcpWithout = len(got)
		if !strings.HasPrefix(got, "<persisted-output>") || strings.Contains(got, "[retained #") {
			t.Errorf("without the hook the model should see Claude Code's own preview: %.300q", got)
		}
	})

	t.Run("install twice, uninstall", func(t *testing.T) {
		s := newSession(t)
		orig := "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify-send done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
		for _, where := range [][]string{{"--user"}, {"--project", s.Proj}} {
			p := filepath.Join(s.Home, ".claude", "settings.json")
			if where[0] == "--project" {
				p = filepath.Join(s.Proj, ".claude", "settings.json")
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(orig), 0o644)
			s.RunRetval(append([]string{"hook", "claude-code", "install"}, where...)...)
			once, _ := os.ReadFile(p)
			s.RunRetval(append([]string{"hook", "claude-code", "install"}, where...)...)
			if twice, _ := os.ReadFile(p); !bytes.Equal(once, twice) {
				t.Errorf("%s: a second install changed the file", where[0])
			}
			s.RunRetval(append([]string{"hook", "claude-code", "uninstall"}, where...)...)
			if got, _ := os.ReadFile(p); string(got) != orig {
				t.Errorf("%s: after uninstall:\n%s\nwant the original:\n%s", where[0], got, orig)
			}
		}
	})

	expandScenarios(t)

	t.Logf("bytes the model received: Bash seq 1 20000 (108894 bytes): %d with the hook, %d without; seq 1 5000 (23893 bytes): %d with, %d without; MCP read_text_file of %d bytes: %d with the hook, %d without",
		bashWith, bashWithout, bashMidWith, bashMidWithout, len(text), mcpWith, mcpWithout)
	for _, m := range []e2etest.Measure{
		{Result: "Bash: seq 1 20000", Bytes: len(seq), Without: bashWithout, Stub: bashWith, Lookups: bashPeek, Ledger: bashLedger},
		{Result: "Bash: seq 1 5000", Bytes: len(e2etest.SeqOutput(5000)) - 1, Without: bashMidWithout, Stub: bashMidWith, Lookups: bashMidPeek, Ledger: bashMidLedger},
		{Result: "MCP read_text_file (filesystem server, through the hook)", Bytes: len(text), Without: mcpWithout, Stub: mcpWith, Lookups: mcpPeek, Ledger: mcpLedger},
	} {
		m.Client, m.Calls = "Claude Code "+claudePackage[strings.LastIndex(claudePackage, "@")+1:], 1
		if m.Lookups == 0 {
			m.Calls = 0
		}
		m.Value = map[bool]string{true: "toolu_mcp", false: "toolu_seq"}[strings.HasPrefix(m.Result, "MCP")]
		e2etest.WriteMeasure(t, m)
	}
	t.Logf("scenarios took %v", time.Since(start).Round(100*time.Millisecond))
}

// bashScript: run seq 1 N (the prompt is "bash scenario N"); then the
// stub's own read-more command, copied from what the model received; then
// stop.
var bashScript = e2etest.Script{
	Prompt: e2etest.PromptPrefix("bash scenario "),
	Other:  reply{Text: "ok"},
	Turns: []e2etest.Turn{
		{Then: func(c conversation) (reply, bool) {
			n := strings.TrimPrefix(c.Prompt, "bash scenario ")
			return reply{ID: "toolu_seq", Name: "Bash", Args: map[string]any{"command": "seq 1 " + n, "description": "Print numbers"}}, true
		}},
		readMore("toolu_seq", "toolu_peek"),
	},
}

// mcpScript: select the MCP tool with ToolSearch (MCP tools are
// deferred), read file with it, run the stub's read-more command, stop.
func mcpScript(file string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptPrefix("mcp scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "toolu_search", Name: "ToolSearch", Args: map[string]any{"query": "select:mcp__filesystem__read_text_file"}}},
			{After: "toolu_search", Reply: reply{ID: "toolu_mcp", Name: "mcp__filesystem__read_text_file", Args: map[string]any{"path": file}}},
			readMore("toolu_mcp", "toolu_mpeek"),
		},
	}
}

// mcpSetup writes the file to read inside the project (Claude Code gives
// the server its working directory as its root) and the MCP config.
func (s *session) mcpSetup(text string) string {
	s.t.Helper()
	file := filepath.Join(s.Proj, "notes.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": s.mcpFS, "args": []string{s.Proj}}}})
	if err := os.WriteFile(filepath.Join(s.Tmp, "mcp.json"), cfg, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return file
}

func (s *session) mcpArgs() []string {
	return []string{"--mcp-config", filepath.Join(s.Tmp, "mcp.json"), "--allowedTools", "mcp__filesystem__read_text_file"}
}
