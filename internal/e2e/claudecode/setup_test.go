// Package claudecode proves retval's Claude Code hook with the real Claude
// Code CLI: pinned npm packages, run in print mode inside a network
// namespace that has only loopback, against a scripted mock of the
// Anthropic Messages API.
package claudecode

import (
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache.
const (
	claudePackage = "@anthropic-ai/claude-code@2.1.328"
	fsPackage     = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envClaude = "RETVAL_E2E_CLAUDE"
	envFS     = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval = "RETVAL_E2E_RETVAL"
)

// TestClaudeCode runs the scenarios in a network namespace that has only
// loopback, where the mock listens on 127.0.0.1 and nothing else can be
// reached.
func TestClaudeCode(t *testing.T) {
	if e2etest.Isolated() {
		scenarios(t)
		return
	}
	claude := e2etest.Bin(t, claudePackage, "claude")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envClaude+"="+claude, envFS+"="+fs, envRetval+"="+retval)
}

// conversation is what one request told the mock; reply one turn of the
// model.
type (
	conversation = e2etest.Conversation
	reply        = e2etest.Reply
)

// startMock serves the Anthropic Messages API, scripted.
func startMock(t testing.TB, s e2etest.Script) *e2etest.Mock {
	return e2etest.StartMock(t, e2etest.Anthropic{}, s)
}

// readMore is the turn after call after: run with Bash, as call id, the
// read-more command of the stub the model received for after.
func readMore(after, id string) e2etest.Turn {
	return e2etest.Turn{After: after, Then: func(c conversation) (reply, bool) {
		cmd := e2etest.ReadMore(c.Last().Text)
		return reply{ID: id, Name: "Bash", Args: map[string]any{"command": cmd, "description": "Read more"}}, cmd != ""
	}}
}
