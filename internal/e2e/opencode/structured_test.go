package opencode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// envStructured, set, makes the test binary an MCP server over stdio
// whose one tool, report, answers a big text block and, beside it,
// structuredContent holding that text and members the text does not
// have (structuredOnly among them): what the model sees of
// structuredContent is then in plain view.
const envStructured = "RETVAL_E2E_STRUCTURED_SERVER"

// structuredOnly is in the structured content alone, never in the text.
const structuredOnly = "structured-only-9c1e4b"

func TestMain(m *testing.M) {
	if os.Getenv(envStructured) != "" {
		serveStructured(os.Stdin, os.Stdout)
		return
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// structuredText is the report tool's text.
func structuredText() string { return e2etest.FileText(100 << 10) }

// serveStructured answers MCP requests, one JSON-RPC message a line,
// until in ends.
func serveStructured(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "structured", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "report", "description": "A report",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}}
		case "tools/call":
			text := structuredText()
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}},
				"structuredContent": map[string]any{"text": text, "exit_code": 3, "marker": structuredOnly}}
		case "ping":
			result = map[string]any{}
		default:
			enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "no method " + req.Method}})
			continue
		}
		enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}

// structuredServer is the report server, named sc: a script in the
// session's bin that runs this test binary as it.
func (s *session) structuredServer() map[string]any {
	s.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		s.t.Fatal(err)
	}
	script := filepath.Join(s.Bin, "structured-server")
	body := fmt.Sprintf("#!/bin/sh\n%s=1 exec %s\n", envStructured, shellQuote(exe))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		s.t.Fatal(err)
	}
	return map[string]any{"sc": map[string]any{"type": "local", "command": []string{script}, "enabled": true}}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// structuredScript: call the report tool, then stop.
var structuredScript = e2etest.Script{
	Prompt: e2etest.PromptIs("structured scenario"),
	Other:  reply{Text: "ok"},
	Turns:  []e2etest.Turn{{Reply: reply{ID: "call_sc", Name: "sc_report", Args: map[string]any{}}}},
}

// structuredScenarios: does opencode show the model an MCP result's
// structuredContent? Without the plugin the model gets the text and none
// of the members only the structured content has (opencode builds the
// tool result from the content blocks alone), so with the plugin the
// stub replaces all the model would see of the result and the structured
// content is left as it is; were opencode to start showing it, the first
// check fails and the plugin has to retain it as the MCP proxy does.
func structuredScenarios(t *testing.T, c client) {
	text := structuredText()
	t.Run("mcp structuredContent without the plugin", func(t *testing.T) {
		s := newSession(t, c, false)
		m := startMock(t, structuredScript)
		s.configure(m, s.structuredServer())
		s.run(m, "structured scenario")
		got, ok := m.Result("call_sc")
		if !ok {
			t.Fatalf("the model never received the result (tools offered: %v)", m.Tools())
		}
		if !strings.Contains(got, "line 1 of the notes") {
			t.Errorf("the model did not receive the text: %.300q", got)
		}
		if m.Saw(structuredOnly) || m.Saw(`"exit_code"`) {
			t.Errorf("the model was shown the structured content: %.300q", got)
		}
	})
	t.Run("mcp structuredContent", func(t *testing.T) {
		s := newSession(t, c, true)
		m := startMock(t, structuredScript)
		s.configure(m, s.structuredServer())
		s.run(m, "structured scenario")
		got, ok := m.Result("call_sc")
		if !ok {
			t.Fatalf("the model never received the result (tools offered: %v)", m.Tools())
		}
		want := fmt.Sprintf("[retained #call_sc] %d bytes, %d lines, sha256:%s, complete\n", len(text), len(e2etest.Lines(text)), e2etest.SHA([]byte(text)))
		if !strings.HasPrefix(got, want) || len(got) >= 2048 {
			t.Errorf("the model did not receive the stub: %.300q", got)
		}
		if stored := s.StoredValue(runOf(t, e2etest.ReadMore(got)), "call_sc"); string(stored) != text {
			t.Errorf("the stored value is %d bytes, not the text", len(stored))
		}
		if m.Saw(structuredOnly) || m.Saw(text[:2000]) {
			t.Error("the model was shown the structured content or the text")
		}
	})
}
