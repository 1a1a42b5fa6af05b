package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// screen renders what a terminal shows for out: \r returns to the start of
// the line, ESC [ K erases to its end, \n starts a new line, anything else
// overwrites the character under the cursor.
func screen(out string) []string {
	var lines []string
	var line []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case out[i] == '\r':
			col = 0
			i++
		case strings.HasPrefix(out[i:], "\x1b[K"):
			line = line[:col]
			i += 3
		case out[i] == '\n':
			lines = append(lines, string(line))
			line, col = nil, 0
			i++
		default:
			r := []rune(out[i:])[0]
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
			i += len(string(r))
		}
	}
	if len(line) > 0 {
		lines = append(lines, string(line))
	}
	return lines
}

// TestGCProgressClearedBeforeSummary: on a terminal, where stdout and
// stderr share the screen, the progress bar's line is cleared before the
// summary is printed, so the summary stands on a line of its own (it used
// to read "… ] 30/30removed 30 runs …").
func TestGCProgressClearedBeforeSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	s := retain.Open(dir)
	L := retain.Limits{Threshold: retain.Unlimited}
	old := time.Now().Add(-40 * 24 * time.Hour)
	for i := range 30 {
		run := fmt.Sprintf("r%02d", i)
		if _, err := s.Retain(strings.NewReader("value\n"), io.Discard, retain.RetainOptions{Run: run, Call: "c", Limits: L}); err != nil {
			t.Fatal(err)
		}
		filepath.Walk(s.RunDir(retain.ID(run)), func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	}
	was := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = was }()

	var tty bytes.Buffer // stdout and stderr: one screen
	if code := Main([]string{"retval", "gc", "--runs-dir", dir}, strings.NewReader(""), &tty, &tty); code != 0 {
		t.Fatalf("exit %d: %q", code, tty.String())
	}
	if !strings.Contains(tty.String(), "collecting [") {
		t.Fatalf("no progress bar drawn: %q", tty.String())
	}
	lines := screen(tty.String())
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "removed 30 runs and 0 debris files, freed ") {
		t.Fatalf("the screen shows %q; want the summary alone (output %q)", lines, tty.String())
	}
}

// TestGCNoBarOffTerminal: into a pipe (cron, a harness) no bar is drawn.
func TestGCNoBarOffTerminal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	os.MkdirAll(dir, 0o700)
	var out, errOut bytes.Buffer
	if code := Main([]string{"retval", "gc", "--runs-dir", dir}, strings.NewReader(""), &out, &errOut); code != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Fatalf("control bytes off a terminal: %q", out.String())
	}
}
