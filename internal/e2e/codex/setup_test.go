// Package codex proves retval's MCP proxy with the real Codex CLI: pinned
// npm packages, `codex exec` inside a network namespace that has only
// loopback, against a scripted mock of the OpenAI Responses API. Without
// the proxy Codex cuts a big MCP result to about 12 KB and keeps nothing;
// through `retval mcp proxy` the model receives the stub and reads the
// value with retval's own tools.
package codex

import (
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache.
const (
	codexPackage = "@openai/codex@0.169.0"
	fsPackage    = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envCodex  = "RETVAL_E2E_CODEX"
	envFS     = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval = "RETVAL_E2E_RETVAL"
)

func TestCodex(t *testing.T) {
	if e2etest.Isolated() {
		scenarios(t)
		return
	}
	codex := e2etest.Bin(t, codexPackage, "codex")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envCodex+"="+codex, envFS+"="+fs, envRetval+"="+retval)
}

// conversation is what one request told the mock; reply one turn of the
// model.
type (
	conversation = e2etest.Conversation
	reply        = e2etest.Reply
)

// startMock serves the OpenAI Responses API, scripted.
func startMock(t testing.TB, s e2etest.Script) *e2etest.Mock {
	return e2etest.StartMock(t, e2etest.Responses{}, s)
}
