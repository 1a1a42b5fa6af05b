//go:build agents

package agents

import (
	"bytes"
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
)

// TestQwenCode measures Qwen Code (a Gemini CLI fork) in headless mode,
// qwen -p PROMPT --yolo, with the mock as its OpenAI-compatible provider
// (OPENAI_BASE_URL).
func TestQwenCode(t *testing.T) {
	if e2etest.Isolated() {
		qwenScenarios(t)
		return
	}
	isolate(t, envQwen, qwenPackage, "node_modules/@qwen-code/qwen-code/cli-entry.js")
}

// qwenSession is one fresh Qwen Code environment: its settings in
// ~/.qwen/settings.json, and seq's output in the project as seq.txt for
// the MCP filesystem server to read.
type qwenSession struct {
	*e2etest.Session
	t   *testing.T
	seq string // the path of seq.txt
}

func newQwenSession(t *testing.T) *qwenSession {
	s := &qwenSession{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t}
	s.seq = filepath.Join(s.Proj, "seq.txt")
	writeFile(t, s.seq, seq, 0o644)
	if err := os.MkdirAll(filepath.Join(s.Home, ".qwen"), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// configure writes the settings: the OpenAI-compatible provider (the mock,
// named by the environment run gives), no background memory extraction
// (its requests would be answered like the session's), and the given
// MCP servers and hooks.
func (s *qwenSession) configure(mcp, hooks map[string]any) {
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		"memory":   map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	}
	if mcp != nil {
		settings["mcpServers"] = mcp
	}
	if hooks != nil {
		settings["hooks"] = hooks
	}
	writeJSON(s.t, filepath.Join(s.Home, ".qwen", "settings.json"), settings)
}

// fsServer is the MCP filesystem server serving the project, through
// retval mcp proxy --run agents when proxied.
func (s *qwenSession) fsServer(proxied bool) map[string]any {
	fs := os.Getenv(envFS)
	if proxied {
		return map[string]any{"fs": map[string]any{"command": s.Retval, "args": []string{"mcp", "proxy", "--run", "agents", "--", fs, s.Proj}}}
	}
	return map[string]any{"fs": map[string]any{"command": fs, "args": []string{s.Proj}}}
}

// run runs qwen -p PROMPT --yolo against the mock.
func (s *qwenSession) run(m *mockAPI) {
	s.t.Helper()
	// Generous: a run takes seconds, a minute on a loaded machine; this
	// only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", os.Getenv(envQwen), "-p", m.marker, "--yolo")
	cmd.Dir = s.Proj
	cmd.Env = s.Env("OPENAI_API_KEY=dummy", "OPENAI_BASE_URL="+m.URL, "OPENAI_MODEL=mock-model", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("qwen -p: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
	if err != nil {
		s.t.Fatalf("qwen: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
}

// qwenShell is a run_shell_command call.
func qwenShell(command string) step {
	return call("run_shell_command", map[string]string{"command": command})
}

// qwenMCP is a call of an MCP tool of the server fs. Qwen Code defers MCP
// tools: the model sees their names and calls them through tool_call.
func qwenMCP(tool string, args func(c conversation) any) step {
	return step{tool: "tool_call", args: func(c conversation) any {
		return map[string]any{"name": "mcp__fs__" + tool, "arguments": args(c)}
	}}
}

// qwenOutput is the command's output in a run_shell_command result,
// "Command: ...\nDirectory: ...\nOutput: OUTPUT\nError: ...\nExit Code: ...".
func qwenOutput(t *testing.T, result string) string {
	t.Helper()
	out, ok := unwrapQwen(result)
	if !ok {
		t.Fatalf("not a run_shell_command result: %.300q", result)
	}
	return out
}

// unwrapQwen is qwenOutput for the mock, which cannot fail a test.
func unwrapQwen(result string) (string, bool) {
	i, j := strings.Index(result, "\nOutput: "), strings.LastIndex(result, "\nError: ")
	if i < 0 || j < i {
		return "", false
	}
	return result[i+len("\nOutput: ") : j], true
}

var qwenSaved = regexp.MustCompile(`saved to: (\S+)`)

// checkQwenCut asserts that result, what the model received for seq's
// output, is Qwen Code's cut of it, naming the file it saved the whole
// output to (within what the tool wrote around it).
func checkQwenCut(t *testing.T, what, result string) {
	t.Helper()
	if len(result) > len(seq)/10 {
		t.Errorf("%s: the model received %d bytes: no cut", what, len(result))
	}
	m := qwenSaved.FindStringSubmatch(result)
	if m == nil {
		t.Fatalf("%s: the cut names no saved file: %.300q", what, result)
	}
	saved, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Contains(saved, seq) && !bytes.Contains(saved, []byte(jsonText(string(seq)))) {
		t.Errorf("%s: the saved file (%d bytes) does not hold the whole output", what, len(saved))
	}
}

func qwenScenarios(t *testing.T) {
	t.Run("without", func(t *testing.T) {
		s := newQwenSession(t)
		m := startMock(t, "retval-agents without",
			qwenShell("seq 1 100000"),
			qwenMCP("read_text_file", func(conversation) any { return map[string]string{"path": s.seq} }))
		s.configure(s.fsServer(false), nil)
		s.run(m)
		shell, mcp := m.result(0), m.result(1)
		checkQwenCut(t, "shell", shell)
		checkQwenCut(t, "MCP", mcp)
		figure(t, "Qwen Code", "run_shell_command seq 1 100000, without retval", len(shell))
		figure(t, "Qwen Code", "MCP read_text_file of seq's output, without retval", len(mcp))
	})

	t.Run("with", func(t *testing.T) {
		s := newQwenSession(t)
		m := startMock(t, "retval-agents with",
			qwenShell("retval exec -- seq 1 100000"),
			step{tool: "run_shell_command", args: func(c conversation) any {
				out, _ := unwrapQwen(c.Results[0].Text)
				return map[string]string{"command": e2etest.ReadMore(out)}
			}},
			qwenMCP("read_text_file", func(conversation) any { return map[string]string{"path": s.seq} }),
			qwenMCP("retval_peek", func(c conversation) any { return peekArgs(c.Results[2].Text) }))
		s.configure(s.fsServer(true), nil)
		s.run(m)

		shell := m.result(0)
		stub := qwenOutput(t, shell)
		id := checkStub(t, stub)
		readMore := e2etest.ReadMore(stub)
		checkStored(t, s.Session, runOf(t, readMore), id)
		a, b := e2etest.PeekRange(t, readMore)
		e2etest.CheckPeek(t, qwenOutput(t, m.result(1)), e2etest.Lines(string(seq)), a, b)
		figure(t, "Qwen Code", "run_shell_command retval exec -- seq 1 100000", len(shell))

		mcp := m.result(2)
		id = checkStub(t, mcp)
		checkStored(t, s.Session, "agents", id)
		checkPeek(t, m.result(3), readMoreMCP(t, mcp))
		figure(t, "Qwen Code", "MCP read_text_file of seq's output through retval mcp proxy", len(mcp))
	})

	// What Qwen Code's hooks can do with a result: PreToolUse cannot
	// rewrite a command (an updatedInput is ignored, so a retval exec
	// rewrite is not possible); PostToolUse receives the whole output (as
	// tool_response.returnDisplay) and its answer {"continue": false,
	// "stopReason": TEXT} makes the model see TEXT, alone, as the call's
	// result, and the turn goes on.
	t.Run("hooks", func(t *testing.T) {
		s := newQwenSession(t)
		const reason = "[the text a PostToolUse hook answered]"
		hook := filepath.Join(s.Root, "hook.sh")
		writeFile(t, hook, []byte("#!/bin/sh\n# hook.sh EVENT keeps its input as EVENT.in and answers what EVENT.out holds.\ncd \"$(dirname \"$0\")\" && cat >\"$1.in\" && cat \"$1.out\"\n"), 0o755)
		writeJSON(t, filepath.Join(s.Root, "PreToolUse.out"), map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "allow",
			"updatedInput": map[string]string{"command": "retval exec -- seq 1 100000"},
			"tool_input":   map[string]string{"command": "retval exec -- seq 1 100000"},
		}})
		writeJSON(t, filepath.Join(s.Root, "PostToolUse.out"), map[string]any{"continue": false, "stopReason": reason})
		hooks := map[string]any{}
		for _, event := range []string{"PreToolUse", "PostToolUse"} {
			hooks[event] = []any{map[string]any{"matcher": "run_shell_command",
				"hooks": []any{map[string]any{"type": "command", "command": hook + " " + event}}}}
		}
		m := startMock(t, "retval-agents hooks", qwenShell("seq 1 100000"))
		s.configure(nil, hooks)
		s.run(m)

		if got := m.result(0); got != reason {
			t.Errorf("the model received %.300q, want the hook's stopReason %q", got, reason)
		}
		b, err := os.ReadFile(filepath.Join(s.Root, "PostToolUse.in"))
		if err != nil {
			t.Fatalf("the PostToolUse hook did not run: %v", err)
		}
		var in struct {
			ToolInput    map[string]string `json:"tool_input"`
			ToolResponse struct {
				LLMContent    string `json:"llmContent"`
				ReturnDisplay string `json:"returnDisplay"`
			} `json:"tool_response"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if in.ToolInput["command"] != "seq 1 100000" {
			t.Errorf("the command ran as %q: PreToolUse rewrote it", in.ToolInput["command"])
		}
		if !strings.HasPrefix(in.ToolResponse.ReturnDisplay, string(seq)) {
			t.Errorf("the PostToolUse hook's returnDisplay (%d bytes) does not begin with the whole output", len(in.ToolResponse.ReturnDisplay))
		}
		if len(in.ToolResponse.LLMContent) > len(seq)/10 {
			t.Errorf("the PostToolUse hook's llmContent is %d bytes, not Qwen Code's cut", len(in.ToolResponse.LLMContent))
		}
		t.Logf("the PostToolUse hook received llmContent of %d bytes and returnDisplay of %d bytes (%q after the output)",
			len(in.ToolResponse.LLMContent), len(in.ToolResponse.ReturnDisplay), strings.TrimPrefix(in.ToolResponse.ReturnDisplay, string(seq)))
	})
}
