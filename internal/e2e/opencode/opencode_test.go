package opencode

import (
	"bytes"
	"context"
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

	"github.com/retval/retval/internal/e2e/e2etest"
)

// session is one fresh opencode environment (see e2etest.Session): its
// global config directory holds opencode.json, the plugin when wanted, and
// @opencode-ai/plugin already installed, so opencode fetches nothing.
type session struct {
	*e2etest.Session
	t        *testing.T
	opencode string
	config   string // $XDG_CONFIG_HOME/opencode
}

func newSession(t *testing.T, withPlugin bool) *session {
	s := &session{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t, opencode: os.Getenv(envOpencode)}
	s.config = filepath.Join(s.Home, ".config", "opencode")
	s.Extra = []string{
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1", "OPENCODE_DISABLE_TERMINAL_TITLE=1",
	}
	if err := os.MkdirAll(filepath.Join(s.config, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What opencode checks before it installs @opencode-ai/plugin into a
	// config directory: node_modules exists and the lock file's root
	// lists every dependency of package.json.
	deps := map[string]any{"dependencies": map[string]string{"@opencode-ai/plugin": "1.18.33"}}
	s.writeJSON(filepath.Join(s.config, "package.json"), deps)
	s.writeJSON(filepath.Join(s.config, "package-lock.json"), map[string]any{
		"name": "opencode", "lockfileVersion": 3, "requires": true, "packages": map[string]any{"": deps}})
	if err := os.Symlink(filepath.Join(os.Getenv(envPlugin), "node_modules"), filepath.Join(s.config, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if withPlugin {
		b, err := os.ReadFile(os.Getenv(envPluginJS))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.config, "plugins", "retval.js"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *session) writeJSON(path string, v any) {
	s.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// configure writes opencode.json: the mock as the only provider and model,
// every permission granted, and the MCP servers given.
func (s *session) configure(m *mockAPI, mcp map[string]any) {
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      "mock/mock-model",
		"autoupdate": false,
		"share":      "disabled",
		"permission": map[string]any{"*": "allow", "bash": "allow", "external_directory": "allow"},
		"provider": map[string]any{"mock": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Mock",
			"options": map[string]any{"baseURL": m.url, "apiKey": "dummy"},
			"models":  map[string]any{"mock-model": map[string]any{"name": "Mock model", "tool_call": true}},
		}},
	}
	if mcp != nil {
		cfg["mcp"] = mcp
	}
	s.writeJSON(filepath.Join(s.config, "opencode.json"), cfg)
}

// run runs opencode run PROMPT against the mock.
func (s *session) run(m *mockAPI, prompt string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.opencode, "run", "--print-logs", "--log-level", "WARN", prompt)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("opencode run: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
	// Inside the namespace nothing outside can be reached; a dependency
	// opencode tried to fetch would show here.
	if strings.Contains(stderr.String(), "install failed") {
		s.t.Errorf("opencode tried to install something:\n%s", stderr.String())
	}
	if err != nil {
		s.t.Fatalf("opencode: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
}

var runFlag = regexp.MustCompile(` --run (\S+) `)

// runOf is the run a read-more command names: the opencode session id, as
// retval made it safe.
func runOf(t *testing.T, cmd string) string {
	t.Helper()
	m := runFlag.FindStringSubmatch(cmd)
	if m == nil {
		t.Fatalf("no --run in %q", cmd)
	}
	return m[1]
}

// checkStub asserts that got is the stub of value, retained as call id, and
// that the model's bash tool ran its read-more command and received the
// exact lines.
func checkStub(t *testing.T, s *session, m *mockAPI, got, id, value, peekID string) {
	t.Helper()
	lines := e2etest.Lines(value)
	want := fmt.Sprintf("[retained #%s] %d bytes, %d lines, sha256:%s, complete\n", id, len(value), len(lines), e2etest.SHA([]byte(value)))
	if !strings.HasPrefix(got, want) {
		t.Fatalf("the model did not receive the stub: %.300q, want %q", got, want)
	}
	if len(got) >= 2048 {
		t.Errorf("the stub is %d bytes", len(got))
	}
	cmd := e2etest.ReadMore(got)
	if stored := s.StoredValue(runOf(t, cmd), id); string(stored) != value {
		t.Errorf("the stored value is %d bytes, sha256 %s: not the whole result", len(stored), e2etest.SHA(stored))
	}
	a, b := e2etest.PeekRange(t, cmd)
	peek, ok := m.Result(peekID)
	if !ok {
		t.Fatalf("the model never ran the read-more command %q", cmd)
	}
	e2etest.CheckPeek(t, peek, lines, a, b)
}

// seqLines is how many lines the bash scenario prints: 78,894 bytes, past
// opencode's own cut (51,200 bytes), which makes it save the output to a
// file the plugin retains, and within the last 2 × 51,200 bytes its shell
// tool keeps in memory.
//
// opencode 1.18.33 does not always save an output whole: its shell tool
// reads the command's output on a fiber that it stops once it sees the
// command exit, so under load the file can lack what the fiber had not
// read yet (CI: the first 53,248 of these 78,894 bytes), or hold only the
// chunks kept in memory when the exit comes before the file is started
// (seq 1 20000: its last 63,838 of 108,894 bytes). The plugin can only
// retain what opencode saved (integrations/opencode/README.md). So the
// command waits, after printing, until opencode's file holds every byte
// (savedWait): a barrier on opencode's state, not a delay, so that this
// test checks the plugin, not opencode's race.
const seqLines = 15000

// savedWait is a shell command that returns once a file of exactly size
// bytes is in opencode's tool-output directory (at most 60 s: only a
// hang is stopped).
func savedWait(size int) string {
	return fmt.Sprintf(`d="$XDG_DATA_HOME/opencode/tool-output"; i=0; until [ -n "$(find "$d" -type f -size %dc 2>/dev/null)" ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done`, size)
}

func scenarios(t *testing.T) {
	start := time.Now()
	seq := string(e2etest.SeqOutput(seqLines))
	text := e2etest.FileText(100 << 10)
	var bashWith, bashWithout, mcpWith, mcpWithout int

	t.Run("bash", func(t *testing.T) {
		s := newSession(t, true)
		m := startMock(t, bashScript)
		s.configure(m, nil)
		s.run(m, fmt.Sprint("bash scenario ", seqLines))
		stub, ok := m.Result("call_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		bashWith = len(stub)
		t.Logf("the model received for seq 1 %d (%d bytes):\n%s", seqLines, len(stub), stub)
		checkStub(t, s, m, stub, "call_seq", seq, "call_peek")
	})

	// Within opencode's own cut (2,000 lines, 50 KB) and above retval's
	// threshold: the value is output.output itself.
	medium := mediumOutput()
	t.Run("bash within opencode's cut", func(t *testing.T) {
		s := newSession(t, true)
		m := startMock(t, bashScript)
		s.configure(m, nil)
		s.run(m, "bash scenario medium")
		stub, ok := m.Result("call_seq")
		if !ok {
			t.Fatal("the model never received the result")
		}
		t.Logf("the model received for %d bytes (%d bytes):\n%.400s", len(medium), len(stub), stub)
		checkStub(t, s, m, stub, "call_seq", medium, "call_peek")
	})

	t.Run("bash without the plugin", func(t *testing.T) {
		s := newSession(t, false)
		m := startMock(t, bashScript)
		s.configure(m, nil)
		s.run(m, fmt.Sprint("bash scenario ", seqLines))
		got, ok := m.Result("call_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		bashWithout = len(got)
		if !strings.Contains(got, "truncated") || strings.Contains(got, "[retained #") {
			t.Errorf("without the plugin the model should see opencode's own cut: %.300q", got)
		}
	})

	t.Run("mcp", func(t *testing.T) {
		s := newSession(t, true)
		file := s.mcpFile(text)
		m := startMock(t, mcpScript(file))
		s.configure(m, s.mcpServers())
		s.run(m, "mcp scenario")
		stub, ok := m.Result("call_mcp")
		if !ok {
			t.Fatalf("the model never received the MCP result (tools offered: %v)", m.Tools())
		}
		mcpWith = len(stub)
		t.Logf("the model received for read_text_file of %d bytes (%d bytes):\n%s", len(text), len(stub), stub)
		checkStub(t, s, m, stub, "call_mcp", text, "call_mpeek")
	})

	t.Run("mcp without the plugin", func(t *testing.T) {
		s := newSession(t, false)
		file := s.mcpFile(text)
		m := startMock(t, mcpScript(file))
		s.configure(m, s.mcpServers())
		s.run(m, "mcp scenario")
		got, ok := m.Result("call_mcp")
		if !ok {
			t.Fatalf("the model never received the MCP result (tools offered: %v)", m.Tools())
		}
		mcpWithout = len(got)
		if !strings.Contains(got, "truncated") || strings.Contains(got, "[retained #") {
			t.Errorf("without the plugin the model should see opencode's own cut: ...%q", got[max(0, len(got)-600):])
		}
	})

	structuredScenarios(t)

	t.Logf("bytes the model received: Bash seq 1 %d (%d bytes): %d with the plugin, %d without; MCP read_text_file of %d bytes: %d with the plugin, %d without",
		seqLines, len(seq), bashWith, bashWithout, len(text), mcpWith, mcpWithout)
	t.Logf("scenarios took %v", time.Since(start).Round(100*time.Millisecond))
}

// mcpFile writes the file the MCP server reads, inside the project.
func (s *session) mcpFile(text string) string {
	s.t.Helper()
	file := filepath.Join(s.Proj, "notes.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return file
}

// mcpServers is the filesystem server, named fs, allowed the project.
func (s *session) mcpServers() map[string]any {
	return map[string]any{"fs": map[string]any{"type": "local", "command": []string{os.Getenv(envFS), s.Proj}, "enabled": true}}
}

// mcpScript: read the file with the server's read_text_file (opencode
// names it SERVER_TOOL), run the stub's read-more command, stop.
func mcpScript(file string) func(conversation) reply {
	return func(c conversation) reply {
		if c.Prompt != "mcp scenario" {
			return reply{Text: "ok"}
		}
		last := c.Last()
		switch {
		case last == nil:
			return reply{ToolID: "call_mcp", ToolName: "fs_read_text_file", ToolArgs: map[string]any{"path": file}}
		case last.ID == "call_mcp":
			if cmd := e2etest.ReadMore(last.Text); cmd != "" {
				return reply{ToolID: "call_mpeek", ToolName: "bash", ToolArgs: map[string]any{"command": cmd, "description": "Read more"}}
			}
		}
		return reply{Text: "done"}
	}
}

// mediumCommand prints mediumOutput: 1,500 lines, about 43 KB.
const mediumCommand = `seq 1 1500 | sed 's/$/ of a medium output/'`

func mediumOutput() string {
	var b strings.Builder
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&b, "%d of a medium output\n", i)
	}
	return b.String()
}

// bashScript: run seq 1 N; then the stub's own read-more command, copied
// from what the model received; then stop.
func bashScript(c conversation) reply {
	n, ok := strings.CutPrefix(c.Prompt, "bash scenario ")
	if !ok {
		return reply{Text: "ok"}
	}
	command := mediumCommand
	if lines, err := strconv.Atoi(n); err == nil {
		command = fmt.Sprintf("seq 1 %d; %s", lines, savedWait(len(e2etest.SeqOutput(lines))))
	}
	last := c.Last()
	switch {
	case last == nil:
		return reply{ToolID: "call_seq", ToolName: "bash", ToolArgs: map[string]any{"command": command, "description": "Print lines"}}
	case last.ID == "call_seq":
		if cmd := e2etest.ReadMore(last.Text); cmd != "" {
			return reply{ToolID: "call_peek", ToolName: "bash", ToolArgs: map[string]any{"command": cmd, "description": "Read more"}}
		}
	}
	return reply{Text: "done"}
}
