// Package opencode proves retval's opencode plugin
// (integrations/opencode/retval.js) with the real opencode CLI and with
// Kilo's, which runs opencode plugins unchanged: pinned npm packages,
// `opencode run` (`kilo run`) inside a network namespace that has only
// loopback, against a scripted mock of an OpenAI-compatible chat
// completions API. Every scenario runs against both clients.
package opencode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache (the clients' without their install scripts, which fetch from
// outside hosts).
const (
	opencodePackage = "opencode-ai@1.18.33"
	pluginPackage   = "@opencode-ai/plugin@1.18.33"
	// Kilo's linux-x64 binary, the package its launcher (@kilocode/cli)
	// runs; the launcher itself adds nothing a test needs.
	kiloPackage = "@kilocode/cli-linux-x64@7.7.9"
	fsPackage   = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envPlugin   = "RETVAL_E2E_OPENCODE_PLUGIN"
	envFS       = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval   = "RETVAL_E2E_RETVAL"
	envPluginJS = "RETVAL_E2E_PLUGIN_JS"
)

// client is an agent CLI that runs opencode plugins: where its binary
// is, and the names it reads its configuration and environment by.
type client struct {
	name string // its command, and its directories' name under XDG_CONFIG_HOME and XDG_DATA_HOME
	// pkg is the npm package holding the binary, at bin inside it.
	pkg, bin string
	// envBin passes the binary's path into the namespace.
	envBin string
	// configFile is its global configuration file's name.
	configFile string
	// plugin is the package plugins import, which the client otherwise
	// installs into its configuration directory at start-up.
	plugin, pluginVersion string
	// env keeps it from reaching outside hosts and from loading anything
	// but what the test gives it; config is added to its configuration
	// for the same end.
	env    []string
	config map[string]any
}

var opencodeClient = client{
	name: "opencode", pkg: opencodePackage, bin: "node_modules/opencode-linux-x64/bin/opencode", envBin: "RETVAL_E2E_OPENCODE",
	configFile: "opencode.json", plugin: "@opencode-ai/plugin", pluginVersion: "1.18.33",
	env: []string{
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1", "OPENCODE_DISABLE_TERMINAL_TITLE=1",
	},
}

var kiloClient = client{
	name: "kilo", pkg: kiloPackage, bin: "node_modules/@kilocode/cli-linux-x64/bin/kilo", envBin: "RETVAL_E2E_KILO",
	configFile: "kilo.json", plugin: "@kilocode/plugin", pluginVersion: "7.7.9",
	env: []string{
		"KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_SHARE=1",
		"KILO_DISABLE_LSP_DOWNLOAD=1", "KILO_DISABLE_DEFAULT_PLUGINS=1", "KILO_DISABLE_CLAUDE_CODE=1",
		"KILO_DISABLE_EXTERNAL_SKILLS=1", "KILO_DISABLE_TERMINAL_TITLE=1", "KILO_DISABLE_SESSION_INGEST=1",
		"KILO_DISABLE_CODEBASE_INDEXING=1", "KILO_TELEMETRY_LEVEL=off",
	},
	// Kilo's own provider fetches its models at start-up, and waits for
	// the fetch to fail in the namespace.
	config: map[string]any{"enabled_providers": []string{"mock"}},
}

// Each client's scenarios are two tests, each run in a namespace of its
// own: the big results, and reuse by reference.

func TestOpencode(t *testing.T) { testClient(t, opencodeClient, scenarios) }

func TestKilo(t *testing.T) { testClient(t, kiloClient, scenarios) }

func TestOpencodeExpand(t *testing.T) { testClient(t, opencodeClient, expandScenarios) }

func TestKiloExpand(t *testing.T) { testClient(t, kiloClient, expandScenarios) }

// testClient runs the scenarios against c inside the namespace, having
// installed, outside it, all they need.
func testClient(t *testing.T, c client, scenarios func(*testing.T, client)) {
	if e2etest.Isolated() {
		scenarios(t, c)
		return
	}
	bin := filepath.Join(e2etest.Package(t, c.pkg, "--ignore-scripts"), filepath.FromSlash(c.bin))
	plugin := e2etest.Package(t, pluginPackage, "--ignore-scripts")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	js := filepath.Join(e2etest.ModuleRoot(t), "integrations", "opencode", "retval.js")
	e2etest.Isolate(t, c.envBin+"="+bin, envPlugin+"="+plugin, envFS+"="+fs, envRetval+"="+retval, envPluginJS+"="+js)
}

// binary is c's binary, inside the namespace.
func (c client) binary() string { return os.Getenv(c.envBin) }

// conversation is what one request told the mock; reply one turn of the
// model.
type (
	conversation = e2etest.Conversation
	reply        = e2etest.Reply
)

// startMock serves an OpenAI-compatible chat completions API, scripted.
func startMock(t testing.TB, s e2etest.Script) *e2etest.Mock {
	return e2etest.StartMock(t, e2etest.ChatCompletions{}, s)
}

// readMore is the turn after call after: run with bash, as call id, the
// read-more command of the stub the model received for after.
func readMore(after, id string) e2etest.Turn {
	return e2etest.Turn{After: after, Then: func(c conversation) (reply, bool) {
		cmd := e2etest.ReadMore(c.Last().Text)
		return reply{ID: id, Name: "bash", Args: map[string]any{"command": cmd, "description": "Read more"}}, cmd != ""
	}}
}
