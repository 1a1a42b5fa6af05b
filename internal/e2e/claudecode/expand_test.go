package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// moveContent is the Write's content as the model writes it: $expand: of
// the new lines and the moved range of the value retained for toolu_cat
// (the worked move of docs/expand.md).
func moveContent() string { return e2etest.MoveContent("toolu_cat") }

// expandScript: cat the source (retained), Write the moved file with a
// reference, write two files through the filesystem MCP server with the
// string and the object form, then a Write whose references fail.
func expandScript(dir string) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptPrefix("expand scenario"),
		Other:  reply{Text: "ok"},
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "toolu_cat", Name: "Bash", Args: map[string]any{"command": "cat server.go", "description": "Read the source"}}},
			{After: "toolu_cat", Reply: reply{ID: "toolu_write", Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, "moved.go"), "content": moveContent()}}},
			{After: "toolu_write", Then: func(c conversation) (reply, bool) {
				return reply{ID: "toolu_search", Name: "ToolSearch", Args: map[string]any{"query": "select:mcp__filesystem__write_file"}}, strings.Contains(c.Prompt, "mcp")
			}},
			{After: "toolu_search", Reply: reply{ID: "toolu_mcp1", Name: "mcp__filesystem__write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_string.txt"), "content": e2etest.MCPString("toolu_cat")}}},
			{After: "toolu_mcp1", Reply: reply{ID: "toolu_mcp2", Name: "mcp__filesystem__write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_object.txt"), "content": e2etest.MCPObject("toolu_cat")}}},
			{After: "toolu_mcp2", Reply: reply{ID: "toolu_bad", Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, "bad.go"),
				"content": e2etest.BadContent("toolu_cat", "toolu_nope")}}},
		},
	}
}

func expandScenarios(t *testing.T) {
	t.Run("expand", func(t *testing.T) {
		s := newSession(t)
		_, src := s.MoveSource()
		s.RunRetval("hook", "claude-code", "install", "--project", s.Proj)
		s.mcpSetup("unused\n")
		m := startMock(t, expandScript(s.Proj))
		r := s.run(m, "expand scenario mcp", "--mcp-config", filepath.Join(s.Tmp, "mcp.json"),
			"--allowedTools", "Write,mcp__filesystem__write_file")
		want := e2etest.Moved(src)
		got, err := os.ReadFile(filepath.Join(s.Proj, "moved.go"))
		if err != nil || string(got) != want {
			t.Fatalf("moved.go: %d bytes (%v), want %d bytes exactly", len(got), err, len(want))
		}
		e2etest.CheckMCPWrites(t, s.Proj, src)
		bad, _ := m.Result("toolu_bad")
		e2etest.CheckBad(t, filepath.Join(s.Proj, "bad.go"), bad)
		// The model's history holds the reference form, not the text, and
		// the bytes and digest of what was written.
		reqs := m.Requests()
		lastBody := reqs[len(reqs)-1].Body
		summary := fmt.Sprintf("[retval expanded /content: %d bytes, sha256:%s]", len(want), e2etest.SHA([]byte(want)))
		if !strings.Contains(lastBody, e2etest.JSONText(moveContent())) {
			t.Errorf("the history does not hold the reference form the model wrote")
		}
		if strings.Contains(lastBody, e2etest.JSONText(src[e2etest.MoveFrom+10])) {
			t.Errorf("the history holds the expanded text")
		}
		if !strings.Contains(lastBody, e2etest.JSONText(summary)) {
			t.Errorf("the model was not told %s", summary)
		}
		refs, saved := s.References(r.SessionID)
		if refs != 3 || saved <= int64(len(want)/2) {
			t.Errorf("stats: %d references, %d output bytes saved", refs, saved)
		}
		t.Logf("stats: %d references saved %d output bytes", refs, saved)
	})

	t.Run("expand grants nothing", func(t *testing.T) {
		s := newSession(t)
		s.MoveSource()
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
