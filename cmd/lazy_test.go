package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// Registered names are the names of the commands they build.
func TestRegisteredNames(t *testing.T) {
	for _, c := range commands {
		if got := c.build().Name; got != c.name {
			t.Errorf("registered as %q, builds %q", c.name, got)
		}
	}
}

// A command line that names its command first builds that command alone,
// and answers exactly as retval with every command built: the same exit
// status, stdout and stderr.
func TestOneCommandBuiltAnswersAsAll(t *testing.T) {
	storeWithValue(t)
	t.Setenv("RETVAL_NOW", "2026-12-01T00:00:00Z") // gc prints its clock
	lines := [][]string{
		{"peek", "--run", "r1", "c1", "--lines", "1-3"},
		{"peek", "--run", "r1", "c1", "--lines", "2999-"},
		{"peek", "--run", "r1", "nope"},
		{"peek", "--run", "r1", "c1", "--bogus"},
		{"peek", "--run", "r1", "--lines", "x", "c1"},
		{"peek", "--help"},
		{"peek", "--json", "--run", "r1", "c1", "--query", "xxx", "--context", "1"},
		{"resolve", "--run", "r1", "c1", "--bytes", "0-20"},
		{"resolve", "--run", "r1", "c1", "--pointer", "/a"},
		{"catalogue", "--run", "r1", "--json"},
		{"catalogue", "--all"},
		{"retain", "--run", "r1", "--call", "c2", "--threshold", "0"},
		{"replay", "--run", "r1", "--call", "c1"},
		{"expand", "--run", "r1"},
		{"stats", "--run", "r1", "--json"},
		{"verify", "--run", "r1"},
		{"gc", "--dry-run", "--json"},
		{"config"},
		{"hook", "--help"},
		{"mcp", "--help"},
		{"mcp", "wrap", "--bogus"},
		{"completion", "bash"},
		{"exec", "--", "true"},
		{"peek", "--run", "r1", "c1", "--lines", "1-2", "--generate-shell-completion"},
	}
	for _, args := range lines {
		args = append([]string{"retval"}, args...)
		only := commandOf(args)
		if only != args[1] && !completing(args) {
			t.Errorf("%q: builds %q, want %q", args, only, args[1])
		}
		var out1, err1, out2, err2 bytes.Buffer
		in := "some input\n"
		c1 := mainFor(only, args, strings.NewReader(in), &out1, &err1)
		c2 := mainFor("", args, strings.NewReader(in), &out2, &err2)
		if c1 != c2 || out1.String() != out2.String() || err1.String() != err2.String() {
			t.Errorf("%q: one command built: exit %d\n%s%s\nall built: exit %d\n%s%s", args, c1, out1.String(), err1.String(), c2, out2.String(), err2.String())
		}
	}
	for _, args := range [][]string{{"retval"}, {"retval", "--run", "r1", "peek", "c1"}, {"retval", "help", "peek"}, {"retval", "pek"}} {
		if only := commandOf(args); only != "" {
			t.Errorf("%q builds only %q: it needs every command", args, only)
		}
	}
}
