// Package gemini proves retval's Gemini CLI hook with the real Gemini CLI:
// the pinned npm package, run in headless mode (gemini -p) inside a network
// namespace that has only loopback, against a scripted mock of the Gemini
// API (GOOGLE_GEMINI_BASE_URL).
package gemini

import (
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache (Gemini CLI without its install scripts, which only compile native
// modules it does without).
const (
	geminiPackage = "@google/gemini-cli@0.61.0"
	fsPackage     = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envGemini = "RETVAL_E2E_GEMINI"
	envFS     = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval = "RETVAL_E2E_RETVAL"
)

// TestGeminiCLI runs the scenarios in a network namespace that has only
// loopback, where the mock listens on 127.0.0.1 and nothing else can be
// reached.
func TestGeminiCLI(t *testing.T) {
	if e2etest.Isolated() {
		scenarios(t)
		return
	}
	gemini := e2etest.Bin(t, geminiPackage, "gemini", "--ignore-scripts")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envGemini+"="+gemini, envFS+"="+fs, envRetval+"="+retval)
}

// conversation is what one request told the mock; reply one turn of the
// model.
type (
	conversation = e2etest.Conversation
	reply        = e2etest.Reply
)

// startMock serves the Gemini API, scripted.
func startMock(t testing.TB, s e2etest.Script) *e2etest.Mock {
	return e2etest.StartMock(t, e2etest.Gemini{Model: model}, s)
}

// readMore is the turn after call after: run with run_shell_command, as
// call id, the read-more command of the stub the model received for
// after — only if the call succeeded, when onlySuccess.
func readMore(after, id string, onlySuccess bool) e2etest.Turn {
	return e2etest.Turn{After: after, Then: func(c conversation) (reply, bool) {
		last := c.Last()
		cmd := e2etest.ReadMore(last.Text)
		return reply{ID: id, Name: "run_shell_command", Args: map[string]any{"command": cmd, "description": "Read more"}},
			cmd != "" && !(onlySuccess && last.IsError)
	}}
}
