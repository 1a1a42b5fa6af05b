package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/e2e/e2etest"
	"github.com/retval/retval/internal/installdoc"
	"github.com/retval/retval/pkg/hook"
)

// The plugin's names: the marketplace and the plugin are both "retval",
// and Claude Code names a plugin's MCP tools mcp__plugin_PLUGIN_SERVER__TOOL.
const (
	pluginID   = "retval@retval"
	peekTool   = "mcp__plugin_retval_retval__retval_peek"
	pluginStub = "[retained #toolu_seq] 108894 bytes, 20000 lines, sha256:"
)

// TestPlugin proves the Claude Code plugin (integrations/claude-code, in
// the marketplace .claude-plugin/marketplace.json at the checkout's root)
// with the real CLI: its plugin commands add the marketplace and install
// the plugin into a scratch HOME, no settings edited by hand, and a
// session's big Bash result reaches the model as a stub through the
// plugin's hook, which the model reads with the plugin's MCP tool and with
// the stub's own read-more line. Uninstalling removes hook and tools.
func TestPlugin(t *testing.T) {
	if e2etest.Isolated() {
		pluginScenarios(t)
		return
	}
	claude := e2etest.Bin(t, claudePackage, "claude")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envClaude+"="+claude, envRetval+"="+retval)
}

// TestPluginHooksMatchInstall checks that the plugin's hooks are the
// entries retval hook claude-code install adds: the same events, each
// with the same matcher, running retval's hook through the plugin's
// launcher.
func TestPluginHooksMatchInstall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(e2etest.ModuleRoot(t), "integrations", "claude-code", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	want := hook.ClaudeCodeSettings.Hooks
	if len(file.Hooks) != len(want) {
		t.Errorf("hooks.json has %d events, install adds %d", len(file.Hooks), len(want))
	}
	command := `"${CLAUDE_PLUGIN_ROOT}/bin/retval" hook claude-code`
	for _, w := range want {
		entries := file.Hooks[w.Event]
		if len(entries) != 1 || entries[0].Matcher != w.Matcher || len(entries[0].Hooks) != 1 ||
			entries[0].Hooks[0].Type != "command" || entries[0].Hooks[0].Command != command {
			t.Errorf("hooks.json %s: %+v; want one entry, matcher %q, command %q", w.Event, entries, w.Matcher, command)
		}
	}
}

// TestPluginLicense: the plugin names the repository's licence (Claude
// Code's marketplaces want an SPDX id in plugin.json, or a LICENSE file in
// the plugin's folder).
func TestPluginLicense(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(e2etest.ModuleRoot(t), "integrations", "claude-code", ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct{ License string }
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.License != "MIT" {
		t.Errorf("plugin.json's license is %q (%v), want MIT", manifest.License, err)
	}
}

// claude runs one of the CLI's own commands (plugin install, …) in the
// session and returns its output.
func (s *session) claudeCmd(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.claude, args...)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// installPlugin installs the plugin with the README's two lines, which a
// user types into Claude Code: /plugin marketplace add retval/retval, then
// /plugin install retval@retval. Claude Code takes /plugin only at its
// prompt (claude -p answers that it "isn't available in this
// environment"), so they run as the CLI's commands of the same words,
// claude plugin …. The marketplace comes from GitHub as for a user:
// Claude Code clones https://github.com/retval/retval.git, which git, told
// so in the session's ~/.gitconfig, fetches from a repository holding the
// checkout's marketplace and plugin.
func (s *session) installPlugin() {
	s.t.Helper()
	lines := []string{
		installdoc.Command(s.t, "/plugin marketplace add retval/retval", ""),
		installdoc.Command(s.t, "/plugin install retval@retval", ""),
	}
	s.githubMirror()
	for _, line := range lines {
		args, ok := strings.CutPrefix(line, "/plugin ")
		if !ok {
			s.t.Fatalf("%q is not a /plugin command", line)
		}
		s.claudeCmd(append([]string{"plugin"}, strings.Fields(args)...)...)
	}
	if out := s.claudeCmd("plugin", "list"); !strings.Contains(out, pluginID) {
		s.t.Fatalf("claude plugin list does not show %s:\n%s", pluginID, out)
	}
}

// githubMirror makes a git repository of the checkout's marketplace
// (.claude-plugin/) and plugin (integrations/claude-code/), as they are in
// the working tree, and has git in the session fetch it for
// https://github.com/retval/retval.git.
func (s *session) githubMirror() {
	s.t.Helper()
	root := e2etest.ModuleRoot(s.t)
	repo := filepath.Join(s.Root, "github.com", "retval", "retval")
	for _, dir := range []string{".claude-plugin", filepath.Join("integrations", "claude-code")} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			fi, err := d.Info()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(repo, rel), b, fi.Mode().Perm())
		})
		if err != nil {
			s.t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "--quiet"},
		{"add", "-A"},
		{"-c", "user.name=retval", "-c", "user.email=retval@invalid", "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", "marketplace"},
	} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = s.Env()
		if out, err := cmd.CombinedOutput(); err != nil {
			s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	config := "[url \"file://" + filepath.ToSlash(repo) + "\"]\n\tinsteadOf = https://github.com/retval/retval.git\n"
	if err := os.WriteFile(filepath.Join(s.Home, ".gitconfig"), []byte(config), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// userSettings is the user's settings file, decoded.
func (s *session) userSettings() map[string]json.RawMessage {
	s.t.Helper()
	m := map[string]json.RawMessage{}
	b, err := os.ReadFile(filepath.Join(s.Home, ".claude", "settings.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil && !os.IsNotExist(err) {
		s.t.Fatal(err)
	}
	return m
}

var runFlag = regexp.MustCompile(`--run (\S+)`)

// pluginScript: run seq 1 20000; select the plugin's peek tool and read
// lines 101-300 of the result with it; run the stub's own read-more line
// with Bash; stop.
var pluginScript = e2etest.Script{
	Prompt: e2etest.PromptIs("plugin scenario"),
	Other:  reply{Text: "ok"},
	Turns: []e2etest.Turn{
		{Reply: reply{ID: "toolu_seq", Name: "Bash", Args: map[string]any{"command": "seq 1 20000", "description": "Print numbers"}}},
		{After: "toolu_seq", Then: func(c conversation) (reply, bool) {
			return reply{ID: "toolu_search", Name: "ToolSearch", Args: map[string]any{"query": "select:" + peekTool}}, strings.HasPrefix(seqStub(c), pluginStub)
		}},
		{After: "toolu_search", Then: func(c conversation) (reply, bool) {
			run := runFlag.FindStringSubmatch(e2etest.ReadMore(seqStub(c)))
			if run == nil {
				return reply{}, false
			}
			return reply{ID: "toolu_mcppeek", Name: peekTool, Args: map[string]any{"run": run[1], "id": "toolu_seq", "lines": "101-300"}}, true
		}},
		{After: "toolu_mcppeek", Then: func(c conversation) (reply, bool) {
			return reply{ID: "toolu_peek", Name: "Bash", Args: map[string]any{"command": e2etest.ReadMore(seqStub(c)), "description": "Read more"}}, true
		}},
	},
}

// seqStub is what the model received for toolu_seq.
func seqStub(c conversation) string {
	r, _ := c.Result("toolu_seq")
	return r.Text
}

func pluginScenarios(t *testing.T) {
	seq := e2etest.SeqOutput(20000)
	lines := strings.Split(strings.TrimSuffix(string(seq), "\n"), "\n")
	allow := []string{"--allowedTools", peekTool}

	// checkSession runs the plugin scenario and checks what the model
	// received: the stub, the lines through the plugin's MCP tool and
	// through the stub's read-more line.
	checkSession := func(t *testing.T, s *session) {
		m := startMock(t, pluginScript)
		r := s.run(m, "plugin scenario", allow...)
		stub, ok := m.Result("toolu_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		if !strings.HasPrefix(stub, pluginStub+e2etest.SHA(seq)+", complete\n") {
			t.Fatalf("the model did not receive the stub through the plugin's hook: %.300q", stub)
		}
		if got := s.StoredValue(r.SessionID, "toolu_seq"); e2etest.SHA(got) != e2etest.SHA(seq) {
			t.Errorf("the stored value is %d bytes: not the whole output", len(got))
		}
		got, ok := m.Result("toolu_mcppeek")
		if !ok {
			t.Fatalf("the model never called %s; tools offered: %q", peekTool, m.Tools())
		}
		e2etest.CheckPeek(t, got, lines, 101, 300)
		cmd := e2etest.ReadMore(stub)
		a, b := e2etest.PeekRange(t, cmd)
		got, ok = m.Result("toolu_peek")
		if !ok {
			t.Fatalf("the model never ran the read-more command %q", cmd)
		}
		e2etest.CheckPeek(t, got, lines, a, b)
	}

	t.Run("retval on PATH", func(t *testing.T) {
		s := newSession(t)
		s.installPlugin()
		settings := s.userSettings()
		if _, ok := settings["hooks"]; ok {
			t.Errorf("installing the plugin wrote hooks into the user settings: %s", settings["hooks"])
		}
		checkSession(t, s)

		s.claudeCmd("plugin", "uninstall", pluginID)
		m := startMock(t, pluginScript)
		s.run(m, "plugin scenario", allow...)
		got, ok := m.Result("toolu_seq")
		if !ok {
			t.Fatal("after uninstall the model never received the seq result")
		}
		if !strings.HasPrefix(got, "<persisted-output>") || strings.Contains(got, "[retained #") {
			t.Errorf("after uninstall the model should see Claude Code's own preview: %.300q", got)
		}
		for _, tool := range m.Tools() {
			if strings.HasPrefix(tool, "mcp__plugin_retval") {
				t.Errorf("after uninstall the model is still offered %s", tool)
			}
		}
		if strings.Contains(m.Requests()[0].Body, "mcp__plugin_retval") {
			t.Errorf("after uninstall the requests still name the plugin's tools")
		}
		s.claudeCmd("plugin", "marketplace", "remove", "retval")
		if b, _ := json.Marshal(s.userSettings()); strings.Contains(string(b), "retval") {
			t.Errorf("after uninstall and marketplace remove the user settings still name retval: %s", b)
		}
	})

	// Installed by npx (retval hook … install through the npm package),
	// retval is only at its stable path: the plugin's launcher finds it
	// there, for the hook, the MCP server and the model's Bash commands.
	t.Run("retval only at the stable path", func(t *testing.T) {
		s := newSession(t)
		stable := filepath.Join(s.Home, ".local", "share", "retval", "bin", "0.1.0", "retval")
		os.MkdirAll(filepath.Dir(stable), 0o755)
		if err := os.Rename(s.Retval, stable); err != nil {
			t.Fatal(err)
		}
		s.installPlugin()
		checkSession(t, s)
	})

	// With no retval at all, the launcher says so and the tool call goes
	// on unchanged: the model sees Claude Code's own output.
	t.Run("no retval", func(t *testing.T) {
		s := newSession(t)
		os.Remove(s.Retval)
		s.installPlugin()
		m := startMock(t, pluginScript)
		s.run(m, "plugin scenario", allow...)
		got, ok := m.Result("toolu_seq")
		if !ok {
			t.Fatal("the model never received the seq result")
		}
		if !strings.HasPrefix(got, "<persisted-output>") {
			t.Errorf("without retval the model should see Claude Code's own preview: %.300q", got)
		}
	})
}
