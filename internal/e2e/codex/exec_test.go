package codex

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// TestCodexShell proves that an agent with nothing but a shell tool uses
// retval when told to: the real Codex CLI runs, through exec_command,
// `retval exec -- seq 1 20000` as its instructions say, and the model
// receives the stub where Codex alone passes on its cut of the middle;
// then the stub's read-more command, and the model receives the exact
// lines.
func TestCodexShell(t *testing.T) {
	if e2etest.Isolated() {
		shellScenarios(t)
		return
	}
	codex := e2etest.Bin(t, codexPackage, "codex")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envCodex+"="+codex, envRetval+"="+retval)
}

func shellScenarios(t *testing.T) {
	want := string(e2etest.SeqOutput(20000))
	var without int
	t.Run("the shell alone", func(t *testing.T) {
		s := newSession(t)
		m := startMock(t, shellScript("seq 1 20000"))
		logTool(t, m, "exec_command")
		s.configureShell(m)
		s.run(m, "codex scenario")
		got, ok := m.Result("call_run")
		if !ok {
			t.Fatalf("the model never received the exec_command result (tools offered: %v)", m.Tools())
		}
		without = len(got)
		t.Logf("the model received (%d bytes): %.300q ... %q", len(got), got, got[max(0, len(got)-200):])
		if !codexCut.MatchString(got) || strings.Contains(got, "[retained #") || len(got) > 16<<10 {
			t.Errorf("without retval the model should see Codex's cut of the middle, got %d bytes", len(got))
		}
	})
	t.Run("through retval exec", func(t *testing.T) {
		s := newSession(t)
		m := startMock(t, shellScript("retval exec -- seq 1 20000"))
		var told atomic.Bool // the model was sent the AGENTS.md snippet
		m.OnBody(func(body []byte) {
			if strings.Contains(string(body), "retval exec --call <short-name> -- CMD ARGS...") {
				told.Store(true)
			}
		})
		s.configureShell(m)
		s.writeAgents()
		s.installOnLoginPath()
		s.run(m, "codex scenario")
		if !told.Load() {
			t.Error("Codex did not send the model the AGENTS.md snippet")
		}
		got, ok := m.Result("call_run")
		if !ok {
			t.Fatalf("the model never received the exec_command result (tools offered: %v)", m.Tools())
		}
		t.Logf("the model received (%d bytes):\n%s", len(got), got)
		stub := shellOutput(got)
		if !strings.Contains(stub, "[retained #x") || !strings.Contains(stub, "] 108894 bytes, 20000 lines, sha256:"+e2etest.SHA([]byte(want))+", complete, exit 0\n") {
			t.Fatalf("the model did not receive the stub of seq's output: %.400q", got)
		}
		if len(got) >= 2048 {
			t.Errorf("the stub is %d bytes", len(got))
		}
		cmd := e2etest.ReadMore(stub)
		if cmd == "" {
			t.Fatalf("the stub has no read-more command: %q", stub)
		}
		a, b := e2etest.PeekRange(t, cmd)
		more, ok := m.Result("call_more")
		if !ok {
			t.Fatal("the model never received the read-more command's result")
		}
		t.Logf("the read-more command %q gave %d bytes", cmd, len(more))
		e2etest.CheckPeek(t, shellOutput(more), e2etest.Lines(want), a, b)
		t.Logf("bytes the model received for seq 1 20000 (%d bytes): %d through the shell alone, %d through retval exec", len(want), without, len(got))
	})
}

// configureShell writes config.toml: the mock as the only provider, no
// approvals, no sandbox, nothing but the shell.
func (s *session) configureShell(m *e2etest.Mock) {
	cfg := `model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = ` + tomlString(m.URL) + `
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
`
	if err := os.WriteFile(s.codexHome+"/config.toml", []byte(cfg), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// installOnLoginPath puts the retval under test on the PATH of a login
// shell, which Codex's exec_command starts by default (and which resets
// PATH from /etc/profile): a ~/.profile that adds its directory, as one
// adds ~/.local/bin.
func (s *session) installOnLoginPath() {
	profile := "PATH=" + tomlString(s.Bin) + ":\"$PATH\"\nexport PATH\n"
	if err := os.WriteFile(s.Home+"/.profile", []byte(profile), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// writeAgents puts docs/agents.md's snippet in the project's AGENTS.md,
// as a user following it would.
func (s *session) writeAgents() {
	b, err := os.ReadFile(e2etest.ModuleRoot(s.t) + "/docs/agents.md")
	if err != nil {
		s.t.Fatal(err)
	}
	snippet, ok := agentsSnippet(string(b))
	if !ok {
		s.t.Fatal("docs/agents.md has no AGENTS.md snippet")
	}
	if err := os.WriteFile(s.Proj+"/AGENTS.md", []byte(snippet), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// agentsSnippet is the first ```markdown block of docs/agents.md.
func agentsSnippet(md string) (string, bool) {
	_, rest, ok := strings.Cut(md, "```markdown\n")
	if !ok {
		return "", false
	}
	body, _, ok := strings.Cut(rest, "\n```")
	return body + "\n", ok
}

// shellScript: run command through exec_command; run the stub's read-more
// command when the result has one; stop.
func shellScript(command string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptIs("codex scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_run", Name: "exec_command", Args: map[string]any{"cmd": command}}},
			readMore("call_run", "call_more"),
		},
	}
}

// readMore is the turn after call after: run with exec_command, as call
// id, the read-more command of the stub the model received for after.
func readMore(after, id string) e2etest.Turn {
	return e2etest.Turn{After: after, Then: func(c conversation) (reply, bool) {
		cmd := e2etest.ReadMore(shellOutput(c.Last().Text))
		return reply{ID: id, Name: "exec_command", Args: map[string]any{"cmd": cmd}}, cmd != ""
	}}
}

// shellOutput is an exec_command result as the model received it, without
// the lines Codex puts before the command's output ("Chunk ID: …",
// "Wall time: …", "Process exited with code N", "Output:").
func shellOutput(got string) string {
	if _, out, ok := strings.Cut(got, "\nOutput:\n"); ok {
		return out
	}
	return got
}

// logTool logs the definition of the named tool in the first request.
func logTool(t *testing.T, m *e2etest.Mock, name string) {
	var once sync.Once
	m.OnBody(func(body []byte) {
		once.Do(func() {
			var req struct {
				Tools []json.RawMessage `json:"tools"`
			}
			json.Unmarshal(body, &req)
			for _, tl := range req.Tools {
				if strings.Contains(string(tl), `"name":"`+name+`"`) {
					t.Logf("tool %s: %s", name, tl)
				}
			}
		})
	})
}
