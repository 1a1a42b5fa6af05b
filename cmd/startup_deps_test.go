package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// startupHeavy are packages (or modules: every package under the path)
// whose init costs every retval process a measurable share of its start-up
// (GODEBUG=inittrace=1 retval --version) and that the shipped binary does
// without.
var startupHeavy = map[string]string{
	"github.com/klauspost/cpuid/v2": "≈0.7 ms: its init queries every CPUID leaf (internal/xxh3 uses golang.org/x/sys/cpu instead)",
	// The MCP SDK, with its JSON-schema validator and encoding/gob (≈0.4 ms
	// of init together): pkg/mcp speaks the protocol itself.
	"github.com/modelcontextprotocol/go-sdk/mcp": "the MCP SDK (pkg/mcp has its own wire types and Streamable HTTP client)",
	"github.com/google/jsonschema-go/jsonschema": "≈0.18 ms: regexps and schema tables at init",
	"encoding/gob":                  "≈0.19 ms: type registrations at init",
	"github.com/dustin/go-humanize": "≈0.08 ms: regexps and big-number tables at init (internal/human writes the same)",
	// urfave/cli v2's docs.go (man pages and Markdown from the command
	// definitions) links a Markdown renderer into every program using it;
	// v3 keeps that in a module of its own, and retval's man pages come from
	// docs_test.go.
	"github.com/urfave/cli/v2":           "≈0.05 ms of its own init, and it links the two below (cmd uses urfave/cli v3)",
	"github.com/russross/blackfriday/v2": "≈0.4 ms (0.37–0.54 ms, 214 KB in 762 allocations): HTML entity and block tables at init",
	"github.com/cpuguy83/go-md2man/v2":   "blackfriday's roff renderer, linked by urfave/cli v2 with it",
}

// TestShippedBinaryDeps guards start-up: the default build (no tags) of
// the retval command links none of startupHeavy.
func TestShippedBinaryDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/retval/retval").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for heavy, why := range startupHeavy {
			if p == heavy || strings.HasPrefix(p, heavy+"/") {
				t.Errorf("the retval binary links %s (%s)", p, why)
			}
		}
	}
}
