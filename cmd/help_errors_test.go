package cmd

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// run calls Main in-process and returns its exit status, stdout and stderr.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"retval"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// storeWithValue makes a runs-dir holding run r1 with value c1 (3000
// lines) and points RETVAL_RUNS_DIR at it.
func storeWithValue(t *testing.T) string {
	t.Helper()
	dir := t.TempDir() + "/runs"
	t.Setenv("RETVAL_RUNS_DIR", dir)
	for _, k := range []string{"RETVAL_RUN", "RETVAL_JSON", "RETVAL_CONFIG", "RETVAL_THRESHOLD", "RETVAL_NOW"} {
		t.Setenv(k, "")
	}
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%40))
		b.WriteString("\n")
	}
	if code, _, stderr := run(t, b.String(), "retain", "--run", "r1", "--call", "c1"); code != 0 {
		t.Fatalf("retain: exit %d: %s", code, stderr)
	}
	return dir
}

// TestErrorShapes checks the exact stderr and exit status of mistakes a
// person makes at the terminal: one line "retval: [CMD: ]what (code)", and
// a "hint: " line where there is something to do.
func TestErrorShapes(t *testing.T) {
	runs := storeWithValue(t)
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"peak"}, 2, "retval: unknown command \"peak\" (usage)\nhint: did you mean \"retval peek\"? retval --help lists the commands\n"},
		{[]string{"retian", "x"}, 2, "retval: unknown command \"retian\" (usage)\nhint: did you mean \"retval retain\"? retval --help lists the commands\n"},
		{[]string{"help", "peak"}, 2, "retval: unknown command \"peak\" (usage)\nhint: did you mean \"retval peek\"? retval --help lists the commands\n"},
		{[]string{"frobnicate"}, 2, "retval: unknown command \"frobnicate\" (usage)\nhint: retval --help lists the commands\n"},
		{[]string{"--treshold", "1"}, 2, "retval: flag provided but not defined: -treshold (usage)\nhint: did you mean --threshold? flags go after the command's name\n"},
		{[]string{"--threshold", "1", "peek", "c1"}, 2, "retval: flag provided but not defined: -threshold (usage)\nhint: --threshold is a flag of the commands: put it after the command's name, as in retval peek --threshold …\n"},
		{[]string{"--frob"}, 2, "retval: flag provided but not defined: -frob (usage)\nhint: retval --help lists the commands; retval COMMAND --help their flags\n"},
		// A misspelt flag before the arguments (the flag library's error)…
		{[]string{"retain", "--treshold", "1", "--run", "r1", "--call", "c9"}, 2, "retval: retain: flag provided but not defined: -treshold (usage)\nhint: did you mean --threshold?\n"},
		// …and after them (retval's own parser).
		{[]string{"peek", "--run", "r1", "c1", "--liens", "1-2"}, 2, "retval: peek: flag provided but not defined: -liens (usage)\nhint: did you mean --lines?\n"},
		{[]string{"peek", "--run", "r1", "c1", "--qeury", "x"}, 2, "retval: peek: flag provided but not defined: -qeury (usage)\nhint: did you mean --query?\n"},
		{[]string{"gc", "--dry-rn"}, 2, "retval: gc: flag provided but not defined: -dry-rn (usage)\nhint: did you mean --dry-run?\n"},
		{[]string{"resolve", "--run", "r1", "c1", "--pointr", "/a"}, 2, "retval: resolve: flag provided but not defined: -pointr (usage)\nhint: did you mean --pointer?\n"},
		// Nothing close: no guess.
		{[]string{"peek", "--run", "r1", "c1", "--bogus"}, 2, "retval: peek: flag provided but not defined: -bogus (usage)\n"},
		// The flag package's words for a flag without its value, with a bad
		// one or of bad syntax, before the arguments (the flag library's)
		// and after them (retval's own parser).
		{[]string{"--run"}, 2, "retval: flag needs an argument: -run (usage)\n"},
		{[]string{"peek", "--run", "r1", "--lines"}, 2, "retval: peek: flag needs an argument: -lines (usage)\n"},
		{[]string{"peek", "--run", "r1", "c1", "--lines"}, 2, "retval: peek: flag needs an argument: --lines (usage)\n"},
		{[]string{"peek", "--run", "r1", "--context", "x", "c1", "--query", "y"}, 2, "retval: peek: invalid value \"x\" for flag -context: parse error (usage)\n"},
		{[]string{"peek", "--run", "r1", "c1", "--query", "y", "--context", "x"}, 2, "retval: peek: invalid value \"x\" for flag --context: parse error (usage)\n"},
		{[]string{"catalogue", "--run", "r1", "--page", "99999999999999999999"}, 2, "retval: catalogue: invalid value \"99999999999999999999\" for flag -page: value out of range (usage)\n"},
		{[]string{"--json=maybe", "catalogue"}, 2, "retval: invalid boolean value \"maybe\" for -json: parse error (usage)\n"},
		{[]string{"peek", "--regex=maybe", "c1"}, 2, "retval: peek: invalid boolean value \"maybe\" for -regex: parse error (usage)\n"},
		{[]string{"peek", "--run", "r1", "-=x"}, 2, "retval: peek: bad flag syntax: -=x (usage)\n"},
		{[]string{"peek", "--run", "r1", "---x"}, 2, "retval: peek: bad flag syntax: ---x (usage)\n"},
		{[]string{"-5"}, 2, "retval: flag provided but not defined: -5 (usage)\nhint: retval --help lists the commands; retval COMMAND --help their flags\n"},
		// A "--" after the id ends the flags: what follows is one more id.
		{[]string{"peek", "--run", "r1", "c1", "--", "-x"}, 2, "retval: peek: want exactly one value id: retval peek --run R ID [--lines A-B | --query TEXT | --bytes A-B | --outline POINTER] (usage)\n"},
		// An unknown run: where to look.
		{[]string{"peek", "--run", "r2", "c1"}, 3, "retval: peek: no run \"r2\" in " + "$RUNS" + " (unknown_reference)\nhint: retval catalogue --all lists the runs; retval catalogue --run R lists a run's values\n"},
		// An unknown value's message already names its catalogue: no repeat.
		{[]string{"peek", "--run", "r1", "cl"}, 3, "retval: peek: no value \"cl\" in run \"r1\"; did you mean \"c1\"? (list them with: retval catalogue --run r1) (unknown_reference)\n"},
		// Another number is another call, never a misspelling.
		{[]string{"peek", "--run", "r1", "c2"}, 3, "retval: peek: no value \"c2\" in run \"r1\" (list them with: retval catalogue --run r1) (unknown_reference)\n"},
		{[]string{"resolve", "--run", "r1", "C1"}, 3, "retval: resolve: no value \"C1\" in run \"r1\"; did you mean \"c1\"? (list them with: retval catalogue --run r1) (unknown_reference)\n"},
		{[]string{"peek", "--run", "r1", "nothing-like-it"}, 3, "retval: peek: no value \"nothing-like-it\" in run \"r1\" (list them with: retval catalogue --run r1) (unknown_reference)\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, "", tc.args...)
			want := strings.ReplaceAll(tc.stderr, "$RUNS", runs)
			if code != tc.code || stderr != want || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", code, stdout, stderr, tc.code, want)
			}
		})
	}
}

// TestCollectedHint: a lookup in a collected run says what it means.
func TestCollectedHint(t *testing.T) {
	storeWithValue(t)
	t.Setenv("RETVAL_NOW", "2100-01-01T00:00:00Z")
	if code, _, stderr := run(t, "", "gc"); code != 0 {
		t.Fatalf("gc: %s", stderr)
	}
	code, _, stderr := run(t, "", "peek", "--run", "r1", "c1")
	want := "retval: peek: run \"r1\" was collected by gc at 2100-01-01T00:00:00Z (collected)\nhint: gc removed the run with every value in it; run the tool again to get its output back\n"
	if code != 3 || stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 3, stderr:\n%s", code, stderr, want)
	}
	// --json keeps SPEC's shape: no hint, no second line in the message.
	code, stdout, _ := run(t, "", "peek", "--run", "r1", "c1", "--json")
	if code != 3 || stdout != `{"error":{"code":"collected","message":"run \"r1\" was collected by gc at 2100-01-01T00:00:00Z"}}`+"\n" {
		t.Errorf("--json: exit %d, stdout %s", code, stdout)
	}
}

// TestPanicIsOneLine: a panic anywhere under Main is reported as one line
// and a hint, exit 1, never a Go stack trace.
func TestPanicIsOneLine(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append(slices.Clone(commands), command{"boom", func() *cli.Command {
		return &cli.Command{Name: "boom", Hidden: true, Action: func(_ context.Context, c *cli.Command) error {
			var s []int
			return fmt.Errorf("%d", s[c.NArg()+3]) // a real runtime panic
		}}
	}})
	code, stdout, stderr := run(t, "", "boom")
	want := "retval: internal error: runtime error: index out of range [3] with length 0\nhint: this is a bug in retval: please report it with the command line that caused it\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, stderr:\n%s", code, stdout, stderr, want)
	}
	t.Setenv("RETVAL_JSON", "1")
	code, stdout, stderr = run(t, "", "boom")
	if code != 1 || stderr != "" || stdout != `{"error":{"code":"internal","message":"internal error: runtime error: index out of range [3] with length 0"}}`+"\n" {
		t.Errorf("--json: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"threshold", "lines", "bytes", "query", "peek", "retain", "replay", "resolve", "n", "dry-run"}
	for _, tc := range []struct{ in, want string }{
		{"treshold", "threshold"},   // deletion
		{"thresholds", "threshold"}, // insertion
		{"threshhold", "threshold"},
		{"liens", "lines"}, // swap
		{"peak", "peek"},   // substitution
		{"pek", "peek"},
		{"retian", "retain"},
		{"thresh", "threshold"}, // unique prefix
		{"re", ""},              // too short to guess
		{"res", "resolve"},      // prefix, unique
		{"rep", "replay"},
		{"ret", "retain"},
		{"r", ""},
		{"bogus", ""},
		{"dry", "dry-run"},
		{"x", ""},
		{"nn", ""}, // nor is a one-letter alias
	} {
		if got := nearest(tc.in, cands); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"abc", "acb", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
		if got := editDistance(tc.b, tc.a); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.d)
		}
	}
}

// TestCompletionCommands: the completion of an empty command line is every
// visible command, in order, and nothing else.
func TestCompletionCommands(t *testing.T) {
	code, stdout, _ := run(t, "", "", "--generate-bash-completion")
	var want []string
	for _, c := range newApp(&env{}).VisibleCommands() {
		want = append(want, c.Name+"\n")
	}
	if code != 0 || stdout != strings.Join(want, "") {
		t.Errorf("exit %d, candidates:\n%swant:\n%s", code, stdout, strings.Join(want, ""))
	}
}
