// Package installdoc holds README.md's Install section to what the tests
// run: every command line of the section is run by a test, which takes it
// from the README with Command, never from a copy of its own. So a test
// runs what the README says, and TestEveryLineIsRun (go test
// ./internal/installdoc) fails when the README gains a line no test takes,
// or a test takes a line the README no longer has.
//
// The section is the one headed "## Install", up to the next "## "
// heading; its command lines are the non-blank lines of its fenced code
// blocks, each without its trailing "# comment". VERSION in a line stands
// for the release's version.
package installdoc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Placeholder is what a line says where the version goes.
const Placeholder = "VERSION"

// comment is a trailing shell comment: a # after a blank.
var comment = regexp.MustCompile(`\s+#(\s.*)?$`)

// Lines returns the command lines of readme's Install section, in order.
func Lines(readme []byte) ([]string, error) {
	var lines []string
	in, fenced, found := false, false, false
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		text := sc.Text()
		if !fenced && strings.HasPrefix(text, "## ") {
			in = strings.TrimSpace(text) == "## Install"
			found = found || in
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			continue
		}
		line := strings.TrimSpace(comment.ReplaceAllString(text, ""))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New(`no "## Install" section`)
	}
	if fenced {
		return nil, errors.New("the Install section ends inside a code block")
	}
	return lines, nil
}

// Readme is the module's README.md, found from the working directory (a
// test runs in its package's directory) upwards.
func Readme() ([]byte, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return os.ReadFile(filepath.Join(dir, "README.md"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Command returns the README's install line line with VERSION replaced
// by version, failing t if the README's Install section has no such line
// (the README changed and the test did not follow). A line with VERSION
// needs a version, one without must be given "". line must be a string
// literal at the call: TestEveryLineIsRun reads it from the source.
func Command(t testing.TB, line, version string) string {
	t.Helper()
	readme, err := Readme()
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Lines(readme)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	cmd, err := substitute(lines, line, version)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return cmd
}

func substitute(lines []string, line, version string) (string, error) {
	found := false
	for _, l := range lines {
		found = found || l == line
	}
	if !found {
		return "", fmt.Errorf("the Install section has no line %q (it has %q)", line, lines)
	}
	if strings.Contains(line, Placeholder) != (version != "") {
		return "", fmt.Errorf("%q given the version %q: a line with %s needs one, a line without none", line, version, Placeholder)
	}
	return strings.ReplaceAll(line, Placeholder, version), nil
}
