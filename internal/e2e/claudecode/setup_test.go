// Package claudecode proves retval's Claude Code hook with the real Claude
// Code CLI: pinned npm packages, run in print mode inside a network
// namespace that has only loopback, against a scripted mock of the
// Anthropic Messages API.
package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The pinned packages; .ci/clients.sh installs the same ones into the same
// cache.
const (
	claudePackage = "@anthropic-ai/claude-code@2.1.328"
	fsPackage     = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envChild  = "RETVAL_E2E_NETNS"
	envClaude = "RETVAL_E2E_CLAUDE"
	envFS     = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval = "RETVAL_E2E_RETVAL"
)

// install makes sure pkg is installed in the cache and returns the path of
// its bin. The test may skip only here, when npm cannot install it, and
// not even then under CI.
func install(t *testing.T, pkg, bin string) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".cache", "retval-ci", strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "-"))
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return path
	}
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		fail("npm is not installed (.ci/clients.sh installs it): %v", err)
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", pkg).CombinedOutput()
	if err != nil {
		fail("npm install %s: %v\n%s", pkg, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// buildRetval builds the retval under test into dir.
func buildRetval(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s", root)
	}
	out := filepath.Join(dir, "retval")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestClaudeCode runs the scenarios in a network namespace that has only
// loopback: it re-executes this test there (unshare -n as root, with a
// user namespace otherwise), where the mock listens on 127.0.0.1 and
// nothing else can be reached.
func TestClaudeCode(t *testing.T) {
	if os.Getenv(envChild) != "" {
		scenarios(t)
		return
	}
	claude := install(t, claudePackage, "claude")
	fs := install(t, fsPackage, "mcp-server-filesystem")
	bin := t.TempDir()
	retval := buildRetval(t, bin)

	unshare := []string{"unshare", "-n"}
	if os.Geteuid() != 0 {
		unshare = []string{"unshare", "-r", "-n"}
	}
	if out, err := exec.Command(unshare[0], append(unshare[1:], "true")...).CombinedOutput(); err != nil {
		t.Fatalf("%s true: %v: %s (the test needs a network namespace: run as root or allow user namespaces)", strings.Join(unshare, " "), err, out)
	}
	args := append(unshare[1:], "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		os.Args[0], "-test.run=^TestClaudeCode$", "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd := exec.Command(unshare[0], args...)
	cmd.Env = append(os.Environ(), envChild+"=1", envClaude+"="+claude, envFS+"="+fs, envRetval+"="+retval)
	out, err := cmd.CombinedOutput()
	t.Logf("inside the namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the scenarios failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestClaudeCode") {
		t.Fatal("the scenarios did not run")
	}
}
