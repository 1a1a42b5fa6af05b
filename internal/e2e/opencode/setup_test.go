// Package opencode proves retval's opencode plugin
// (integrations/opencode/retval.js) with the real opencode CLI: pinned npm
// packages, `opencode run` inside a network namespace that has only
// loopback, against a scripted mock of an OpenAI-compatible chat
// completions API.
package opencode

import (
	"path/filepath"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache (opencode's without its install scripts, which fetch from outside
// hosts).
const (
	opencodePackage = "opencode-ai@1.18.33"
	pluginPackage   = "@opencode-ai/plugin@1.18.33"
	fsPackage       = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envOpencode = "RETVAL_E2E_OPENCODE"
	envPlugin   = "RETVAL_E2E_OPENCODE_PLUGIN"
	envFS       = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval   = "RETVAL_E2E_RETVAL"
	envPluginJS = "RETVAL_E2E_PLUGIN_JS"
)

func TestOpencode(t *testing.T) {
	if e2etest.Isolated() {
		scenarios(t)
		return
	}
	opencode := filepath.Join(e2etest.Package(t, opencodePackage, "--ignore-scripts"), "node_modules", "opencode-linux-x64", "bin", "opencode")
	plugin := e2etest.Package(t, pluginPackage, "--ignore-scripts")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	js := filepath.Join(e2etest.ModuleRoot(t), "integrations", "opencode", "retval.js")
	e2etest.Isolate(t, envOpencode+"="+opencode, envPlugin+"="+plugin, envFS+"="+fs, envRetval+"="+retval, envPluginJS+"="+js)
}
