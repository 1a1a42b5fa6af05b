package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Session is one fresh client environment under a test's temporary
// directory: its own HOME (with the XDG directories inside it), TMPDIR, a
// project directory to work in, and a bin directory holding the retval
// under test, first on PATH, so a model's shell command runs it.
type Session struct {
	T                          testing.TB
	Root, Home, Tmp, Proj, Bin string
	Retval                     string // the retval under test, in Bin
	// Extra is added to every environment Env returns: the client's own
	// home variables and settings.
	Extra []string
}

// NewSession makes the directories and copies the retval binary at
// retval (from BuildRetval, passed to the namespace) into Bin.
func NewSession(t testing.TB, retval string) *Session {
	t.Helper()
	root := t.TempDir()
	s := &Session{T: t, Root: root, Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"),
		Proj: filepath.Join(root, "proj"), Bin: filepath.Join(root, "bin")}
	for _, d := range []string{s.Home, s.Tmp, s.Proj, s.Bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(retval)
	if err != nil {
		t.Fatal(err)
	}
	s.Retval = filepath.Join(s.Bin, "retval")
	if err := os.WriteFile(s.Retval, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// Env is a whole environment for a client or a command in the session:
// nothing is inherited from the test's own. PATH has Bin first, then the
// directory of node (the clients are node programs) and the system's.
func (s *Session) Env(extra ...string) []string {
	path := s.Bin
	if node, err := exec.LookPath("node"); err == nil {
		path += ":" + filepath.Dir(node)
	}
	path += ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	shell, err := exec.LookPath("bash")
	if err != nil {
		shell = "/bin/sh"
	}
	env := []string{
		"PATH=" + path, "HOME=" + s.Home, "TMPDIR=" + s.Tmp, "LANG=C.UTF-8", "SHELL=" + shell, "TERM=dumb",
		"XDG_CONFIG_HOME=" + filepath.Join(s.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(s.Home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(s.Home, ".cache"),
		"NO_COLOR=1",
	}
	env = append(env, s.Extra...)
	return append(env, extra...)
}

// RunRetval runs the retval under test in Proj as a user would and
// returns its combined output; it fails the test if retval fails.
func (s *Session) RunRetval(args ...string) string {
	s.T.Helper()
	cmd := exec.Command(s.Retval, args...)
	cmd.Dir = s.Proj
	cmd.Env = s.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.T.Fatalf("retval %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// StoreDir is the default store of the hook and the MCP proxy in this
// session: $XDG_STATE_HOME/retval/runs.
func (s *Session) StoreDir() string {
	return filepath.Join(s.Home, ".local", "state", "retval", "runs")
}

// StoredValue reads a value's content file from the default store.
func (s *Session) StoredValue(run, id string) []byte {
	s.T.Helper()
	b, err := os.ReadFile(filepath.Join(s.StoreDir(), run+".values", id+".txt"))
	if err != nil {
		s.T.Fatalf("the store holds no value %s/%s: %v", run, id, err)
	}
	return b
}
