//go:build agents

package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// The pinned packages, installed without their install scripts (Cline's
// only prints a message; Qwen Code's optional native modules are not
// needed).
const (
	qwenPackage  = "@qwen-code/qwen-code@0.24.4"
	clinePackage = "cline@3.0.65"
	fsPackage    = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

// Set in the re-executed test process that runs inside the namespace.
const (
	envQwen   = "RETVAL_E2E_QWEN"
	envCline  = "RETVAL_E2E_CLINE"
	envFS     = "RETVAL_E2E_MCP_FILESYSTEM"
	envRetval = "RETVAL_E2E_RETVAL"
)

// seqLines is the big result: seq 1 100000, 588,895 bytes.
const seqLines = 100000

var seq = e2etest.SeqOutput(seqLines)

// isolate installs what the scenarios need, outside the namespace, and
// runs the test inside it. bin is the client's executable, in the
// package installed as pkg.
func isolate(t *testing.T, envBin, pkg, bin string) {
	dir := e2etest.Package(t, pkg, "--ignore-scripts")
	fs := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envBin+"="+dir+"/"+bin, envFS+"="+fs, envRetval+"="+retval)
}

// figure logs one measured figure in the form bench/agents.sh collects.
func figure(t *testing.T, client, what string, bytes int) {
	t.Helper()
	t.Logf("figure: %s: %s: %d bytes", client, what, bytes)
}

var stubHead = regexp.MustCompile(`\[retained #([0-9a-z-]+)\] `)

// checkStub asserts that out, a command's output or an MCP result's text
// as the model received it, is the stub of seq: its first line names
// seq's size, line count and SHA-256, and it is under 2 KiB. It returns
// the value's id.
func checkStub(t *testing.T, out string) string {
	t.Helper()
	m := stubHead.FindStringSubmatchIndex(out)
	if m == nil || m[0] != 0 {
		t.Fatalf("not a stub: %.300q", out)
	}
	want := fmt.Sprintf("%d bytes, %d lines, sha256:%s, complete", len(seq), seqLines, e2etest.SHA(seq))
	if first, _, _ := strings.Cut(out[m[1]:], "\n"); !strings.HasPrefix(first, want) {
		t.Fatalf("the stub says %q, want %q", first, want)
	}
	if len(out) >= 2048 {
		t.Errorf("the stub is %d bytes", len(out))
	}
	return out[m[2]:m[3]]
}

// checkStored asserts that the store of s holds seq, whole, as value id
// of run.
func checkStored(t *testing.T, s *e2etest.Session, run, id string) {
	t.Helper()
	if got := s.StoredValue(run, id); string(got) != string(seq) {
		t.Errorf("the stored value is %d bytes, sha256 %s: not seq's output", len(got), e2etest.SHA(got))
	}
}

var runFlag = regexp.MustCompile(` --run (\S+) `)

// runOf is the run a read-more command names.
func runOf(t *testing.T, cmd string) string {
	t.Helper()
	m := runFlag.FindStringSubmatch(cmd)
	if m == nil {
		t.Fatalf("no --run in %q", cmd)
	}
	return m[1]
}

var linesFlag = regexp.MustCompile(`--lines (\d+-\d+)`)

// readMoreMCP is the line range of an MCP stub's read-more line,
// "[read more: peek ID --lines A-B | --query TEXT]".
func readMoreMCP(t *testing.T, stub string) string {
	t.Helper()
	m := linesFlag.FindStringSubmatch(stub)
	if m == nil {
		t.Fatalf("no --lines A-B in the stub: %.300q", stub)
	}
	return m[1]
}

// peekArgs are the arguments of the retval_peek call the read-more line
// of an MCP stub asks for: its id and line range.
func peekArgs(stub string) map[string]string {
	args := map[string]string{}
	if m := stubHead.FindStringSubmatch(stub); m != nil {
		args["id"] = m[1]
	}
	if m := linesFlag.FindStringSubmatch(stub); m != nil {
		args["lines"] = m[1]
	}
	return args
}

// checkPeek asserts that got is lines of seq as peek shows them, from the
// range rng ("A-B") asks for.
func checkPeek(t *testing.T, got, rng string) {
	t.Helper()
	a, b := e2etest.PeekRange(t, "--lines "+rng)
	e2etest.CheckPeek(t, got, e2etest.Lines(string(seq)), a, b)
}

// jsonText is s as a JSON string's contents: how a text sits inside a
// JSON document written without HTML escaping.
func jsonText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(b.String(), "\n"), `"`), `"`)
}

// writeFile writes a file of the session, failing the test if it cannot.
func writeFile(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// writeJSON writes v as a JSON file.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b, 0o644)
}
