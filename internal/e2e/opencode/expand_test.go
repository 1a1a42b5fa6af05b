package opencode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
	"github.com/retval/retval/pkg/expand"
)

// moveContent is the write's content as the model writes it: $expand: of
// the new lines and the moved range of the value retained for call_cat
// (the worked move of docs/expand.md).
func moveContent() string { return e2etest.MoveContent("call_cat") }

// bashContent is a shell command by reference: the moved lines into wc
// through a here-document. opencode's bash tool records the arguments it
// ran with as the call's input while it runs, so its history would carry
// the expanded command but for the plugin.
const bashContent = expand.Prefix + `{"$concat": ["wc -l <<'MOVED'\n", {"$ref": "call_cat", "lines": [2100, 2399]}, "MOVED\n"]}`

// mcpObject is the object form, which opencode lets through to an MCP
// tool.
var mcpObject = e2etest.MCPObject("call_cat")

// expandScript: cat the source (retained; the command waits until the
// client saved it whole, as savedWait says why), write the moved file
// with a reference, write two files through the filesystem MCP server
// with the string and the object form, a write whose references fail,
// then a shell command by reference. Any other prompt (the resumed session's) gets a text.
func expandScript(dir string, size int) e2etest.Script {
	return e2etest.Script{
		Prompt: e2etest.PromptIs("expand scenario"),
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_cat", Name: "bash", Args: map[string]any{"command": "cat server.go; " + savedWait(size), "description": "Read the source"}}},
			{After: "call_cat", Reply: reply{ID: "call_write", Name: "write", Args: map[string]any{"filePath": filepath.Join(dir, "moved.go"), "content": moveContent()}}},
			{After: "call_write", Reply: reply{ID: "call_mcp1", Name: "fs_write_file", Args: map[string]any{
				"path": filepath.Join(dir, "mcp_string.txt"), "content": e2etest.MCPString("call_cat")}}},
			{After: "call_mcp1", Reply: reply{ID: "call_mcp2", Name: "fs_write_file", Args: map[string]any{"path": filepath.Join(dir, "mcp_object.txt"), "content": mcpObject}}},
			{After: "call_mcp2", Reply: reply{ID: "call_bad", Name: "write", Args: map[string]any{"filePath": filepath.Join(dir, "bad.go"), "content": e2etest.BadContent("call_cat", "call_nope")}}},
			{After: "call_bad", Reply: reply{ID: "call_bash", Name: "bash", Args: map[string]any{"command": bashContent, "description": "Count the moved lines"}}},
		},
	}
}

// chatRequest is what a request tells of the model's history: the
// system prompt, and each tool call with its arguments as sent.
type chatRequest struct {
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

func parseChat(t *testing.T, body string) chatRequest {
	t.Helper()
	var r chatRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("a request that is not JSON: %v", err)
	}
	return r
}

// args are the arguments of tool call id in the history, decoded.
func (r chatRequest) args(t *testing.T, id string) map[string]any {
	t.Helper()
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				var a map[string]any
				if err := json.Unmarshal([]byte(c.Function.Arguments), &a); err != nil {
					t.Fatalf("call %s's arguments %.200q: %v", id, c.Function.Arguments, err)
				}
				return a
			}
		}
	}
	t.Fatalf("the history has no call %s", id)
	return nil
}

// system is the request's system prompt.
func (r chatRequest) system() string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role == "system" {
			b.WriteString(e2etest.ContentText(m.Content))
		}
	}
	return b.String()
}

func expandScenarios(t *testing.T, c client) {
	t.Run("expand", func(t *testing.T) {
		s := newSession(t, c, true)
		text, src := s.MoveSource()
		m := startMock(t, expandScript(s.Proj, len(text)))
		s.configure(m, s.mcpServers())
		s.run(m, "expand scenario")

		stub, ok := m.Result("call_cat")
		if !ok || !strings.HasPrefix(stub, "[retained #call_cat] ") {
			t.Fatalf("the source was not retained: %.300q", stub)
		}
		run := runOf(t, e2etest.ReadMore(stub))
		if stored := s.StoredValue(run, "call_cat"); string(stored) != text {
			t.Fatalf("the stored source is %d bytes, not the file's %d", len(stored), len(text))
		}
		// The reference form reached the model from the plugin.
		if first := parseChat(t, m.Requests()[0].Body); !strings.Contains(first.system(), expand.Instructions) {
			t.Errorf("the system prompt does not teach the reference form")
		}

		want := e2etest.Moved(src)
		got, err := os.ReadFile(filepath.Join(s.Proj, "moved.go"))
		if err != nil || string(got) != want {
			t.Fatalf("moved.go: %d bytes (%v), want %d bytes exactly", len(got), err, len(want))
		}
		summary := fmt.Sprintf("[retval expanded /content: %d bytes, sha256:%s]", len(want), e2etest.SHA([]byte(want)))
		e2etest.CheckMCPWrites(t, s.Proj, src)
		for id, lines := range map[string][2]int{"call_mcp1": {1, 50}, "call_mcp2": {51, 60}} {
			w := strings.Join(src[lines[0]-1:lines[1]], "")
			if res, _ := m.Result(id); !strings.Contains(res, fmt.Sprintf("[retval expanded /content: %d bytes, sha256:%s]", len(w), e2etest.SHA([]byte(w)))) {
				t.Errorf("%s's result does not give the bytes and digest: %q", id, res)
			}
		}

		bad, _ := m.Result("call_bad")
		t.Logf("%s: the model received for the bad write: %q", c.name, bad)
		e2etest.CheckBad(t, filepath.Join(s.Proj, "bad.go"), bad)

		// The request after the write holds, in the model's history, the
		// reference form it wrote (not the text) and the bytes and digest.
		var next *conversation
		for _, r := range m.Requests() {
			if l := r.Last(); l != nil && l.ID == "call_write" {
				next = &r
				break
			}
		}
		if next == nil {
			t.Fatal("no request followed the write")
		}
		checkHistory(t, next.Body, want, summary)
		t.Logf("%s: the model received for the write: %q", c.name, next.Last().Text)
		if res := next.Last().Text; !strings.Contains(res, summary) {
			t.Errorf("the write's result %q does not give %s", res, summary)
		}

		// The shell command ran expanded, and the history keeps the
		// reference form of it too.
		moved := strings.Join(src[e2etest.MoveFrom-1:e2etest.MoveTo], "")
		bashSummary := fmt.Sprintf("[retval expanded /command: %d bytes, sha256:%s]", len(moved)+len("wc -l <<'MOVED'\n")+len("MOVED\n"),
			e2etest.SHA([]byte("wc -l <<'MOVED'\n"+moved+"MOVED\n")))
		if res, _ := m.Result("call_bash"); !strings.HasPrefix(res, "300\n") || !strings.Contains(res, bashSummary) {
			t.Errorf("the shell command's result %q, want 300 lines and %s", res, bashSummary)
		}
		reqs := m.Requests()
		checkBashHistory(t, reqs[len(reqs)-1].Body, moved)

		refs, saved := s.References(run)
		if refs != 4 || saved <= int64(len(want)/2) {
			t.Errorf("stats: %d references, %d output bytes saved", refs, saved)
		}
		t.Logf("%s: the model wrote %d bytes of content for the %d-byte file; stats: %d references saved %d output bytes",
			c.name, len(moveContent()), len(want), refs, saved)

		// Resumed in a new process, the session's history still holds the
		// references: the plugin finds them in what the client stored.
		before := len(m.Requests())
		s.run(m, "expand resume", "--continue")
		reqs = m.Requests()
		if len(reqs) <= before {
			t.Fatal("the resumed session sent no request")
		}
		resumed := reqs[before].Body
		checkHistory(t, resumed, want, summary)
		checkBashHistory(t, resumed, moved)
		if o := parseChat(t, resumed).args(t, "call_mcp2")["content"]; mustJSON(t, o) != mustJSON(t, mcpObject) {
			t.Errorf("the resumed history holds the object form as %v", o)
		}
	})
}

// checkHistory asserts that the request body holds call_write as the model
// wrote it, not the text it became, and the summary of what it became.
func checkHistory(t *testing.T, body, want, summary string) {
	t.Helper()
	r := parseChat(t, body)
	if got := r.args(t, "call_write")["content"]; got != moveContent() {
		t.Errorf("the history holds the write's content as %.200q, not the reference form", got)
	}
	if strings.Contains(body, e2etest.JSONText(e2etest.JSONText(want[len(want)-2000:]))) || strings.Contains(body, e2etest.JSONText(want[len(want)-2000:])) {
		t.Errorf("the history holds the expanded text")
	}
	if !strings.Contains(body, e2etest.JSONText(summary)) {
		t.Errorf("the history does not give %s", summary)
	}
}

// checkBashHistory asserts that the request body holds call_bash as the
// model wrote it, not the command it became.
func checkBashHistory(t *testing.T, body, moved string) {
	t.Helper()
	if got := parseChat(t, body).args(t, "call_bash")["command"]; got != bashContent {
		t.Errorf("the history holds the shell command as %.200q, not the reference form", got)
	}
	if strings.Contains(body, e2etest.JSONText(e2etest.JSONText(moved[len(moved)-2000:]))) || strings.Contains(body, e2etest.JSONText(moved[len(moved)-2000:])) {
		t.Errorf("the history holds the expanded command")
	}
}
