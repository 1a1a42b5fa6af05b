//go:build agents

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// TestCline measures the Cline CLI (cline PROMPT, which acts with every
// tool approved), with the mock as its openai-compatible provider.
func TestCline(t *testing.T) {
	if e2etest.Isolated() {
		clineScenarios(t)
		return
	}
	isolate(t, envCline, clinePackage, "node_modules/@cline/cli-linux-x64/bin/cline")
}

// clineSession is one fresh Cline environment: its state in ~/.cline
// (the provider in data/settings/providers.json, MCP servers in
// data/settings/cline_mcp_settings.json, hook scripts in hooks/, plugins
// in plugins/), and seq's output in the project as seq.txt.
type clineSession struct {
	*e2etest.Session
	t        *testing.T
	seq      string // the path of seq.txt
	settings string // ~/.cline/data/settings
}

func newClineSession(t *testing.T) *clineSession {
	s := &clineSession{Session: e2etest.NewSession(t, os.Getenv(envRetval)), t: t}
	s.seq = filepath.Join(s.Proj, "seq.txt")
	writeFile(t, s.seq, seq, 0o644)
	s.settings = filepath.Join(s.Home, ".cline", "data", "settings")
	for _, d := range []string{s.settings, filepath.Join(s.Home, ".cline", "hooks"), filepath.Join(s.Home, ".cline", "plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Sessions run in the CLI's own process, not a hub daemon that would
	// outlive the test; a plugin gets time to start on a loaded machine
	// (4 s by default).
	s.Extra = []string{"CLINE_SESSION_BACKEND_MODE=local", "CLINE_PLUGIN_IMPORT_TIMEOUT_MS=120000"}
	return s
}

// configure sets the provider, the mock (cline auth -p openai-compatible
// -b URL; a providers.json written by hand is not taken), and the MCP
// server fs, through retval mcp proxy --run agents when proxied.
func (s *clineSession) configure(m *mockAPI, proxied bool) {
	s.cline(nil, "auth", "-p", "openai-compatible", "-k", "dummy", "-b", m.URL, "-m", "mock-model")
	fs := os.Getenv(envFS)
	// Cline gives a server 3 s to start by default, too few for node on a
	// loaded machine.
	server := map[string]any{"command": fs, "args": []string{s.Proj}, "timeout": 120}
	if proxied {
		server = map[string]any{"command": s.Retval, "args": []string{"mcp", "proxy", "--run", "agents", "--", fs, s.Proj}, "timeout": 120}
	}
	writeJSON(s.t, filepath.Join(s.settings, "cline_mcp_settings.json"), map[string]any{"mcpServers": map[string]any{"fs": server}})
}

// run runs cline --json PROMPT against the mock.
func (s *clineSession) run(m *mockAPI) {
	s.t.Helper()
	s.cline(m, "--json", m.marker)
}

// cline runs the Cline CLI in the project with args.
func (s *clineSession) cline(m *mockAPI, args ...string) {
	s.t.Helper()
	// Generous: a run takes seconds, a minute on a loaded machine; this
	// only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Getenv(envCline), args...)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if m != nil {
		s.t.Logf("cline: %v, %d requests", time.Since(start).Round(10*time.Millisecond), len(m.Requests()))
	}
	if err != nil {
		s.t.Fatalf("cline %s: %v\nstdout: %s\nstderr: %s", args[0], err, out, stderr.String())
	}
}

// clineShell is a run_commands call of one command.
func clineShell(command func(c conversation) string) step {
	return step{tool: "run_commands", args: func(c conversation) any { return map[string][]string{"commands": {command(c)}} }}
}

// command is a clineShell command that does not depend on the
// conversation.
func command(cmd string) func(conversation) string { return func(conversation) string { return cmd } }

// clineOutput is the command's output in a run_commands result, the JSON
// [{"query": COMMAND, "result": OUTPUT, "success": true}].
func clineOutput(result string) (string, bool) {
	var out []struct {
		Result string `json:"result"`
	}
	if json.Unmarshal([]byte(result), &out) != nil || len(out) != 1 {
		return "", false
	}
	return out[0].Result, true
}

// clineMCPText is the text of an MCP result as Cline gives it to the
// model, the JSON {"content": [{"type": "text", "text": TEXT}, ...]}.
func clineMCPText(result string) (string, bool) {
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal([]byte(result), &out) != nil || len(out.Content) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, c := range out.Content {
		b.WriteString(c.Text)
	}
	return b.String(), true
}

// must fails the test unless ok.
func must(t *testing.T, what, result string, ok bool) {
	t.Helper()
	if !ok {
		t.Fatalf("not %s: %.300q", what, result)
	}
}

// readMoreOf is the read-more command of the stub in the run_commands
// result of the nth call, for the mock.
func readMoreOf(n int) func(c conversation) string {
	return func(c conversation) string {
		out, _ := clineOutput(c.Results[n].Text)
		return e2etest.ReadMore(out)
	}
}

// checkExec asserts that the model received for the mock's first call
// the stub of seq, kept in the store of s, and for its second, the
// stub's read-more command, the lines it asks for.
func checkExec(t *testing.T, s *clineSession, m *mockAPI) {
	t.Helper()
	stub, ok := clineOutput(m.result(0))
	must(t, "a run_commands result", m.result(0), ok)
	id := checkStub(t, stub)
	readMore := e2etest.ReadMore(stub)
	checkStored(t, s.Session, runOf(t, readMore), id)
	peek, ok := clineOutput(m.result(1))
	must(t, "a run_commands result", m.result(1), ok)
	a, b := e2etest.PeekRange(t, readMore)
	e2etest.CheckPeek(t, peek, e2etest.Lines(string(seq)), a, b)
}

func clineScenarios(t *testing.T) {
	t.Run("without", func(t *testing.T) {
		s := newClineSession(t)
		m := startMock(t, "retval-agents without",
			clineShell(command("seq 1 100000")),
			call("fs__read_text_file", map[string]string{"path": s.seq}))
		s.configure(m, false)
		s.run(m)
		shell, mcp := m.result(0), m.result(1)
		// Cline keeps the head and tail of a command's output, about 48k
		// characters, and then any tool result's first and last 4,000.
		for what, got := range map[string]string{"shell": shell, "MCP": mcp} {
			if len(got) > len(seq)/10 {
				t.Errorf("%s: the model received %d bytes: no cut", what, len(got))
			}
		}
		figure(t, "Cline", "run_commands seq 1 100000, without retval", len(shell))
		figure(t, "Cline", "MCP read_text_file of seq's output, without retval", len(mcp))
	})

	t.Run("with", func(t *testing.T) {
		s := newClineSession(t)
		m := startMock(t, "retval-agents with",
			clineShell(command("retval exec -- seq 1 100000")),
			clineShell(readMoreOf(0)),
			call("fs__read_text_file", map[string]string{"path": s.seq}),
			step{tool: "fs__retval_peek", args: func(c conversation) any {
				text, _ := clineMCPText(c.Results[2].Text)
				return peekArgs(text)
			}})
		s.configure(m, true)
		s.run(m)

		checkExec(t, s, m)
		figure(t, "Cline", "run_commands retval exec -- seq 1 100000", len(m.result(0)))

		mcp, ok := clineMCPText(m.result(2))
		must(t, "an MCP result", m.result(2), ok)
		id := checkStub(t, mcp)
		checkStored(t, s.Session, "agents", id)
		peek, ok := clineMCPText(m.result(3))
		must(t, "an MCP result", m.result(3), ok)
		checkPeek(t, peek, readMoreMCP(t, mcp))
		figure(t, "Cline", "MCP read_text_file of seq's output through retval mcp proxy", len(m.result(2)))
	})

	// A PreToolUse hook script's overrideInput replaces a call's input:
	// this one runs every command the model gives run_commands through
	// retval exec, so the model runs plain seq 1 100000 and receives the
	// stub.
	t.Run("hook", func(t *testing.T) {
		s := newClineSession(t)
		writeFile(t, filepath.Join(s.Home, ".cline", "hooks", "PreToolUse.sh"), []byte(`#!/bin/sh
# Runs each command given to run_commands through retval exec.
exec jq -c 'if .tool_call.name == "run_commands"
  then {overrideInput: {commands: [.tool_call.input.commands[] | "retval exec -- bash -c " + @sh]}}
  else {} end'
`), 0o755)
		m := startMock(t, "retval-agents hook", clineShell(command("seq 1 100000")), clineShell(readMoreOf(0)))
		s.configure(m, false)
		s.run(m)
		checkExec(t, s, m)
		figure(t, "Cline", "run_commands seq 1 100000, rewritten by a PreToolUse hook to retval exec", len(m.result(0)))
	})

	// A plugin's afterTool hook replaces what the model receives, but for
	// a command it gets Cline's cut of the output, not the whole; for an
	// MCP tool, the whole result.
	t.Run("plugin", func(t *testing.T) {
		s := newClineSession(t)
		const replaced = "[the result a plugin returned]"
		writeFile(t, filepath.Join(s.Home, ".cline", "plugins", "probe.js"), []byte(`// Keeps each result it sees in ~/probe-TOOL.json and replaces it.
import { writeFileSync } from "node:fs";
export default {
  name: "probe",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    afterTool(ctx) {
      writeFileSync(process.env.HOME + "/probe-" + ctx.tool.name + ".json", JSON.stringify(ctx.result));
      return { result: { ...ctx.result, output: `+"`"+replaced+"`"+` } };
    },
  },
};
`), 0o644)
		m := startMock(t, "retval-agents plugin",
			clineShell(command("seq 1 100000")),
			call("fs__read_text_file", map[string]string{"path": s.seq}))
		s.configure(m, false)
		s.run(m)
		for n := range 2 {
			if got := m.result(n); got != replaced {
				t.Errorf("the model received %.300q for %s, want the plugin's %q", got, callID(n), replaced)
			}
		}
		shell, err := os.ReadFile(filepath.Join(s.Home, "probe-run_commands.json"))
		if err != nil {
			t.Fatalf("the plugin saw no run_commands result: %v", err)
		}
		if bytes.Contains(shell, []byte(jsonText(string(seq)))) || !bytes.Contains(shell, []byte("output truncated: 588895 chars total")) {
			t.Errorf("the plugin received %d bytes for the command, not Cline's cut of its output", len(shell))
		}
		mcp, err := os.ReadFile(filepath.Join(s.Home, "probe-fs__read_text_file.json"))
		if err != nil {
			t.Fatalf("the plugin saw no MCP result: %v", err)
		}
		if !bytes.Contains(mcp, []byte(jsonText(string(seq)))) {
			t.Errorf("the plugin received %d bytes for the MCP call, not the whole result", len(mcp))
		}
		t.Logf("the plugin received %d bytes for the command and %d for the MCP call", len(shell), len(mcp))
	})
}
