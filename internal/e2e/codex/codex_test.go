package codex

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
func (s *session) configure(m *e2etest.Mock, command string, args ...string) {
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
`, tomlString(m.URL), tomlString(command), strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(s.codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// run runs codex exec PROMPT against the mock.
func (s *session) run(m *e2etest.Mock, prompt string) { s.runArgs(m, prompt) }

// runArgs runs codex exec with more flags.
func (s *session) runArgs(m *e2etest.Mock, prompt string, flags ...string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	args := append([]string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, flags...)
	cmd := exec.CommandContext(ctx, s.codex, append(args, prompt)...)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("codex exec: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
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
	var without, jsonWithout int
	var jsonSize int

	t.Run("without the proxy", func(t *testing.T) {
		s := newSession(t)
		file := s.writeFile(text)
		data, _ := s.writeJSONFile()
		if fi, err := os.Stat(data); err == nil {
			jsonSize = int(fi.Size())
		}
		m := startMock(t, readScript(file, data))
		s.configure(m, os.Getenv(envFS), s.Proj)
		s.run(m, "codex scenario")
		got, ok := m.Result("call_read")
		if !ok {
			t.Fatalf("the model never received the read_text_file result (tools offered: %v)", m.Tools())
		}
		without = len(got)
		// Codex shows the model only structuredContent when there is
		// one, serialized, and cuts it to head and tail.
		if !strings.Contains(got, `{"content":"line 1 of the notes`) || !codexCut.MatchString(got) ||
			len(got) < 8<<10 || len(got) > 16<<10 || strings.Contains(got, "[retained #") {
			t.Errorf("without the proxy the model should see Codex's own cut of about 12 KB, got %d bytes: %.300q", len(got), got)
		}
		t.Logf("the model received (%d bytes): %.300q ... %q", len(got), got, got[max(0, len(got)-200):])
		js, _ := m.Result("call_json")
		jsonWithout = len(js)
	})
	var with int
	var measures []e2etest.Measure
	t.Run("through the proxy", func(t *testing.T) {
		s := newSession(t)
		file := s.writeFile(text)
		data, name := s.writeJSONFile()
		m := startMock(t, proxyScript(file, data))
		// Codex cuts a tool result above about 12 KB in the middle, so a
		// peek page must stay below that: retval_peek's default page is
		// 8 KiB (not peek's 16 KiB) for that reason.
		s.configure(m, s.Retval, "mcp", "proxy", "--", os.Getenv(envFS), s.Proj)
		s.run(m, "codex scenario")
		with = checkProxied(t, s, m, text, name)
		ledger := s.Ledger("")
		result := func(id string) int { r, _ := m.Result(id); return len(r) }
		client := "Codex " + codexPackage[strings.LastIndex(codexPackage, "@")+1:] + " (MCP proxy)"
		measures = []e2etest.Measure{
			{Client: client, Result: "MCP read_text_file, then retval_peek of the stub's range", Bytes: len(text),
				Without: without, Stub: with, Lookups: result("call_peek"), Calls: 1, Ledger: ledger, Value: stubID(m, "call_read")},
			{Client: client, Result: "MCP read_text_file of JSON, then retval_resolve of one member", Bytes: jsonSize,
				Without: jsonWithout, Stub: result("call_json"), Lookups: result("call_resolve"), Calls: 1, Ledger: ledger, Value: stubID(m, "call_json")},
		}
	})

	// The same, with the entry rewritten by retval mcp wrap --codex and
	// the peek page size in the user's config file, which the proxy reads.
	t.Run("wrapped by mcp wrap", func(t *testing.T) {
		s := newSession(t)
		file := s.writeFile(text)
		data, name := s.writeJSONFile()
		m := startMock(t, proxyScript(file, data))
		s.configure(m, os.Getenv(envFS), s.Proj)
		cfg := filepath.Join(s.Home, ".config", "retval", "config.toml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte("peek_bytes = \"8KiB\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := s.RunRetval("mcp", "wrap", "--codex")
		if !strings.Contains(out, "fs: wrapped") {
			t.Fatalf("mcp wrap --codex: %s", out)
		}
		s.run(m, "codex scenario")
		checkProxied(t, s, m, text, name)
	})
	t.Logf("bytes the model received for read_text_file of %d bytes: %d without the proxy, %d through it", len(text), without, with)
	for _, m := range measures {
		e2etest.WriteMeasure(t, m)
	}
	t.Logf("scenarios took %v", time.Since(start).Round(100*time.Millisecond))
}

// checkProxied asserts what the model received through the proxy for
// proxyScript: the stub of text (stored in the default store), the exact
// lines of the stub's range from retval_peek, and name from
// retval_resolve. It returns the size of what the model received for the
// file.
func checkProxied(t *testing.T, s *session, m *e2etest.Mock, text, name string) int {
	t.Helper()
	for _, tool := range []string{"mcp__fs/retval_peek", "mcp__fs/retval_resolve", "mcp__fs/retval_list", "mcp__fs/read_text_file"} {
		if !slices.Contains(m.Tools(), tool) {
			t.Errorf("Codex did not offer %s: %v", tool, m.Tools())
		}
	}
	got, ok := m.Result("call_read")
	if !ok {
		t.Fatalf("the model never received the read_text_file result (tools offered: %v)", m.Tools())
	}
	t.Logf("the model received for read_text_file of %d bytes (%d bytes):\n%s", len(text), len(got), got)
	stub := output(got)
	lines := e2etest.Lines(text)
	h := stubHeader.FindStringSubmatch(stub)
	if h == nil || !strings.HasPrefix(stub, fmt.Sprintf("[retained #%s] %d bytes, %d lines, sha256:%s, complete\n", h[1], len(text), len(lines), e2etest.SHA([]byte(text)))) {
		t.Fatalf("the model did not receive the stub of the file's text: %.300q", got)
	}
	if len(got) >= 2048 {
		t.Errorf("the stub is %d bytes", len(got))
	}
	// The proxy's store is the default one, never ./runs in the
	// directory Codex runs in.
	stored, _ := filepath.Glob(filepath.Join(s.StoreDir(), "*.values", h[1]+".txt"))
	if len(stored) != 1 {
		t.Fatalf("the default store holds %d values %s: %v", len(stored), h[1], stored)
	}
	if b, _ := os.ReadFile(stored[0]); string(b) != text {
		t.Errorf("the stored value is %d bytes: not the file's text", len(b))
	}
	if _, err := os.Stat(filepath.Join(s.Proj, "runs")); err == nil {
		t.Errorf("the proxy made a store in the working directory")
	}

	pk := peekLine.FindStringSubmatch(stub)
	if pk == nil {
		t.Fatalf("the stub has no read-more line: %q", stub)
	}
	a, _ := strconv.Atoi(pk[2])
	b, _ := strconv.Atoi(pk[3])
	peek, ok := m.Result("call_peek")
	if !ok {
		t.Fatal("the model never received the retval_peek result")
	}
	e2etest.CheckPeek(t, output(peek), lines, a, b)

	js, _ := m.Result("call_json")
	if !strings.HasPrefix(output(js), "[retained #") {
		t.Fatalf("the JSON file did not come back as a stub: %.300q", js)
	}
	res, ok := m.Result("call_resolve")
	if !ok {
		t.Fatal("the model never received the retval_resolve result")
	}
	if output(res) != name {
		t.Errorf("retval_resolve %s gave %q, want %q", jsonPointer, output(res), name)
	}
	return len(got)
}

// jsonPointer is the member the retval_resolve lookup selects.
const jsonPointer = "/items/1234/name"

// writeJSONFile writes data.json, {"items":[{"id":N,"name":"item N, ..."}, ...]},
// about 100 KB on one line, and returns its path and the string at
// jsonPointer.
func (s *session) writeJSONFile() (string, string) {
	s.t.Helper()
	type item struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	var items []item
	for i := 0; i < 2000; i++ {
		items = append(items, item{i, fmt.Sprintf("item %d, \"quoted\" and \u00e9", i)})
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	file := filepath.Join(s.Proj, "data.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return file, items[1234].Name
}

// wallTime is what Codex puts before a tool's output.
var wallTime = regexp.MustCompile(`^Wall time: [0-9.]+ seconds\nOutput:\n?`)

// output is a tool result as the model received it, without Codex's
// wall-time prefix.
func output(got string) string { return wallTime.ReplaceAllString(got, "") }

var (
	stubHeader = regexp.MustCompile(`\[retained #(\S+)\] `)
	peekLine   = regexp.MustCompile(`\[read more: peek (\S+) --lines (\d+)-(\d+)`)
)

// proxyScript: read file through the proxy; read the stub's range with
// retval_peek; read the JSON file; look a member of it up with
// retval_resolve; stop.
func proxyScript(file, data string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptIs("codex scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_read", Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": file}}},
			{After: "call_read", Then: func(c conversation) (reply, bool) {
				m := peekLine.FindStringSubmatch(c.Last().Text)
				if m == nil {
					return reply{}, false
				}
				return reply{ID: "call_peek", Namespace: "mcp__fs", Name: "retval_peek", Args: map[string]any{"id": m[1], "lines": m[2] + "-" + m[3]}}, true
			}},
			{After: "call_peek", Reply: reply{ID: "call_json", Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": data}}},
			{After: "call_json", Then: func(c conversation) (reply, bool) {
				m := stubHeader.FindStringSubmatch(c.Last().Text)
				if m == nil {
					return reply{}, false
				}
				return reply{ID: "call_resolve", Namespace: "mcp__fs", Name: "retval_resolve",
					Args: map[string]any{"ref": map[string]any{"$ref": m[1], "pointer": jsonPointer, "as": "string"}}}, true
			}},
		},
	}
}

// codexCut is the mark Codex leaves where it cut a tool result.
var codexCut = regexp.MustCompile(`…\d+ (tokens|chars) truncated…`)

// readScript: call fs's read_text_file on file, then on data, then stop.
func readScript(file, data string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptIs("codex scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_read", Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": file}}},
			{After: "call_read", Reply: reply{ID: "call_json", Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": data}}},
		},
	}
}

// stubID is the value id of the stub the model received for call id.
func stubID(m *e2etest.Mock, id string) string {
	r, _ := m.Result(id)
	if h := stubHeader.FindStringSubmatch(r); h != nil {
		return h[1]
	}
	return ""
}
