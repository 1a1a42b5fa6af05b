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
