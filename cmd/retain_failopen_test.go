package cmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRetainFailsOpen: once stdin is the tool's output, a mistake in
// retain's own command line or settings still prints the output unchanged
// (the model sees it; nothing is kept), says what was wrong on stderr and
// exits 2. Before, it printed nothing: the output reached neither the
// model nor the store.
func TestRetainFailsOpen(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RETVAL_RUNS_DIR", filepath.Join(dir, "runs"))
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, k := range []string{"RETVAL_RUN", "RETVAL_JSON", "RETVAL_CONFIG", "RETVAL_POLICY", "RETVAL_THRESHOLD"} {
		t.Setenv(k, "")
	}
	big := strings.Repeat("a line of the tool's output\n", 4000) // over the threshold
	file := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(file, []byte("from the file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const kept = "(the output was printed unchanged and nothing was kept)"
	for _, tc := range []struct {
		name   string
		env    map[string]string
		args   []string
		stdout string
		stderr string
	}{
		{"empty run", map[string]string{"RETVAL_RUN": ""}, []string{"retain", "--call", "c1"}, big,
			"retval: retain: no run given: use --run R or set RETVAL_RUN (usage)\nhint: the output was printed unchanged and nothing was kept\n"},
		{"no call", nil, []string{"retain", "--run", "r"}, big,
			"retval: retain: no call id given: use --call C (usage)\nhint: the output was printed unchanged and nothing was kept\n"},
		{"bad policy", map[string]string{"RETVAL_POLICY": "strict"}, []string{"retain", "--run", "r", "--call", "c1"}, big,
			"retval: retain: RETVAL_POLICY: invalid policy \"strict\": want legacy or bounded (usage)\nhint: the output was printed unchanged and nothing was kept\n"},
		{"misspelt flag", nil, []string{"retain", "--treshold", "5", "--run", "r", "--call", "c1"}, big,
			"retval: retain: flag provided but not defined: -treshold (usage)\nhint: did you mean --threshold? " + kept + "\n"},
		{"flag after the file", nil, []string{"retain", "--run", "r", "-", "--frob"}, big,
			"retval: retain: flag provided but not defined: -frob (usage)\nhint: the output was printed unchanged and nothing was kept\n"},
		{"file, no call", nil, []string{"retain", "--run", "r", file}, "from the file\n",
			"retval: retain: no call id given: use --call C (usage)\nhint: the output was printed unchanged and nothing was kept\n"},
		{"json", nil, []string{"retain", "--json", "--run", "r"}, `{"retained":false,"stub":"x\n","error":{"code":"usage","message":"no call id given: use --call C"}}` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			stdin := big
			if tc.name == "json" {
				stdin = "x\n"
			}
			code, out, stderr := run(t, stdin, tc.args...)
			if code != exitUsage || out != tc.stdout || stderr != tc.stderr {
				t.Errorf("exit %d, stdout %d bytes %q…, stderr %q\nwant exit 2, stdout %d bytes, stderr %q", code, len(out), firstLine(out), stderr, len(tc.stdout), tc.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
		t.Errorf("a failed retain created the store: %v", err)
	}
}

// TestRetainFailsOpenNotFromATerminal: where nobody pipes an output in (a
// terminal) or the FILE holding it cannot be opened, there is nothing to
// print: the error alone.
func TestRetainFailsOpenNotFromATerminal(t *testing.T) {
	t.Setenv("RETVAL_RUNS_DIR", t.TempDir())
	t.Setenv("RETVAL_RUN", "")
	old := isTerminalReader
	isTerminalReader = func(io.Reader) bool { return true }
	defer func() { isTerminalReader = old }()
	in := &refusingStdin{}
	var out, errb strings.Builder
	code := Main([]string{"retval", "retain", "--frob"}, in, &out, &errb)
	if code != exitUsage || out.Len() > 0 || in.reads.Load() > 0 {
		t.Errorf("terminal: exit %d, stdout %q, %d reads of stdin", code, out.String(), in.reads.Load())
	}
	isTerminalReader = old
	code, stdout, stderr := run(t, "stdin is not the output\n", "retain", "--run", "r", "--call", "c", filepath.Join(t.TempDir(), "missing"))
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing FILE: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
