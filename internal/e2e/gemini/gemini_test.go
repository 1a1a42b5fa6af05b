package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// model is the model the CLI is told to use (-m): a named model, so that
// Gemini asks no router which one to use.
const model = "gemini-2.5-flash"

// session is one fresh Gemini CLI environment (see e2etest.Session).
type session struct {
	*e2etest.Session
	t        *testing.T
	gemini   string
	settings string // the user's settings file
}

// baseSettings is the user's settings file the scenarios start from:
// the API key from the environment, nothing sent anywhere, no update
// checks. MCP servers go where %s is.
const baseSettings = `{
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "privacy": {
    "usageStatisticsEnabled": false
  },
  "telemetry": {
    "enabled": false
  },
  "general": {
    "enableAutoUpdate": false,
    "enableAutoUpdateNotification": false
  }%s
}
`

func newSession(t *testing.T) *session {
	s := &session{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t, gemini: os.Getenv(envGemini)}
	s.Extra = []string{"GEMINI_API_KEY=retval-e2e", "GEMINI_CLI_NO_RELAUNCH=1", "GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_TELEMETRY_ENABLED=false", "NO_BROWSER=1"}
	s.settings = filepath.Join(s.Home, ".gemini", "settings.json")
	s.writeSettings("")
	return s
}

// writeSettings writes the user's settings file, with extra members
// (",\n  \"mcpServers\": …") at its end.
func (s *session) writeSettings(extra string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.settings), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(s.settings, fmt.Appendf(nil, baseSettings, extra), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// mcpServer is the settings' member that starts the filesystem MCP
// server on the project directory.
func (s *session) mcpServer() string {
	b, _ := json.Marshal(map[string]any{"command": os.Getenv(envFS), "args": []string{s.Proj}})
	return ",\n  \"mcpServers\": {\n    \"fs\": " + string(b) + "\n  }"
}

// policy writes the user's policy: the shell commands that begin with one
// of prefixes, and the tools named, run without asking (a headless Gemini
// offers no other tool that would need an approval).
func (s *session) policy(prefixes []string, tools ...string) {
	q := func(list []string) string {
		b, _ := json.Marshal(list)
		return string(b)
	}
	text := fmt.Sprintf("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = %s\ndecision = \"allow\"\npriority = 100\n", q(prefixes))
	if len(tools) > 0 {
		text += fmt.Sprintf("\n[[rule]]\ntoolName = %s\ndecision = \"allow\"\npriority = 100\n", q(tools))
	}
	s.writePolicy(text)
}

// writePolicy writes text as the user's policy file.
func (s *session) writePolicy(text string) {
	s.t.Helper()
	dir := filepath.Join(s.Home, ".gemini", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "e2e.toml"), []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// run runs gemini -p PROMPT against the mock and returns what it printed.
func (s *session) run(m *e2etest.Mock, prompt string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.gemini, "-p", prompt, "-m", model)
	cmd.Dir = s.Proj
	cmd.Env = s.Env("GOOGLE_GEMINI_BASE_URL=" + m.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("gemini -p: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
	if err != nil {
		s.t.Fatalf("gemini: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	if strings.TrimSpace(string(out)) != "done" {
		s.t.Fatalf("gemini printed %q, want the model's last answer\nstderr: %s", out, stderr.String())
	}
	return string(out)
}

// result is the tool result the model received for call id: a success.
func result(t *testing.T, m *e2etest.Mock, id string) string {
	t.Helper()
	for _, c := range m.Requests() {
		for _, r := range c.Results {
			if r.ID == id {
				if r.IsError {
					t.Fatalf("the model received %s as an error: %.300q", id, r.Text)
				}
				return r.Text
			}
		}
	}
	t.Fatalf("the model never received the result of %s", id)
	return ""
}

// shellScript: run COMMAND ("shell scenario: COMMAND"); then the stub's
// own read-more command, copied from what the model received; then stop.
var shellScript = e2etest.Script{
	Prompt: e2etest.PromptContains("shell scenario: "),
	Turns: []e2etest.Turn{
		{Then: func(c conversation) (reply, bool) {
			_, command, _ := strings.Cut(c.Prompt, "shell scenario: ")
			return reply{ID: "call_seq", Name: "run_shell_command", Args: map[string]any{"command": command, "description": "Print numbers"}}, true
		}},
		readMore("call_seq", "call_peek", true),
	},
}

// mcpScript: read file with the filesystem server's read_text_file, run
// the stub's read-more command, stop.
func mcpScript(file string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptContains("mcp scenario"),
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_mcp", Name: "mcp_fs_read_text_file", Args: map[string]any{"path": file}}},
			readMore("call_mcp", "call_mpeek", false),
		},
	}
}

// capturedNote is the line after a shell output's stub.
const capturedNote = "[the value is the output as Gemini CLI captured it (stdout and stderr together, escapes removed, white space trimmed), not the command's exact bytes]"

// shellEnvelope is what Gemini's shell tool puts around a command's
// output for the model.
var shellEnvelope = regexp.MustCompile(`(?s)\A<untrusted_context>\nOutput: (.*?)(\nExit Code: -?\d+)?(\nProcess Group PGID: \d+)?\n</untrusted_context>(\n\n\[System\] [^\n]*)?\z`)

// shellOutput is the command's output in a shell tool result.
func shellOutput(t *testing.T, text string) string {
	t.Helper()
	m := shellEnvelope.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("not a shell tool result: %.300q", text)
	}
	return m[1]
}

var stubID = regexp.MustCompile(`\[retained #([A-Za-z0-9_-]+)\] `)

// idOf is the id of the value a stub names ("" for none).
func idOf(stub string) string {
	if m := stubID.FindStringSubmatch(stub); m != nil {
		return m[1]
	}
	return ""
}

// valueOf is the value a stub names, from the session's store: the one
// run in it is Gemini's session.
func (s *session) valueOf(stub string) []byte {
	s.t.Helper()
	id := idOf(stub)
	if id == "" {
		s.t.Fatalf("no value id in %.300q", stub)
	}
	return s.StoredValue(s.runOf(), id)
}

// runOf is the store's one run.
func (s *session) runOf() string {
	s.t.Helper()
	ents, _ := os.ReadDir(s.StoreDir())
	for _, e := range ents {
		if run, ok := strings.CutSuffix(e.Name(), ".values"); ok {
			return run
		}
	}
	s.t.Fatal("no run in the store")
	return ""
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func scenarios(t *testing.T) {
	start := time.Now()
	seq := e2etest.SeqOutput(100000)
	if len(seq) != 588895 {
		t.Fatalf("seq 1 100000 is %d bytes", len(seq))
	}
	// What Gemini's shell tool captures of it: the output trimmed.
	captured := bytes.TrimSuffix(seq, []byte("\n"))
	seqLines := e2etest.Lines(string(seq))
	var shellWith, shellWithout, wrappedWith, mcpWith, mcpWithout, shellPeek, wrappedPeek, mcpPeek int
	var shellLedger, wrappedLedger, mcpLedger json.RawMessage
	var shellID, wrappedID, mcpID string

	t.Run("shell", func(t *testing.T) {
		s := newSession(t)
		// The user's own rules allow seq and retval peek: the hook
		// rewrites no command, so they are what Gemini checks.
		s.policy([]string{"seq", "retval peek"})
		before := read(t, s.settings)
		if out := s.RunRetval("hook", "gemini-cli", "install", "--user"); !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		m := startMock(t, shellScript)
		s.run(m, "shell scenario: seq 1 100000")
		stub := result(t, m, "call_seq")
		shellWith = len(stub)
		t.Logf("the model received for seq 1 100000 (%d bytes), as a success (%d bytes):\n%s", len(seq), len(stub), stub)
		header := fmt.Sprintf("] %d bytes, 100000 lines, sha256:%s, complete\n", len(captured), e2etest.SHA(captured))
		if !strings.HasPrefix(stub, "<untrusted_context>\nOutput: [retained #shell-") || !strings.Contains(stub, header) {
			t.Fatalf("the model did not receive the stub of the output Gemini captured (%q): %.300q", header, stub)
		}
		if len(stub) > 2000 {
			t.Errorf("the stub is %d bytes", len(stub))
		}
		// Its size and SHA-256 are not seq's (what AfterTool receives
		// says why), and the stub says so.
		if !strings.Contains(stub, "\n"+capturedNote+"\nProcess Group PGID: ") {
			t.Errorf("the stub does not say the value is the output as Gemini captured it: %q", stub[max(0, len(stub)-400):])
		}
		if v := s.valueOf(stub); !bytes.Equal(v, captured) {
			t.Errorf("the stored value is %d bytes, sha256 %s: not the output as Gemini captured it", len(v), e2etest.SHA(v))
		}
		cmd := e2etest.ReadMore(stub)
		a, b := e2etest.PeekRange(t, cmd)
		got := result(t, m, "call_peek")
		e2etest.CheckPeek(t, shellOutput(t, got), seqLines, a, b)
		shellPeek, shellLedger, shellID = len(got), s.Ledger(s.runOf()), idOf(stub)

		s.RunRetval("hook", "gemini-cli", "uninstall", "--user")
		if got := read(t, s.settings); got != before {
			t.Errorf("after uninstall the settings are:\n%s\nwant, as before install:\n%s", got, before)
		}
		if _, err := os.Stat(s.settings + ".retval-added"); !os.IsNotExist(err) {
			t.Errorf("uninstall left the note of what install added: %v", err)
		}
	})

	t.Run("shell without the hook", func(t *testing.T) {
		s := newSession(t)
		s.policy([]string{"seq", "retval peek"})
		m := startMock(t, shellScript)
		s.run(m, "shell scenario: seq 1 100000")
		got := result(t, m, "call_seq")
		shellWithout = len(got)
		if !strings.HasPrefix(got, "Output too large.") || strings.Contains(got, "[retained #") {
			t.Errorf("without the hook the model should see Gemini's own cut: %.300q", got)
		}
	})

	t.Run("what AfterTool receives", func(t *testing.T) { afterToolInput(t, captured) })

	t.Run("shell wrapped", func(t *testing.T) {
		s := newSession(t)
		if out := s.RunRetval("hook", "gemini-cli", "install", "--user", "--wrap-shell"); !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		// Gemini checks its rules against the rewritten command: with
		// the user's rule for seq alone, the call is refused.
		s.policy([]string{"seq", "retval peek"})
		m := startMock(t, shellScript)
		s.run(m, "shell scenario: seq 1 100000")
		if r := m.Requests(); len(r) == 0 || r[len(r)-1].Last() == nil || !r[len(r)-1].Last().IsError {
			t.Fatalf("with --wrap-shell and no rule for retval exec, the call was not refused")
		}
		if _, err := os.Stat(s.StoreDir()); err == nil {
			t.Errorf("a refused call stored something")
		}
		// A rule for retval exec lets it run: its stream is kept byte
		// for byte.
		s.policy([]string{"seq", "retval peek", s.Retval + " exec"})
		m = startMock(t, shellScript)
		s.run(m, "shell scenario: seq 1 100000")
		stub := result(t, m, "call_seq")
		wrappedWith = len(stub)
		t.Logf("the model received for seq 1 100000 run through retval exec (%d bytes):\n%s", len(stub), stub)
		if !strings.Contains(stub, fmt.Sprintf("] 588895 bytes, 100000 lines, sha256:%s, complete, exit 0\n", e2etest.SHA(seq))) || len(stub) > 2000 {
			t.Fatalf("not a stub of at most 2,000 bytes whose value is seq's output: %.300q", stub)
		}
		if v := s.valueOf(stub); e2etest.SHA(v) != e2etest.SHA(seq) {
			t.Errorf("the stored value is %d bytes: not seq's output", len(v))
		}
		cmd := e2etest.ReadMore(stub)
		a, b := e2etest.PeekRange(t, cmd)
		got := result(t, m, "call_peek")
		e2etest.CheckPeek(t, shellOutput(t, got), seqLines, a, b)
		wrappedPeek, wrappedLedger, wrappedID = len(got), s.Ledger(s.runOf()), idOf(stub)
	})

	text := e2etest.FileText(100 << 10)
	lines := e2etest.Lines(text)
	t.Run("mcp", func(t *testing.T) {
		s := newSession(t)
		s.writeSettings(s.mcpServer())
		s.policy([]string{"retval peek"}, "mcp_fs_read_text_file")
		file := filepath.Join(s.Proj, "notes.txt")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		// Into the project's settings this time, which did not exist.
		project := filepath.Join(s.Proj, ".gemini", "settings.json")
		if out := s.RunRetval("hook", "gemini-cli", "install", "--project", s.Proj); !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		m := startMock(t, mcpScript(file))
		s.run(m, "mcp scenario")
		stub := result(t, m, "call_mcp")
		mcpWith = len(stub)
		t.Logf("the model received for read_text_file of %d bytes (%d bytes):\n%s", len(text), len(stub), stub)
		header := fmt.Sprintf("] %d bytes, %d lines, sha256:%s, complete\n", len(text), len(lines), e2etest.SHA([]byte(text)))
		if !strings.HasPrefix(stub, "<untrusted_context>\n[retained #mcp_fs_read_text_file-") || !strings.Contains(stub, header) || len(stub) > 2000 {
			t.Fatalf("the model did not receive the stub of the file's text: %.300q", stub)
		}
		if v := s.valueOf(stub); string(v) != text {
			t.Errorf("the stored value is %d bytes: not the file's text", len(v))
		}
		cmd := e2etest.ReadMore(stub)
		a, b := e2etest.PeekRange(t, cmd)
		got := result(t, m, "call_mpeek")
		e2etest.CheckPeek(t, shellOutput(t, got), lines, a, b)
		mcpPeek, mcpLedger, mcpID = len(got), s.Ledger(s.runOf()), idOf(stub)

		s.RunRetval("hook", "gemini-cli", "uninstall", "--project", s.Proj)
		if _, err := os.Stat(filepath.Dir(project)); !os.IsNotExist(err) {
			t.Errorf("uninstall left %s, which install made: %v", filepath.Dir(project), err)
		}
	})

	t.Run("mcp without the hook", func(t *testing.T) {
		s := newSession(t)
		s.writeSettings(s.mcpServer())
		s.policy([]string{"retval peek"}, "mcp_fs_read_text_file")
		file := filepath.Join(s.Proj, "notes.txt")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		m := startMock(t, mcpScript(file))
		s.run(m, "mcp scenario")
		got := result(t, m, "call_mcp")
		mcpWithout = len(got)
		if !strings.HasPrefix(got, "Output too large.") || strings.Contains(got, "[retained #") {
			t.Errorf("without the hook the model should see Gemini's own cut: %.300q", got)
		}
	})

	t.Run("malformed input", func(t *testing.T) {
		s := newSession(t)
		// Fed to the hook by hand: it exits 0 and prints nothing.
		cmd := exec.Command(s.Retval, "hook", "gemini-cli")
		cmd.Dir, cmd.Env, cmd.Stdin = s.Proj, s.Env(), strings.NewReader(`{"hook_event_name": "AfterTool", "tool_response": `)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.Len() > 0 || !strings.HasPrefix(stderr.String(), "retval: hook: gemini-cli: ") {
			t.Errorf("malformed input: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
		}
		// Fed by Gemini, cut short: Gemini shows its own output, as a
		// success.
		hook, _ := json.Marshal("head -c 300 | " + s.Retval + " hook gemini-cli")
		s.writeSettings(`,
  "hooks": {
    "AfterTool": [{"matcher": "^run_shell_command$", "hooks": [{"type": "command", "command": ` + string(hook) + `}]}]
  }`)
		s.policy([]string{"seq", "retval peek"})
		m := startMock(t, shellScript)
		s.run(m, "shell scenario: seq 1 100000")
		got := result(t, m, "call_seq")
		if !strings.HasPrefix(got, "Output too large.") || !strings.Contains(got, "\n99999\n100000\n") {
			t.Errorf("with a hook fed malformed input the model should see Gemini's own output: %.300q", got)
		}
		if _, err := os.Stat(s.StoreDir()); err == nil {
			t.Errorf("a hook fed malformed input stored something")
		}
	})

	t.Logf("bytes the model received: seq 1 100000 (%d bytes): %d with the hook, %d through retval exec (--wrap-shell), %d without; MCP read_text_file of %d bytes: %d with the hook, %d without",
		len(seq), shellWith, wrappedWith, shellWithout, len(text), mcpWith, mcpWithout)
	client := "Gemini CLI " + geminiPackage[strings.LastIndex(geminiPackage, "@")+1:]
	for _, m := range []e2etest.Measure{
		{Result: "run_shell_command: seq 1 100000", Bytes: len(seq), Without: shellWithout, Stub: shellWith, Lookups: shellPeek, Ledger: shellLedger, Value: shellID},
		{Result: "run_shell_command: seq 1 100000 (--wrap-shell)", Bytes: len(seq), Without: shellWithout, Stub: wrappedWith, Lookups: wrappedPeek, Ledger: wrappedLedger, Value: wrappedID},
		{Result: "MCP read_text_file (filesystem server, through the hook)", Bytes: len(text), Without: mcpWithout, Stub: mcpWith, Lookups: mcpPeek, Ledger: mcpLedger, Value: mcpID},
	} {
		m.Client, m.Calls = client, 1
		if m.Lookups == 0 {
			m.Calls = 0
		}
		e2etest.WriteMeasure(t, m)
	}
	t.Logf("scenarios took %v", time.Since(start).Round(100*time.Millisecond))
}

// afterToolInput pins why the value is not the command's exact bytes:
// Gemini hands AfterTool nothing else. A command that prints white space
// around seq 1 100000 runs with an AfterTool hook that only keeps its
// input. The input carries the output twice, llmContent and
// returnDisplay, both exactly as Gemini captured seq 1 100000 alone
// (trimmed: captured), and nothing else of it; the file Gemini saves the
// whole output in holds llmContent. So the white space the command wrote
// is nowhere to be recovered, and two commands that differ by it give a
// hook the same input.
func afterToolInput(t *testing.T, captured []byte) {
	s := newSession(t)
	dir := filepath.Join(s.Tmp, "after")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	keep, _ := json.Marshal(`cat > "$(mktemp -p ` + dir + ` after.XXXXXX)"; echo '{}'`)
	s.writeSettings(`,
  "hooks": {
    "AfterTool": [{"matcher": "^run_shell_command$", "hooks": [{"type": "command", "command": ` + string(keep) + `}]}]
  }`)
	s.policy([]string{"printf", "seq"})
	m := startMock(t, shellScript)
	s.run(m, `shell scenario: printf '\n  '; seq 1 100000; printf '\n\n'`)
	inputs, _ := filepath.Glob(filepath.Join(dir, "after.*"))
	if len(inputs) != 1 {
		t.Fatalf("the hook was run %d times, want once", len(inputs))
	}
	raw := read(t, inputs[0])
	var in struct {
		ToolResponse map[string]json.RawMessage `json:"tool_response"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatalf("the hook input: %v", err)
	}
	var members []string
	for k := range in.ToolResponse {
		members = append(members, k)
	}
	slices.Sort(members)
	if !slices.Equal(members, []string{"llmContent", "returnDisplay"}) {
		t.Errorf("tool_response has %v, want llmContent and returnDisplay: Gemini may now hand over more of the output", members)
	}
	var llm, display string
	json.Unmarshal(in.ToolResponse["llmContent"], &llm)
	json.Unmarshal(in.ToolResponse["returnDisplay"], &display)
	envelope := regexp.MustCompile(`\A<untrusted_context>\nOutput: ` + regexp.QuoteMeta(string(captured)) + `\nProcess Group PGID: \d+\n</untrusted_context>\z`)
	if !envelope.MatchString(llm) {
		t.Errorf("llmContent is not seq 1 100000 trimmed in Gemini's envelope: %.100q … %q", llm, llm[max(0, len(llm)-100):])
	}
	if display != string(captured) {
		t.Errorf("returnDisplay is %d bytes, not seq 1 100000 trimmed (%d)", len(display), len(captured))
	}
	// The white space the command wrote before and after seq's output.
	lost := []string{"\n  1\n2\n", "100000\n\n"}
	var strs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			strs = append(strs, v)
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	var all any
	json.Unmarshal([]byte(raw), &all)
	walk(all)
	saved, _ := filepath.Glob(filepath.Join(s.Home, ".gemini", "tmp", "*", "tool-outputs", "*", "*.txt"))
	if len(saved) != 1 {
		t.Fatalf("Gemini saved %d whole outputs, want one: %v", len(saved), saved)
	}
	if b := read(t, saved[0]); b != llm {
		t.Errorf("the output Gemini saved (%d bytes) is not llmContent", len(b))
	}
	for _, str := range strs {
		for _, l := range lost {
			if strings.Contains(str, l) {
				t.Errorf("the hook input holds %q: the command's white space is recoverable", l)
			}
		}
	}
}
