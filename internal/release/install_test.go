package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/installdoc"
)

// goInstall runs the install line (go install …) with sh in dir, GOBIN
// in a fresh directory and the extra environment, and returns the
// installed retval's --version line. Like the release builds it is static
// and -trimpath (pass GOFLAGS with it), so it reuses their compiled
// packages; neither changes what --version says.
func goInstall(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	gobin := t.TempDir()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOBIN=" + gobin, "CGO_ENABLED=0"}, env...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	b, err := exec.Command(filepath.Join(gobin, "retval"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("retval --version: %v\n%s", err, b)
	}
	return strings.TrimSpace(string(b))
}

// TestGoInstallFromCheckout: the README's `go install .`, in a clone,
// gives a retval that names the commit, and says when the tree had
// uncommitted changes.
func TestGoInstallFromCheckout(t *testing.T) {
	needReleaseTest(t)
	line := installdoc.Command(t, "go install .", "")
	dir := checkout(t)
	clone := filepath.Join(t.TempDir(), "retval")
	if b, err := exec.Command("git", "clone", "--quiet", dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, b)
	}
	commit := headCommit(t, clone)
	// The go command's default, whatever this machine's go env says.
	vcs := []string{"GOFLAGS=-buildvcs=auto -trimpath"}
	got := goInstall(t, clone, vcs, line)
	if want := "(commit " + commit + ")"; !strings.HasPrefix(got, "retval version v") || !strings.HasSuffix(got, want) {
		t.Errorf("clean clone: %q, want a version and %q", got, want)
	}
	f, err := os.OpenFile(filepath.Join(clone, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nA local change.\n")
	f.Close()
	got = goInstall(t, clone, vcs, line)
	if want := "+dirty (commit " + commit + ", with uncommitted changes)"; !strings.HasSuffix(got, want) {
		t.Errorf("modified clone: %q, want it to end %q", got, want)
	}
}

// TestGoInstallAtVersion: the README's `go install
// github.com/retval/retval@VERSION`, here from a module proxy on disk
// serving this commit as v0.99.0, gives a retval that says v0.99.0.
func TestGoInstallAtVersion(t *testing.T) {
	needReleaseTest(t)
	const version = "v" + testVersion
	dir := checkout(t)
	proxy := t.TempDir()
	at := filepath.Join(proxy, "github.com", "retval", "retval", "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	// A module zip is the tree under module@version/.
	archive := exec.Command("git", "-C", dir, "archive", "--format=zip", "--prefix=github.com/retval/retval@"+version+"/", "-o", filepath.Join(at, version+".zip"), "HEAD")
	if b, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive: %v\n%s", err, b)
	}
	mod, err := exec.Command("git", "-C", dir, "show", "HEAD:go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Unix(0, 0).UTC()})
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".mod": mod, version + ".info": info} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// retval from the proxy above, its dependencies from this machine's
	// module cache (itself laid out as a proxy), unpacked into a scratch
	// cache: offline, and this machine's cache never holds the made-up
	// version.
	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(string(gomodcache)), "cache", "download")),
		"GOMODCACHE=" + t.TempDir(), "GOFLAGS=-modcacherw -trimpath", "GOTOOLCHAIN=local",
		// The dependencies were checked when this machine downloaded them.
		"GOSUMDB=off",
	}
	line := installdoc.Command(t, "go install github.com/retval/retval@VERSION", version)
	if got, want := goInstall(t, t.TempDir(), env, line), "retval version "+version; got != want {
		t.Errorf("%s: %q, want %q", line, got, want)
	}
}
