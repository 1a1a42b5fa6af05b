package cmd

import (
	"bytes"
	"errors"
	"fmt"
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
