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

// session is one fresh environment of a client (see e2etest.Session):
// its global config directory holds its configuration, the plugin when
// wanted, and the plugin package already installed, so it fetches
// nothing.
type session struct {
	*e2etest.Session
	t      *testing.T
	c      client
	config string // $XDG_CONFIG_HOME/NAME
}

func newSession(t *testing.T, c client, withPlugin bool) *session {
	s := &session{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t, c: c}
	s.config = filepath.Join(s.Home, ".config", c.name)
	s.Extra = c.env
	if err := os.MkdirAll(filepath.Join(s.config, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What opencode checks before it installs its plugin package into a
	// config directory: node_modules exists and the lock file's root
	// lists every dependency of package.json.
	deps := map[string]any{"dependencies": map[string]string{c.plugin: c.pluginVersion}}
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

// configure writes the client's configuration: the mock as the only provider and model,
// every permission granted, and the MCP servers given.
func (s *session) configure(m *e2etest.Mock, mcp map[string]any) {
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      "mock/mock-model",
		"autoupdate": false,
		"share":      "disabled",
		"permission": map[string]any{"*": "allow", "bash": "allow", "external_directory": "allow"},
		"provider": map[string]any{"mock": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Mock",
			"options": map[string]any{"baseURL": m.URL, "apiKey": "dummy"},
			"models":  map[string]any{"mock-model": map[string]any{"name": "Mock model", "tool_call": true}},
		}},
	}
	if mcp != nil {
		cfg["mcp"] = mcp
	}
	for k, v := range s.c.config {
		cfg[k] = v
	}
	s.writeJSON(filepath.Join(s.config, s.c.configFile), cfg)
}

// run runs `opencode run [FLAGS] PROMPT` (`kilo run`) against the mock.
func (s *session) run(m *e2etest.Mock, prompt string, flags ...string) {
	s.t.Helper()
	// Generous: a run takes seconds, and a minute or two on a loaded
	// machine; this only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append(append([]string{"run", "--print-logs", "--log-level", "WARN"}, flags...), prompt)
	cmd := exec.CommandContext(ctx, s.c.binary(), args...)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("%s run: %v, %d requests", s.c.name, time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
	// Inside the namespace nothing outside can be reached; a dependency
	// opencode tried to fetch would show here.
	if strings.Contains(stderr.String(), "install failed") {
		s.t.Errorf("%s tried to install something:\n%s", s.c.name, stderr.String())
	}
	if err != nil {
		s.t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", s.c.name, err, out, stderr.String())
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
func checkStub(t *testing.T, s *session, m *e2etest.Mock, got, id, value, peekID string) {
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
// bytes is in the client's tool-output directory,
// $XDG_DATA_HOME/NAME/tool-output (at most 60 s: only a hang is stopped).
func savedWait(size int) string {
	return fmt.Sprintf(`i=0; until [ -n "$(find "$XDG_DATA_HOME" -path '*/tool-output/*' -type f -size %dc 2>/dev/null)" ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done`, size)
}

func scenarios(t *testing.T, c client) {
	start := time.Now()
	seq := string(e2etest.SeqOutput(seqLines))
	text := e2etest.FileText(100 << 10)
	var bashWith, bashWithout, mcpWith, mcpWithout int

	t.Run("bash", func(t *testing.T) {
		s := newSession(t, c, true)
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
		s := newSession(t, c, true)
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
		s := newSession(t, c, false)
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
		s := newSession(t, c, true)
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
		s := newSession(t, c, false)
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

	structuredScenarios(t, c)

	t.Logf("%s: bytes the model received: Bash seq 1 %d (%d bytes): %d with the plugin, %d without; MCP read_text_file of %d bytes: %d with the plugin, %d without",
		c.name, seqLines, len(seq), bashWith, bashWithout, len(text), mcpWith, mcpWithout)
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
func mcpScript(file string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptIs("mcp scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_mcp", Name: "fs_read_text_file", Args: map[string]any{"path": file}}},
			readMore("call_mcp", "call_mpeek"),
		},
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

// bashScript: run seq 1 N ("bash scenario N"; "bash scenario medium"
// runs mediumCommand); then the stub's own read-more command, copied from
// what the model received; then stop.
var bashScript = e2etest.Script{
	Prompt: e2etest.PromptPrefix("bash scenario "),
	Other:  reply{Text: "ok"},
	Turns: []e2etest.Turn{
		{Then: func(c conversation) (reply, bool) {
			command := mediumCommand
			if lines, err := strconv.Atoi(strings.TrimPrefix(c.Prompt, "bash scenario ")); err == nil {
				command = fmt.Sprintf("seq 1 %d; %s", lines, savedWait(len(e2etest.SeqOutput(lines))))
			}
			return reply{ID: "call_seq", Name: "bash", Args: map[string]any{"command": command, "description": "Print lines"}}, true
		}},
		readMore("call_seq", "call_peek"),
	},
}
