// Package npm proves retval's npm packages (npm/build.mjs, docs/npm.md):
// written from the retval under test, packed with npm pack, installed from
// the tarballs with npm install --offline into a scratch prefix, and run
// through npx from a registry served on loopback, all inside a network
// namespace that has only loopback. The installed retval runs the binary,
// serves MCP, and installs the Claude Code hook pointing at its stable
// copy, never at npm's prefix or npx's cache.
package npm

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/internal/e2e/e2etest"
)

// version is the packages' version in the test.
const version = "0.1.0"

// Set in the re-executed test process that runs inside the namespace.
const envRetval = "RETVAL_E2E_RETVAL"

// platform is this machine's platform as Node names it, which is the
// name of the package carrying its binary; "" where none is built.
func platform() string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	goos := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	if arch == "" || goos == "" {
		return ""
	}
	return goos + "-" + arch
}

func TestNpm(t *testing.T) {
	if e2etest.Isolated() {
		scenarios(t)
		return
	}
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			fail("%s is not installed (.ci/clients.sh installs it): %v", tool, err)
		}
	}
	if platform() == "" {
		t.Skipf("no npm package is built for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	retval := e2etest.BuildRetval(t, t.TempDir())
	e2etest.Isolate(t, envRetval+"="+retval)
}

// packs is what the scenarios share: the binary under test, the tarballs
// npm pack made of the packages, and the directories they were packed
// from.
type packs struct {
	retval            string // the binary under test
	versionLine       string // what it prints for --version
	main, native      string // the tarballs: retval, @retval/PLATFORM
	mainDir, platDir  string // the directories npm/build.mjs wrote
	nativeName, cache string
}

func scenarios(t *testing.T) {
	retval := os.Getenv(envRetval)
	out, err := exec.Command(retval, "--version").Output()
	if err != nil {
		t.Fatalf("retval --version: %v", err)
	}
	// npm and node run in a session of their own, as every client does.
	s := e2etest.NewSession(t, retval)
	root := s.Root
	p := &packs{retval: retval, versionLine: string(out), nativeName: "@retval/" + platform(), cache: filepath.Join(root, "npm-cache")}
	dist := filepath.Join(root, "dist")
	build := filepath.Join(e2etest.ModuleRoot(t), "npm", "build.mjs")
	run(t, env(s, ""), "node", build, "--version", version, "--out", dist, "--some", platform()+"="+retval)
	p.mainDir, p.platDir = filepath.Join(dist, "retval"), filepath.Join(dist, platform())
	tarballs := filepath.Join(root, "packs")
	os.Mkdir(tarballs, 0o755)
	run(t, env(s, ""), "npm", "pack", "--pack-destination", tarballs, "--cache", p.cache, "--loglevel=error", p.mainDir, p.platDir)
	p.main = filepath.Join(tarballs, "retval-"+version+".tgz")
	p.native = filepath.Join(tarballs, "retval-"+platform()+"-"+version+".tgz")
	for _, f := range []string{p.main, p.native} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("npm pack made no %s: %v", filepath.Base(f), err)
		}
	}
	t.Run("licence", func(t *testing.T) { checkLicense(t, e2etest.ModuleRoot(t), p.main, p.native) })
	t.Run("build refuses", func(t *testing.T) { buildRefuses(t, env(s, ""), build, retval) })
	t.Run("installed from the tarballs", func(t *testing.T) { fromTarballs(t, p) })
	t.Run("without its platform package", func(t *testing.T) { withoutPlatform(t, p) })
	t.Run("npx", func(t *testing.T) { npx(t, p) })
}

// env is a session's environment with PATH holding bin (where npm put
// retval), node's directory and the system's, but no other retval.
func env(s *e2etest.Session, bin string, extra ...string) []string {
	var dirs []string
	if bin != "" {
		dirs = append(dirs, bin)
	}
	if node, err := exec.LookPath("node"); err == nil {
		dirs = append(dirs, filepath.Dir(node))
	}
	dirs = append(dirs, "/usr/local/bin", "/usr/bin", "/bin")
	return s.Env(append([]string{"PATH=" + strings.Join(dirs, ":")}, extra...)...)
}

// run runs name with args in env and returns its stdout; it fails the
// test if the command fails.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, stderr, err := try(env, "", name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// try runs name, looked up on env's PATH, with args in env and stdin,
// and returns its stdout, stderr and error.
func try(env []string, stdin, name string, args ...string) (string, string, error) {
	// The last PATH in env is the one the command would see.
	var path string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	lp, err := lookPath(name, path)
	if err != nil {
		return "", "", fmt.Errorf("%s: not on the session's PATH %s", name, path)
	}
	name = lp
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return stdout.String(), stderr.String(), err
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		return stdout.String(), stderr.String(), errors.New("still running after 3 minutes: killed")
	}
}

// lookPath finds name in the directories of path, as a shell would.
func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		f := filepath.Join(dir, name)
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", exec.ErrNotFound
}

// fromTarballs installs both tarballs globally into a scratch prefix,
// offline, and runs what npm put on PATH.
func fromTarballs(t *testing.T, p *packs) {
	s := e2etest.NewSession(t, p.retval)
	prefix := filepath.Join(s.Root, "prefix")
	run(t, env(s, ""), "npm", "install", "--global", "--offline", "--prefix", prefix, "--cache", p.cache,
		"--no-audit", "--no-fund", "--loglevel=error", p.main, p.native)
	bin := filepath.Join(prefix, "bin")
	e := env(s, bin)
	if got := run(t, e, "retval", "--version"); got != p.versionLine {
		t.Errorf("retval --version through npm printed %q, the binary %q", got, p.versionLine)
	}
	// The launcher ends as retval ends: a missing run is not found (3).
	_, stderr, err := try(e, "", "retval", "peek", "--runs-dir", s.Tmp, "--run", "none", "x")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.HasPrefix(stderr, "retval: peek: ") {
		t.Errorf("retval peek of a missing run through npm: %v, stderr %q; want exit 3 and retval's own error", err, stderr)
	}

	sigterm(t, e, filepath.Join(bin, "retval"), p.retval)

	// A copy left by an older build of the same version is replaced.
	stable := filepath.Join(s.Home, ".local", "share", "retval", "bin", version, "retval")
	os.MkdirAll(filepath.Dir(stable), 0o755)
	if err := os.WriteFile(stable, []byte("#!/bin/sh\nexit 9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := run(t, e, "retval", "hook", "claude-code", "install", "--user")
	checkHook(t, s, p, stable, out)
	if out := run(t, e, "retval", "hook", "claude-code", "install", "--user"); !strings.Contains(out, "already set up; nothing changed") {
		t.Errorf("installing again: %s", out)
	}
	run(t, e, "retval", "hook", "claude-code", "uninstall", "--user")
	if _, err := os.Stat(filepath.Join(s.Home, ".claude", "settings.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall left the settings file install made: %v", err)
	}
}

// checkHook checks that the user settings' hook runs the stable copy of
// the binary, that the copy is the binary, and that it answers a hook
// input with a stub.
func checkHook(t *testing.T, s *e2etest.Session, p *packs, stable, installOut string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Home, ".claude", "settings.json"))
	if err != nil {
		t.Fatalf("install wrote no user settings: %v\n%s", err, installOut)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	want := stable + " hook claude-code"
	for _, event := range []string{"PostToolUse", "PreToolUse", "SessionStart"} {
		entries := settings.Hooks[event]
		if len(entries) != 1 || len(entries[0].Hooks) != 1 || entries[0].Hooks[0].Command != want {
			t.Errorf("%s hook: %+v, want the command %q\n%s", event, entries, want, b)
		}
	}
	got, err := os.ReadFile(stable)
	if err != nil {
		t.Fatalf("no stable copy of the binary: %v", err)
	}
	bin, _ := os.ReadFile(p.retval)
	if !bytes.Equal(got, bin) {
		t.Errorf("the stable copy %s (%d bytes) is not the binary (%d bytes)", stable, len(got), len(bin))
	}
	seq := e2etest.SeqOutput(20000)
	input, _ := json.Marshal(map[string]any{"session_id": "npm-session", "tool_use_id": "toolu_npm", "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "seq 1 20000"},
		"tool_response": map[string]any{"stdout": string(seq), "stderr": "", "interrupted": false}})
	out, stderr, err := try(s.Env(), string(input), stable, "hook", "claude-code")
	if err != nil || !strings.Contains(out, `"stdout":"[retained #toolu_npm] 108894 bytes, 20000 lines, sha256:`+e2etest.SHA(seq)) {
		t.Errorf("the installed hook command did not answer with a stub: %v\nstdout: %.300s\nstderr: %s", err, out, stderr)
	}
}

// withoutPlatform installs the retval package without its optional
// dependencies: retval then says which package is missing and how to get
// it, and fails.
func withoutPlatform(t *testing.T, p *packs) {
	s := e2etest.NewSession(t, p.retval)
	prefix := filepath.Join(s.Root, "prefix")
	run(t, env(s, ""), "npm", "install", "--global", "--offline", "--omit=optional", "--prefix", prefix, "--cache", p.cache,
		"--no-audit", "--no-fund", "--loglevel=error", p.main)
	out, stderr, err := try(env(s, filepath.Join(prefix, "bin")), "", "retval", "--version")
	var exit *exec.ExitError
	want := "retval: npm: the package " + p.nativeName + ", which carries the binary, is not installed: install retval again without --omit=optional (or --no-optional)\n"
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || out != "" || stderr != want {
		t.Errorf("retval without %s: %v, stdout %q, stderr %q; want exit 1 and %q", p.nativeName, err, out, stderr, want)
	}
}

// sigterm starts retval mcp serve through the launcher at launcher, waits
// for its answer to initialize (retval is running then), and sends the
// launcher SIGTERM, as an MCP client stopping its server does: retval must
// get it and end, and the launcher end as retval alone ends on SIGTERM,
// leaving no retval running.
func sigterm(t *testing.T, env []string, launcher, retval string) {
	t.Helper()
	want, _ := serveUntilSIGTERM(t, env, retval, false)
	got, child := serveUntilSIGTERM(t, env, launcher, true)
	if got != want {
		t.Errorf("on SIGTERM the launcher ended with %s, retval alone with %s", got, want)
	}
	if _, err := os.Stat("/proc/" + child); err == nil {
		t.Errorf("retval (pid %s) is still running after the launcher ended", child)
	}
}

// serveUntilSIGTERM runs program mcp serve until it has answered
// initialize, sends it SIGTERM and returns how it ended. With launcher,
// it checks that program's one child is retval and returns its pid.
func serveUntilSIGTERM(t *testing.T, env []string, program string, launcher bool) (state, child string) {
	t.Helper()
	cmd := exec.Command(program, "mcp", "serve")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"npm-test","version":"1"}}}`+"\n")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("%s mcp serve did not answer initialize: %q, %v", program, line, err)
	}
	if launcher {
		pid := cmd.Process.Pid
		children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil || len(strings.Fields(string(children))) != 1 {
			t.Fatalf("the launcher's children: %q, %v; want retval alone", children, err)
		}
		child = strings.Fields(string(children))[0]
		if exe, _ := os.Readlink("/proc/" + child + "/exe"); filepath.Base(exe) != "retval" {
			t.Fatalf("the launcher's child runs %s, not retval", exe)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not end within a minute of SIGTERM", program)
	}
	return cmd.ProcessState.String(), child
}

// buildRefuses checks that npm/build.mjs packs no binary under another
// platform's name, and no main package without all its platforms unless
// told to, writing nothing either time.
func buildRefuses(t *testing.T, env []string, build, retval string) {
	other := map[string]string{"linux-x64": "linux-arm64"}[platform()]
	if other == "" {
		other = "linux-x64"
	}
	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--some", other + "=" + retval}, 1, "retval: npm build: " + other + ": " + retval + " is not a "},
		{[]string{platform() + "=" + retval}, 2, "retval: npm build: no binary for "},
	} {
		out := filepath.Join(t.TempDir(), "dist")
		stdout, stderr, err := try(env, "", "node", append([]string{build, "--version", version, "--out", out}, c.args...)...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.exit || !strings.HasPrefix(stderr, c.want) || stdout != "" {
			t.Errorf("build.mjs %s: %v, stdout %q, stderr %q; want exit %d and %q", strings.Join(c.args, " "), err, stdout, stderr, c.exit, c.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("build.mjs %s wrote %s", strings.Join(c.args, " "), out)
		}
	}
}

// checkLicense checks that each tarball npm pack made carries the
// repository's LICENSE and says "license": "MIT" in its package.json.
func checkLicense(t *testing.T, root string, tarballs ...string) {
	want, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tgz := range tarballs {
		files := map[string][]byte{}
		f, err := os.Open(tgz)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tgz, err)
			}
			if h.Name == "package/LICENSE" || h.Name == "package/package.json" {
				if files[h.Name], err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.Close()
		if !bytes.Equal(files["package/LICENSE"], want) {
			t.Errorf("%s: package/LICENSE is not the repository's (%d bytes)", filepath.Base(tgz), len(files["package/LICENSE"]))
		}
		var manifest struct{ License string }
		if err := json.Unmarshal(files["package/package.json"], &manifest); err != nil || manifest.License != "MIT" {
			t.Errorf("%s: package.json's license is %q (%v), want MIT", filepath.Base(tgz), manifest.License, err)
		}
	}
}
