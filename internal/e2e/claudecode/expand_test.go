package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The worked move of docs/expand.md: a new file made of 20 new lines and
// lines 2100-2399 of net/http/server.go, which the model read through
// Bash (retained: it only saw the stub).
const (
	moveFrom, moveTo = 2100, 2399
	newLines         = 20
)

func newText() string {
	var b strings.Builder
	for i := 1; i <= newLines; i++ {
		fmt.Fprintf(&b, "// new line %d of the moved handler file\n", i)
	}
	return b.String()
}

// moveContent is the Write's content as the model writes it: $expand: of
// the new lines and the moved range of the value retained for toolu_cat.
func moveContent() string {
	node, _ := json.Marshal(map[string]any{"$concat": []any{newText(), map[string]any{"$ref": "toolu_cat", "lines": []int{moveFrom, moveTo}}}})
	return "$expand:" + string(node)
}

// expandScript: cat the source (retained), Write the moved file with a
// reference, write two files through the filesystem MCP server with the
// string and the object form, then a Write whose references fail.
func expandScript(dir string) func(conversation) reply {
	return func(c conversation) reply {
		if !strings.HasPrefix(c.Prompt, "expand scenario") {
			return reply{Text: "ok"}
		}
		last := c.Last()
		switch {
		case last == nil:
			return reply{ToolID: "toolu_cat", ToolName: "Bash", ToolInput: map[string]any{"command": "cat server.go", "description": "Read the source"}}
		case last.ID == "toolu_cat":
			return reply{ToolID: "toolu_write", ToolName: "Write", ToolInput: map[string]any{"file_path": filepath.Join(dir, "moved.go"), "content": moveContent()}}
		case last.ID == "toolu_write" && strings.Contains(c.Prompt, "mcp"):
			return reply{ToolID: "toolu_search", ToolName: "ToolSearch", ToolInput: map[string]any{"query": "select:mcp__filesystem__write_file"}}
		case last.ID == "toolu_search":
			return reply{ToolID: "toolu_mcp1", ToolName: "mcp__filesystem__write_file", ToolInput: map[string]any{
				"path": filepath.Join(dir, "mcp_string.txt"), "content": `$expand:{"$ref": "toolu_cat", "lines": [1, 50]}`}}
		case last.ID == "toolu_mcp1":
			return reply{ToolID: "toolu_mcp2", ToolName: "mcp__filesystem__write_file", ToolInput: map[string]any{
				"path": filepath.Join(dir, "mcp_object.txt"), "content": map[string]any{"$ref": "toolu_cat", "lines": []int{51, 60}}}}
		case last.ID == "toolu_mcp2":
			return reply{ToolID: "toolu_bad", ToolName: "Write", ToolInput: map[string]any{"file_path": filepath.Join(dir, "bad.go"),
				"content": `$expand:{"$concat": ["x", {"$ref": "toolu_cat", "lines": [9000, 9001]}, {"$ref": "toolu_nope"}]}`}}
		}
		return reply{Text: "done"}
	}
}

// sourceLines reads net/http/server.go of the Go that runs the test into
// the project and returns its lines, newlines kept.
func (s *session) sourceLines() []string {
	s.t.Helper()
	b := e2etest.GoSource(s.t, "src/net/http/server.go")
	if err := os.WriteFile(filepath.Join(s.Proj, "server.go"), b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")
}

func expandScenarios(t *testing.T) {
	t.Run("expand", func(t *testing.T) {
		s := newSession(t)
		src := s.sourceLines()
		if len(src) < moveTo {
			t.Skipf("server.go has %d lines", len(src))
		}
		s.RunRetval("hook", "claude-code", "install", "--project", s.Proj)
		file := s.mcpSetup("unused\n")
		m := startMock(t, expandScript(s.Proj))
		r := s.run(m, "expand scenario mcp", "--mcp-config", filepath.Join(s.Tmp, "mcp.json"),
			"--allowedTools", "Write,mcp__filesystem__write_file")
		_ = file
		want := newText() + strings.Join(src[moveFrom-1:moveTo], "")
		got, err := os.ReadFile(filepath.Join(s.Proj, "moved.go"))
		if err != nil || string(got) != want {
			t.Fatalf("moved.go: %d bytes (%v), want %d bytes exactly", len(got), err, len(want))
		}
		for name, lines := range map[string][2]int{"mcp_string.txt": {1, 50}, "mcp_object.txt": {51, 60}} {
			got, err := os.ReadFile(filepath.Join(s.Proj, name))
			if w := strings.Join(src[lines[0]-1:lines[1]], ""); err != nil || string(got) != w {
				t.Errorf("%s: %q (%v), want lines %d-%d", name, got, err, lines[0], lines[1])
			}
		}
		bad, _ := m.Result("toolu_bad")
		if _, err := os.Stat(filepath.Join(s.Proj, "bad.go")); err == nil || !strings.Contains(bad, `"/content/$concat/1"`) ||
			!strings.Contains(bad, "(invalid_range)") || !strings.Contains(bad, `"/content/$concat/2"`) || !strings.Contains(bad, "(unknown_reference)") {
			t.Errorf("the bad Write: file written %v, result %q", err == nil, bad)
		}
		// The model's history holds the reference form, not the text, and
		// the bytes and digest of what was written.
		reqs := m.Requests()
		lastBody := reqs[len(reqs)-1].Body
		summary := fmt.Sprintf("[retval expanded /content: %d bytes, sha256:%s]", len(want), e2etest.SHA([]byte(want)))
		if !strings.Contains(lastBody, jsonText(moveContent())) {
			t.Errorf("the history does not hold the reference form the model wrote")
		}
		if strings.Contains(lastBody, jsonText(src[moveFrom+10])) {
			t.Errorf("the history holds the expanded text")
		}
		if !strings.Contains(lastBody, jsonText(summary)) {
			t.Errorf("the model was not told %s", summary)
		}
		var ledger struct {
			Total struct {
				References  int64 `json:"references"`
				OutputSaved int64 `json:"output_saved_bytes"`
			} `json:"total"`
		}
		json.Unmarshal(s.Ledger(r.SessionID), &ledger)
		if ledger.Total.References != 3 || ledger.Total.OutputSaved <= int64(len(want)/2) {
			t.Errorf("stats: %+v", ledger.Total)
		}
		t.Logf("stats: %d references saved %d output bytes", ledger.Total.References, ledger.Total.OutputSaved)
	})

	t.Run("expand grants nothing", func(t *testing.T) {
		s := newSession(t)
		s.sourceLines()
		s.RunRetval("hook", "claude-code", "install", "--project", s.Proj)
		m := startMock(t, expandScript(s.Proj))
		s.run(m, "expand scenario") // Bash allowed, Write not
		if _, err := os.Stat(filepath.Join(s.Proj, "moved.go")); err == nil {
			t.Errorf("the expanded Write ran without a rule allowing Write")
		}
		res, _ := m.Result("toolu_write")
		t.Logf("the Write's result: %q", res)
	})
}

// jsonText is s as it stands inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
