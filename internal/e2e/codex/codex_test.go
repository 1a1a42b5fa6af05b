package codex

import (
	"bytes"
	"context"
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

// session is one fresh Codex environment (see e2etest.Session), with
// CODEX_HOME in its temporary directory.
type session struct {
	*e2etest.Session
	t         *testing.T
	codex     string
	codexHome string
}

func newSession(t *testing.T) *session {
	s := &session{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t, codex: os.Getenv(envCodex)}
	s.codexHome = filepath.Join(s.Home, ".codex")
	if err := os.MkdirAll(s.codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	s.Extra = []string{"CODEX_HOME=" + s.codexHome, "MOCK_API_KEY=dummy", "RUST_LOG=warn"}
	return s
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string { return strconv.Quote(s) }

// configure writes config.toml: the mock as the only provider, no retries,
// no approvals and no sandbox, no update check, no plugins (they would run
// git ls-remote to an outside host), and the filesystem server as fs,
// started as command args.
func (s *session) configure(m *mockAPI, command string, args ...string) {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	cfg := fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
mcp_optional_startup_grace_ms = 60000

[model_providers.mock]
name = "mock"
base_url = %s
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[mcp_servers.fs]
command = %s
args = [%s]
`, tomlString(m.url), tomlString(command), strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(s.codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// run runs codex exec PROMPT against the mock.
func (s *session) run(m *mockAPI, prompt string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("codex exec: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.requests()))
	if err != nil {
		s.t.Fatalf("codex: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
}

// fileText is the text the server reads: 102,424 bytes of numbered lines.
func fileText() string {
	text := e2etest.FileText(100 << 10)
	return text[:102423] + "\n"
}

func (s *session) writeFile(text string) string {
	s.t.Helper()
	file := filepath.Join(s.Proj, "notes.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return file
}

func scenarios(t *testing.T) {
	start := time.Now()
	text := fileText()
	var without int

	t.Run("without the proxy", func(t *testing.T) {
		s := newSession(t)
		file := s.writeFile(text)
		m := startMock(t, readScript(file))
		s.configure(m, os.Getenv(envFS), s.Proj)
		s.run(m, "codex scenario")
		got, ok := m.result("call_read")
		if !ok {
			t.Fatalf("the model never received the read_text_file result (tools offered: %v)", m.tools())
		}
		without = len(got)
		// Codex shows the model only structuredContent when there is
		// one, serialized, and cuts it to head and tail.
		if !strings.Contains(got, `{"content":"line 1 of the notes`) || !codexCut.MatchString(got) ||
			len(got) < 8<<10 || len(got) > 16<<10 || strings.Contains(got, "[retained #") {
			t.Errorf("without the proxy the model should see Codex's own cut of about 12 KB, got %d bytes: %.300q", len(got), got)
		}
		t.Logf("the model received (%d bytes): %.300q ... %q", len(got), got, got[max(0, len(got)-200):])
	})
	t.Logf("bytes the model received for read_text_file of %d bytes: %d without the proxy", len(text), without)
	t.Logf("scenarios took %v", time.Since(start).Round(100*time.Millisecond))
}

// codexCut is the mark Codex leaves where it cut a tool result.
var codexCut = regexp.MustCompile(`…\d+ (tokens|chars) truncated…`)

// readScript: call fs's read_text_file on file, then stop.
func readScript(file string) func(conversation) reply {
	return func(c conversation) reply {
		if c.Prompt != "codex scenario" {
			return reply{Text: "ok"}
		}
		if c.Last() == nil {
			return reply{CallID: "call_read", Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": file}}
		}
		return reply{Text: "done"}
	}
}
