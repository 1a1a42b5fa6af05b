package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// A tool name is whatever the harness passed to retain --tool: the human
// table shows control characters (escape sequences, tabs, newlines) and
// invalid UTF-8 escaped, so a tool name can neither drive the terminal
// nor break the table's rows and columns.
func TestCatalogueEscapesToolNames(t *testing.T) {
	dir := t.TempDir()
	s := retain.Open(dir)
	L := retain.DefaultLimits()
	L.Threshold = retain.Unlimited
	tool := "evil\x1b]0;owned\x07\ttab\nnewline\xff"
	var out bytes.Buffer
	if _, err := s.Retain(strings.NewReader("x\n"), &out, retain.RetainOptions{Run: "r", Call: "v", Meta: retain.Meta{Tool: tool}, Limits: L, Policy: retain.PolicyLegacy}); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runMain(t, "catalogue", "--runs-dir", dir, "--run", "r")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 3 || strings.ContainsAny(stdout, "\x1b\x07\t") {
		t.Fatalf("control characters reached the table:\n%q", stdout)
	}
	if !strings.Contains(lines[1], `evil\x1b]0;owned\a\ttab\nnewline`) {
		t.Fatalf("tool name not shown escaped: %q", lines[1])
	}
}
