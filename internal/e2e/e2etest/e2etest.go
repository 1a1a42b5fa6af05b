// Package e2etest holds what every end-to-end test of a real agent client
// needs: the pinned npm packages from the CI cache, the retval under test
// built into a temporary directory, a network namespace that has only
// loopback, a clean environment, a loopback HTTP server for a mocked model
// API and its server-sent events, and checks of what a stub and its
// read-more command gave the model.
package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Package makes sure the npm package spec (name@version) is installed in
// the cache .ci/clients.sh fills, $HOME/.cache/retval-ci/DIR where DIR is
// the spec without its leading @ and with / turned into -, and returns
// DIR. npmArgs are extra flags for npm install (--ignore-scripts). The
// test may skip only here, when npm cannot install the package, and not
// even then under CI=true.
func Package(t testing.TB, spec string, npmArgs ...string) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".cache", "retval-ci", strings.ReplaceAll(strings.TrimPrefix(spec, "@"), "/", "-"))
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return dir
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
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "--loglevel=error"}, npmArgs...)
	out, err := exec.Command(npm, append(args, spec)...).CombinedOutput()
	if err != nil {
		fail("npm install %s: %v\n%s", spec, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Bin installs spec as Package does and returns the path of its
// executable bin in node_modules/.bin.
func Bin(t testing.TB, spec, bin string, npmArgs ...string) string {
	t.Helper()
	return filepath.Join(Package(t, spec, npmArgs...), "node_modules", ".bin", bin)
}

// ModuleRoot is the directory of the module under test (where go.mod is).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	mod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(mod)))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s", root)
	}
	return root
}

// BuildRetval builds the retval of the module under test into dir and
// returns its path.
func BuildRetval(t testing.TB, dir string) string {
	t.Helper()
	root := ModuleRoot(t)
	out := filepath.Join(dir, "retval")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}
