package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// startupHeavy are packages whose init costs every retval process a
// measurable share of its start-up (GODEBUG=inittrace=1 retval --version)
// and that the shipped binary does without.
var startupHeavy = map[string]string{
	"github.com/klauspost/cpuid/v2": "≈0.7 ms: its init queries every CPUID leaf (internal/xxh3 uses golang.org/x/sys/cpu instead)",
	// The MCP SDK, with its JSON-schema validator and encoding/gob (≈0.4 ms
	// of init together): pkg/mcp speaks the protocol itself.
	"github.com/modelcontextprotocol/go-sdk/mcp": "the MCP SDK (pkg/mcp has its own wire types and Streamable HTTP client)",
	"github.com/google/jsonschema-go/jsonschema": "≈0.18 ms: regexps and schema tables at init",
	"encoding/gob":                  "≈0.19 ms: type registrations at init",
	"github.com/dustin/go-humanize": "≈0.08 ms: regexps and big-number tables at init (internal/human writes the same)",
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
		if why, ok := startupHeavy[p]; ok {
			t.Errorf("the retval binary links %s (%s)", p, why)
		}
	}
}
