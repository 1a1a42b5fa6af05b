package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
	"github.com/retval/retval/pkg/expand"
)

// TestGeminiExpand proves the BeforeTool hook's expansion with the real
// Gemini CLI: the model reads a source through the shell (retained: it
// sees the stub), then writes the worked move of docs/expand.md by
// reference with write_file and with a shell here-document, and both get
// the expanded bytes exactly; a call whose references fail is refused,
// naming each failure, and nothing is written.
func TestGeminiExpand(t *testing.T) {
	if e2etest.Isolated() {
		expandScenarios(t)
		return
	}
	gemini := e2etest.Bin(t, geminiPackage, "gemini", "--ignore-scripts")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envGemini+"="+gemini, envRetval+"="+retval)
}

// heredocPrefix and heredocSuffix are the shell command around the moved
// text: a here-document into shell_moved.go.
const (
	heredocPrefix = "cat > shell_moved.go <<'RETVAL_EOF'\n"
	heredocSuffix = "RETVAL_EOF\n"
)

// catID is the value the model was shown for call_cat: its stub's id.
func catID(c conversation) (string, bool) {
	r, ok := c.Result("call_cat")
	id := idOf(r.Text)
	return id, ok && id != ""
}

// expandScript: cat the source (retained); write_file the moved file by
// reference to the value the stub names; write it again through a shell
// here-document by reference; then a write_file whose references fail;
// stop.
func expandScript(dir string) e2etest.Script {
	// byRef is a turn whose arguments name the source's value.
	byRef := func(after string, call func(id string) reply) e2etest.Turn {
		return e2etest.Turn{After: after, Then: func(c conversation) (reply, bool) {
			id, ok := catID(c)
			return call(id), ok
		}}
	}
	return e2etest.Script{
		Prompt: e2etest.PromptContains("expand scenario"),
		Turns: []e2etest.Turn{
			{Reply: reply{ID: "call_cat", Name: "run_shell_command", Args: map[string]any{"command": "cat server.go", "description": "Read the source"}}},
			byRef("call_cat", func(id string) reply {
				return reply{ID: "call_write", Name: "write_file", Args: map[string]any{"file_path": filepath.Join(dir, "moved.go"), "content": e2etest.MoveContent(id)}}
			}),
			byRef("call_write", func(id string) reply {
				return reply{ID: "call_shell", Name: "run_shell_command", Args: map[string]any{"command": heredoc(id), "description": "Write the moved file"}}
			}),
			byRef("call_shell", func(id string) reply {
				return reply{ID: "call_bad", Name: "write_file", Args: map[string]any{"file_path": filepath.Join(dir, "bad.go"), "content": e2etest.BadContent(id, "shell-nope")}}
			}),
		},
	}
}

// heredoc is the shell command the model writes to move the lines
// through the shell.
func heredoc(id string) string {
	return e2etest.Expand(map[string]any{"$concat": []any{heredocPrefix + e2etest.NewText(),
		map[string]any{"$ref": id, "lines": []int{e2etest.MoveFrom, e2etest.MoveTo}}, heredocSuffix}})
}

// modifiedNote is what Gemini appends to the result of a call whose
// input a BeforeTool hook rewrote.
const modifiedNote = "\n\n[System] Tool input parameters were modified by a hook before execution."

// emptyShell is a shell command's result, with no output, after an
// expansion.
var emptyShell = regexp.MustCompile(`\A<untrusted_context>\nOutput: \(empty\)\nProcess Group PGID: \d+\n</untrusted_context>` + regexp.QuoteMeta(modifiedNote) + `\z`)

// callArgs are the arguments of call id in a request's history, as the
// model's turn holds them.
func callArgs(t *testing.T, body, id string) map[string]any {
	t.Helper()
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionCall *struct {
					ID   string         `json:"id"`
					Args map[string]any `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("a request that is not JSON: %v", err)
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.FunctionCall.ID == id {
				return p.FunctionCall.Args
			}
		}
	}
	t.Fatalf("the history has no call %s", id)
	return nil
}

// expandPolicy allows cat, its redirections too, and write_file.
const expandPolicy = `[[rule]]
toolName = "run_shell_command"
commandPrefix = "cat"
allowRedirection = true
decision = "allow"
priority = 100

[[rule]]
toolName = "write_file"
decision = "allow"
priority = 100
`

func expandScenarios(t *testing.T) {
	t.Run("expand", func(t *testing.T) {
		s := newSession(t)
		_, src := s.MoveSource()
		// The user's own rules allow the calls as they run: the hook
		// grants nothing, Gemini checks its rules against the expanded
		// calls.
		s.writePolicy(expandPolicy)
		if out := s.RunRetval("hook", "gemini-cli", "install", "--user"); !strings.Contains(out, "added the hook") {
			t.Fatalf("install: %s", out)
		}
		m := startMock(t, expandScript(s.Proj))
		s.run(m, "expand scenario")
		reqs := m.Requests()
		if !strings.Contains(reqs[0].Body, e2etest.JSONText(expand.Instructions)) {
			t.Errorf("the model was not taught the reference form at the session's start")
		}
		stub := result(t, m, "call_cat")
		id := idOf(stub)
		if !strings.Contains(stub, "[retained #shell-") {
			t.Fatalf("cat through the shell: the model did not receive a stub: %.300q", stub)
		}

		// Both ways of writing the move wrote its bytes exactly.
		want := e2etest.Moved(src)
		for _, name := range []string{"moved.go", "shell_moved.go"} {
			got, err := os.ReadFile(filepath.Join(s.Proj, name))
			if err != nil || string(got) != want {
				t.Errorf("%s: %d bytes (%v), want %d bytes exactly", name, len(got), err, len(want))
			}
		}
		// What the model was told: write_file's own answer, which for a
		// new file is the whole text written, and Gemini's note that a
		// hook rewrote the input; the shell's empty output and the note.
		moved := filepath.Join(s.Proj, "moved.go")
		if got, w := result(t, m, "call_write"), "Successfully created and wrote to new file: "+moved+". Here is the updated code:\n"+want+modifiedNote; got != w {
			t.Errorf("the model received for the write (%d bytes): %.300q, want (%d bytes) %.300q", len(got), got, len(w), w)
		}
		if got := result(t, m, "call_shell"); !emptyShell.MatchString(got) {
			t.Errorf("the model received for the shell command %q, want its empty output and %q", got, modifiedNote)
		}

		// The refused call: nothing written, each failing reference
		// named, as the call's error.
		var bad e2etest.ToolResult
		for _, c := range reqs {
			if r, ok := c.Result("call_bad"); ok {
				bad = r
			}
		}
		if !bad.IsError {
			t.Fatalf("the bad write did not come back as an error: %+v", bad)
		}
		t.Logf("the model received for the bad write: %q", bad.Text)
		e2etest.CheckBad(t, filepath.Join(s.Proj, "bad.go"), bad.Text)
		if !strings.HasPrefix(bad.Text, "Tool execution blocked: retval could not expand the references of this call; nothing ran: ") ||
			!strings.HasSuffix(bad.Text, "; correct them and call again") {
			t.Errorf("the bad write: %q", bad.Text)
		}

		// The model's history holds its calls as it wrote them: the
		// references, not the text they became.
		last := reqs[len(reqs)-1].Body
		if got := callArgs(t, last, "call_write")["content"]; got != e2etest.MoveContent(id) {
			t.Errorf("the history holds the write's content as %.200q, not the reference form", got)
		}
		if got := callArgs(t, last, "call_shell")["command"]; got != heredoc(id) {
			t.Errorf("the history holds the shell command as %.200q, not the reference form", got)
		}
		refs, saved := s.References(s.runOf())
		if refs != 2 || saved <= int64(len(want)) {
			t.Errorf("stats: %d references, %d output bytes saved", refs, saved)
		}
		t.Logf("the model wrote %d bytes of content for the %d-byte file; stats: %d references saved %d output bytes",
			len(e2etest.MoveContent(id)), len(want), refs, saved)
	})

	// The expand scenario's rule allows cat only with redirections: the
	// expanded command ran as the rule allows it, not as the model wrote
	// it ($expand:…). Without them, Gemini refuses it: the hook's
	// rewrite grants nothing.
	t.Run("expand grants nothing", func(t *testing.T) {
		s := newSession(t)
		s.MoveSource()
		s.policy([]string{"cat"}, "write_file")
		s.RunRetval("hook", "gemini-cli", "install", "--user")
		m := startMock(t, expandScript(s.Proj))
		s.run(m, "expand scenario")
		if _, err := os.Stat(filepath.Join(s.Proj, "shell_moved.go")); err == nil {
			t.Errorf("the expanded shell command ran, which no rule allows")
		}
		if r, ok := m.Result("call_shell"); !ok || !strings.Contains(r, "requires user confirmation") {
			t.Errorf("the shell command: %q, want Gemini's refusal", r)
		}
	})
}
