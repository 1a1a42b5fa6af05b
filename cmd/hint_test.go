package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// A hint travels as a typed error (found with errors.As, through any
// wrapping), never parsed back out of the message: a message that happens
// to hold "\nhint: " text (a file system's, a value's) prints no hint line.
func TestHintIsTyped(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{withHint(retain.Errorf(retain.CodeUsage, "bad flag"), "try --help"),
			"retval: peek: bad flag (usage)\nhint: try --help\n"},
		{fmt.Errorf("reading x: %w", withHint(retain.Errorf(retain.CodeCorrupt, "torn"), "run verify")),
			"retval: peek: reading x: torn (corrupt)\nhint: run verify\n"},
		{errors.New("the disk said\nhint: rm -rf the store"),
			"retval: peek: the disk said hint: rm -rf the store (io)\n"},
	} {
		var stdout, stderr bytes.Buffer
		report([]string{"retval", "peek"}, tc.err, &stdout, &stderr)
		if stderr.String() != tc.want {
			t.Errorf("%q: stderr\n%q, want\n%q", tc.err, stderr.String(), tc.want)
		}
	}
}

// A mistake in the flags is found from the declared flags, whatever the
// flag library's error says: its wording may change with any release.
func TestFlagMistakesFromDeclaredNames(t *testing.T) {
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	app := newApp(e)
	peek := app.Command("peek")
	peek.Metadata = app.Metadata // run, the library makes app its root
	for _, tc := range []struct {
		args []string
		want string
		hint string
	}{
		{[]string{"retval", "peek", "--treshold", "4KiB", "c1"}, "flag provided but not defined: -treshold", "did you mean --threshold?"},
		{[]string{"retval", "--run", "r", "peek", "--lines"}, "flag needs an argument: -lines", ""},
		{[]string{"retval", "peek", "--json=maybe", "c1"}, `invalid boolean value "maybe" for -json: parse error`, ""},
		{[]string{"retval", "peek", "---x"}, "bad flag syntax: ---x", ""},
	} {
		e.args = tc.args
		err := commandUsageError(peek, errors.New("a wording no release of the library ever used"))
		if err == nil || err.Error() != tc.want || hintOf(err) != tc.hint || retain.CodeOf(err) != retain.CodeUsage {
			t.Errorf("%q: %v (hint %q), want %q (hint %q)", tc.args, err, hintOf(err), tc.want, tc.hint)
		}
	}
	e.args = []string{"retval", "--lines", "1", "peek"}
	if err := rootUsageError(app, e.args, errors.New("whatever")); err == nil || !strings.Contains(hintOf(err), "--lines is a flag of the commands") {
		t.Errorf("root: %v (hint %q)", err, hintOf(err))
	}
}
