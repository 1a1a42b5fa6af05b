package claudecode

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// session is one fresh Claude Code environment: its own HOME, TMPDIR and
// project directory, and a bin directory (holding the retval under test)
// first on PATH for its Bash tool.
type session struct {
	t                     *testing.T
	home, tmp, proj, bin  string
	claude, retval, mcpFS string
}

func newSession(t *testing.T) *session {
	root := t.TempDir()
	s := &session{t: t, home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"),
		proj: filepath.Join(root, "proj"), bin: filepath.Join(root, "bin"),
		claude: os.Getenv(envClaude), mcpFS: os.Getenv(envFS)}
	for _, d := range []string{s.home, s.tmp, s.proj, s.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The binary under test, first on PATH: the model's retval peek runs it.
	s.retval = filepath.Join(s.bin, "retval")
	b, err := os.ReadFile(os.Getenv(envRetval))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.retval, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *session) env(extra ...string) []string {
	return append([]string{
		"PATH=" + s.bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + s.home, "TMPDIR=" + s.tmp, "CLAUDE_CODE_TMPDIR=" + s.tmp,
		"ANTHROPIC_API_KEY=dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "LANG=C.UTF-8",
	}, extra...)
}

// retvalCmd runs the retval under test as a user would.
func (s *session) retvalCmd(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(s.retval, args...)
	cmd.Dir = s.proj
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("retval %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// result is what claude -p --output-format json prints at the end.
type result struct {
	SessionID string `json:"session_id"`
	IsError   bool   `json:"is_error"`
	Result    string `json:"result"`
	NumTurns  int    `json:"num_turns"`
}

// run runs claude -p PROMPT against the mock and returns its result.
func (s *session) run(m *mockAPI, prompt string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	all := append([]string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}, args...)
	cmd := exec.CommandContext(ctx, s.claude, all...)
	cmd.Dir = s.proj
	cmd.Env = s.env("ANTHROPIC_BASE_URL=" + m.url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("claude -p: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.requests()))
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

// readMore is the stub's own read-more command: its line that starts with
// "retval peek ", as the model would copy it (the comment after it too).
func readMore(stub string) string {
	for _, l := range strings.Split(stub, "\n") {
		if strings.HasPrefix(l, "retval peek ") {
			return l
		}
	}
	return ""
}

var linesFlag = regexp.MustCompile(` --lines (\d+)-(\d+)`)

// peekRange is the line range a read-more command asks for.
func peekRange(t *testing.T, cmd string) (int, int) {
	t.Helper()
	m := linesFlag.FindStringSubmatch(cmd)
	if m == nil {
		t.Fatalf("no --lines A-B in %q", cmd)
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b
}

// storedValue reads a value's content file where the hook's default store
// puts it, ~/.local/state/retval/runs.
func (s *session) storedValue(run, id string) []byte {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.home, ".local", "state", "retval", "runs", run+".values", id+".txt"))
	if err != nil {
		s.t.Fatalf("the store holds no value %s/%s: %v", run, id, err)
	}
	return b
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// checkPeek asserts that the model received the value's lines from a on,
// exactly as peek prints them ("N: " and the line), up to b or to where
// peek's output cap stopped it, and then nothing but peek's last line
// saying which lines it showed.
func checkPeek(t *testing.T, got string, want []string, a, b int) {
	t.Helper()
	rows := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	n := a
	for _, row := range rows {
		if n > b || !strings.HasPrefix(row, strconv.Itoa(n)+": ") {
			break
		}
		if row != fmt.Sprintf("%d: %s", n, want[n-1]) {
			t.Fatalf("line %d came back as %q, want %q", n, row, want[n-1])
		}
		n++
	}
	shown := n - a
	if shown < 100 {
		t.Fatalf("the read-more command gave %d lines of %d-%d: %.300q", shown, a, b, got)
	}
	switch rest := rows[shown:]; {
	case len(rest) == 0 && n == b+1:
	case len(rest) == 1 && strings.HasPrefix(rest[0], fmt.Sprintf("[lines %d-%d of %d", a, n-1, len(want))):
	default:
		t.Errorf("after lines %d-%d: %q", a, n-1, rest)
	}
}

func scenarios(t *testing.T) {
	start := time.Now()
	seq := seqOutput(20000)
	if len(seq) != 108894 {
		t.Fatalf("seq 1 20000 is %d bytes", len(seq))
	}
	var bashWith, bashWithout, bashMidWith, bashMidWithout, mcpWith, mcpWithout int

	t.Run("bash", func(t *testing.T) {
		s := newSession(t)
		// The hook goes into the project's settings, the allow entries into
		// the user's; Claude Code runs a project's hooks untrusted.
		out := s.retvalCmd("hook", "claude-code", "install", "--project", s.proj)
		if !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		m := startMock(t, bashScript)
		r := s.run(m, "bash scenario 20000")
		stub, ok := m.result("toolu_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		bashWith = len(stub)
		t.Logf("the model received for seq 1 20000 (%d bytes):\n%s", len(stub), stub)
		if !strings.HasPrefix(stub, "[retained #toolu_seq] 108894 bytes, 20000 lines, sha256:"+sha(seq)+", complete\n") {
			t.Fatalf("the model did not receive the stub: %.300q", stub)
		}
		if len(stub) >= 2048 {
			t.Errorf("the stub is %d bytes", len(stub))
		}
		if got := s.storedValue(r.SessionID, "toolu_seq"); sha(got) != sha(seq) {
			t.Errorf("the stored value is %d bytes, sha256 %s: not the whole output", len(got), sha(got))
		}
		cmd := readMore(stub)
		a, b := peekRange(t, cmd)
		got, ok := m.result("toolu_peek")
		if !ok {
			t.Fatalf("the model never ran the read-more command %q", cmd)
		}
		checkPeek(t, got, strings.Split(strings.TrimSuffix(string(seq), "\n"), "\n"), a, b)
		if r.Result != "done" {
			t.Errorf("claude's result: %q", r.Result)
		}
		// Under Claude Code's own 30,000-character cut the whole output
		// would reach the model; the hook keeps it out too. The value is
		// stdout as Claude Code hands it over: without its last newline.
		m = startMock(t, bashScript)
		s.run(m, "bash scenario 5000")
		stub, _ = m.result("toolu_seq")
		bashMidWith = len(stub)
		if !strings.HasPrefix(stub, "[retained #toolu_seq] 23892 bytes, 5000 lines, sha256:"+sha(bytes.TrimSuffix(seqOutput(5000), []byte("\n")))+", complete\n") {
			t.Errorf("seq 1 5000: the model did not receive the stub: %.300q", stub)
		}
	})

	t.Run("bash without the hook", func(t *testing.T) {
		s := newSession(t)
		m := startMock(t, bashScript)
		s.run(m, "bash scenario 20000")
		got, ok := m.result("toolu_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		bashWithout = len(got)
		if !strings.HasPrefix(got, "<persisted-output>") || strings.Contains(got, "[retained #") {
			t.Errorf("without the hook the model should see Claude Code's own preview: %.300q", got)
		}
		m = startMock(t, bashScript)
		s.run(m, "bash scenario 5000")
		got, _ = m.result("toolu_seq")
		bashMidWithout = len(got)
		if strings.TrimSuffix(got, "\n") != strings.TrimSuffix(string(seqOutput(5000)), "\n") {
			t.Errorf("seq 1 5000 without the hook: the model should see the whole output, got %d bytes", len(got))
		}
	})

	text := fileText(100 << 10)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	t.Run("mcp", func(t *testing.T) {
		s := newSession(t)
		out := s.retvalCmd("hook", "claude-code", "install", "--user")
		if !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		file := s.mcpSetup(text)
		m := startMock(t, mcpScript(file))
		r := s.run(m, "mcp scenario", s.mcpArgs()...)
		stub, ok := m.result("toolu_mcp")
		if !ok {
			t.Fatal("the model never received the MCP result")
		}
		mcpWith = len(stub)
		t.Logf("the model received for read_text_file of %d bytes (%d bytes):\n%s", len(text), len(stub), stub)
		want := fmt.Sprintf("[retained #toolu_mcp] %d bytes, %d lines, sha256:%s, complete\n", len(text), len(lines), sha([]byte(text)))
		if !strings.HasPrefix(stub, want) {
			t.Fatalf("the model did not receive the stub of the file's text: %.300q, want %q", stub, want)
		}
		if !strings.Contains(stub, "\n[the value is the text of member \"content\", decoded from the result's JSON]\n") {
			t.Errorf("the stub does not say where the text came from")
		}
		if len(stub) >= 2048 {
			t.Errorf("the stub is %d bytes", len(stub))
		}
		if got := s.storedValue(r.SessionID, "toolu_mcp"); string(got) != text {
			t.Errorf("the stored value is %d bytes: not the file's text", len(got))
		}
		cmd := readMore(stub)
		a, b := peekRange(t, cmd)
		got, ok := m.result("toolu_mpeek")
		if !ok {
			t.Fatalf("the model never ran the read-more command %q", cmd)
		}
		checkPeek(t, got, lines, a, b)
	})

	t.Run("mcp without the hook", func(t *testing.T) {
		s := newSession(t)
		file := s.mcpSetup(text)
		m := startMock(t, mcpScript(file))
		s.run(m, "mcp scenario", s.mcpArgs()...)
		got, ok := m.result("toolu_mcp")
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
		for _, where := range [][]string{{"--user"}, {"--project", s.proj}} {
			p := filepath.Join(s.home, ".claude", "settings.json")
			if where[0] == "--project" {
				p = filepath.Join(s.proj, ".claude", "settings.json")
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(orig), 0o644)
			s.retvalCmd(append([]string{"hook", "claude-code", "install"}, where...)...)
			once, _ := os.ReadFile(p)
			s.retvalCmd(append([]string{"hook", "claude-code", "install"}, where...)...)
			if twice, _ := os.ReadFile(p); !bytes.Equal(once, twice) {
				t.Errorf("%s: a second install changed the file", where[0])
			}
			s.retvalCmd(append([]string{"hook", "claude-code", "uninstall"}, where...)...)
			if got, _ := os.ReadFile(p); string(got) != orig {
				t.Errorf("%s: after uninstall:\n%s\nwant the original:\n%s", where[0], got, orig)
			}
		}
	})

	t.Logf("bytes the model received: Bash seq 1 20000 (108894 bytes): %d with the hook, %d without; seq 1 5000 (23893 bytes): %d with, %d without; MCP read_text_file of %d bytes: %d with the hook, %d without",
		bashWith, bashWithout, bashMidWith, bashMidWithout, len(text), mcpWith, mcpWithout)
	t.Logf("scenarios took %v", time.Since(start).Round(100*time.Millisecond))
}

// bashScript: run seq 1 20000; then the stub's own read-more command,
// copied from what the model received; then stop. Each reply is decided
// by the last tool result's id.
// The prompt "bash scenario N" runs seq 1 N.
func bashScript(c conversation) reply {
	n, ok := strings.CutPrefix(c.Prompt, "bash scenario ")
	if !ok {
		return reply{Text: "ok"}
	}
	last := c.Last()
	switch {
	case last == nil:
		return reply{ToolID: "toolu_seq", ToolName: "Bash", ToolInput: map[string]any{"command": "seq 1 " + n, "description": "Print numbers"}}
	case last.ID == "toolu_seq":
		if cmd := readMore(last.Text); cmd != "" {
			return reply{ToolID: "toolu_peek", ToolName: "Bash", ToolInput: map[string]any{"command": cmd, "description": "Read more"}}
		}
	}
	return reply{Text: "done"}
}

// mcpScript: select the MCP tool with ToolSearch (MCP tools are
// deferred), read file with it, run the stub's read-more command, stop.
func mcpScript(file string) func(conversation) reply {
	return func(c conversation) reply {
		if !strings.HasPrefix(c.Prompt, "mcp scenario") {
			return reply{Text: "ok"}
		}
		last := c.Last()
		switch {
		case last == nil:
			return reply{ToolID: "toolu_search", ToolName: "ToolSearch", ToolInput: map[string]any{"query": "select:mcp__filesystem__read_text_file"}}
		case last.ID == "toolu_search":
			return reply{ToolID: "toolu_mcp", ToolName: "mcp__filesystem__read_text_file", ToolInput: map[string]any{"path": file}}
		case last.ID == "toolu_mcp":
			if cmd := readMore(last.Text); cmd != "" {
				return reply{ToolID: "toolu_mpeek", ToolName: "Bash", ToolInput: map[string]any{"command": cmd, "description": "Read more"}}
			}
		}
		return reply{Text: "done"}
	}
}

// mcpSetup writes the file to read inside the project (Claude Code gives
// the server its working directory as its root) and the MCP config.
func (s *session) mcpSetup(text string) string {
	s.t.Helper()
	file := filepath.Join(s.proj, "notes.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": s.mcpFS, "args": []string{s.proj}}}})
	if err := os.WriteFile(filepath.Join(s.tmp, "mcp.json"), cfg, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return file
}

func (s *session) mcpArgs() []string {
	return []string{"--mcp-config", filepath.Join(s.tmp, "mcp.json"), "--allowedTools", "mcp__filesystem__read_text_file"}
}

func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.Bytes()
}

// fileText is a text file of about size bytes, of numbered lines.
func fileText(size int) string {
	var b strings.Builder
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %d of the notes, with some words after it\n", i)
	}
	return b.String()
}
