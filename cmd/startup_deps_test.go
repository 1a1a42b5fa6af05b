package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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
	"github.com/BurntSushi/toml":    "≈0.08 ms: reads /etc/localtime at init (internal/tomldoc decodes TOML with pelletier/go-toml/v2)",
	// urfave/cli v2's docs.go (man pages and Markdown from the command
	// definitions) links a Markdown renderer into every program using it;
	// v3 keeps that in a module of its own, and retval's man pages come from
	// docs_test.go.
	"github.com/urfave/cli/v2":           "≈0.05 ms of its own init, and it links the two below (cmd uses urfave/cli v3)",
	"github.com/russross/blackfriday/v2": "≈0.4 ms (0.37–0.54 ms, 214 KB in 762 allocations): HTML entity and block tables at init",
	"github.com/cpuguy83/go-md2man/v2":   "blackfriday's roff renderer, linked by urfave/cli v2 with it",
	// The SDK's S3 client: pkg/retain/s3store sends its twelve requests on
	// net/http, signed by the SDK's SigV4 signer (aws/signer/v4) and
	// retried by its standard retryer (aws/retry), which are light.
	"github.com/aws/aws-sdk-go-v2/service/s3":   "≈0.3 ms and 721 allocations: the S3 client's endpoint tables at init, and 6 MB of binary",
	"github.com/aws/aws-sdk-go-v2/internal/v4a": "≈0.05 ms: the SigV4a signer, which the S3 client links",
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

// A Go program runs the initialiser of every package it links, whatever
// the command: the inits a small peek runs are the binary's. Those that
// allocate (tables built, regexps compiled at init) are the ones whose
// cost shows in every call. The bounds below are of allocations, which
// are the same on every run; GODEBUG=inittrace=1 also gives each one's
// time, which bench/inittrace.sh reports.
const (
	// moduleInitAllocs bounds the init of each of retval's own packages:
	// a regexp or a table goes behind a sync.OnceValue, built on first use.
	moduleInitAllocs = 32
	// heavyInitAllocs is the allocations from which another package's init
	// counts as heavy: it must be in knownHeavyInits, with its reason.
	heavyInitAllocs = 64
	// totalInitAllocs bounds the allocations of all inits together.
	totalInitAllocs = 800
)

// knownHeavyInits are the heavy inits the binary runs today, and why they
// are linked. Their cost is paid by every retval process.
var knownHeavyInits = map[string]string{
	"go.yaml.in/yaml/v3": "YAML config files (--config FILE.yaml)",
}

// initTrace is one line of GODEBUG=inittrace=1.
type initTrace struct {
	pkg           string
	bytes, allocs int
}

// TestPeekInits runs a small peek of the built binary with
// GODEBUG=inittrace=1 and checks the inits it runs against the bounds
// above.
func TestPeekInits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds retval")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "retval")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/retval/retval")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as a release is built
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "RETVAL_RUNS_DIR="+filepath.Join(dir, "runs"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"RETVAL_CONFIG=", "RETVAL_STORE=")
	retain := exec.Command(bin, "retain", "--run", "r", "--call", "small", "--threshold", "0")
	retain.Env, retain.Stdin = env, strings.NewReader("a\nb\n")
	if out, err := retain.CombinedOutput(); err != nil {
		t.Fatalf("retain: %v\n%s", err, out)
	}
	peek := exec.Command(bin, "peek", "--run", "r", "small", "--lines", "1-10")
	peek.Env = append(env, "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	peek.Stderr = &stderr
	if err := peek.Run(); err != nil {
		t.Fatalf("peek: %v\n%s", err, stderr.Bytes())
	}
	inits := parseInitTrace(t, stderr.String())
	if len(inits) < 50 {
		t.Fatalf("GODEBUG=inittrace=1 gave %d inits:\n%s", len(inits), stderr.Bytes())
	}
	total := 0
	for _, in := range inits {
		total += in.allocs
		switch {
		case strings.HasPrefix(in.pkg, "github.com/retval/retval/") || in.pkg == "github.com/retval/retval":
			if in.allocs > moduleInitAllocs {
				t.Errorf("%s: its init makes %d allocations (%d bytes), more than %d: build tables and regexps on first use (sync.OnceValue)",
					in.pkg, in.allocs, in.bytes, moduleInitAllocs)
			}
		case in.allocs >= heavyInitAllocs && knownHeavyInits[in.pkg] == "":
			t.Errorf("%s: its init makes %d allocations (%d bytes), on every call of retval: keep it out of the binary, or record why it is linked in knownHeavyInits",
				in.pkg, in.allocs, in.bytes)
		}
	}
	for pkg := range knownHeavyInits {
		if !slices.ContainsFunc(inits, func(in initTrace) bool { return in.pkg == pkg && in.allocs >= heavyInitAllocs }) {
			t.Logf("%s no longer has a heavy init: take it out of knownHeavyInits", pkg)
		}
	}
	t.Logf("%d packages run an init, %d allocations in all", len(inits), total)
	if total > totalInitAllocs {
		t.Errorf("the inits a peek runs make %d allocations, more than %d", total, totalInitAllocs)
	}
}

// parseInitTrace reads the lines "init PKG @T ms, D ms clock, B bytes, A allocs".
func parseInitTrace(t *testing.T, s string) []initTrace {
	var inits []initTrace
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("cannot read %q", line)
		}
		inits = append(inits, initTrace{pkg: f[1], bytes: b, allocs: a})
	}
	return inits
}
