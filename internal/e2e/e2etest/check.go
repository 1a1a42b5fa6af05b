package e2etest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// SeqOutput is what seq 1 n prints.
func SeqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.Bytes()
}

// FileText is a text of at least size bytes, of numbered lines.
func FileText(size int) string {
	var b strings.Builder
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %d of the notes, with some words after it\n", i)
	}
	return b.String()
}

// SHA is the hex SHA-256 of b.
func SHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ReadMore is the stub's own read-more shell command: its line that starts
// with "retval peek ", as a model would copy it (the comment after it
// too), or "" when there is none.
func ReadMore(stub string) string {
	for _, l := range strings.Split(stub, "\n") {
		if strings.HasPrefix(l, "retval peek ") {
			return l
		}
	}
	return ""
}

var linesFlag = regexp.MustCompile(`--lines[ =](\d+)-(\d+)`)

// PeekRange is the line range A-B a read-more command asks for.
func PeekRange(t testing.TB, cmd string) (int, int) {
	t.Helper()
	m := linesFlag.FindStringSubmatch(cmd)
	if m == nil {
		t.Fatalf("no --lines A-B in %q", cmd)
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b
}

// CheckPeek asserts that got holds the value's lines from a on, exactly
// as peek prints them ("N: " and the line), at least 100 of them, up to b
// or to where peek's output cap stopped, and then nothing but peek's last
// line saying which lines it showed. want is the value's lines.
func CheckPeek(t testing.TB, got string, want []string, a, b int) {
	t.Helper()
	rows := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	n := a
	for _, row := range rows {
		if n > b || n > len(want) || !strings.HasPrefix(row, strconv.Itoa(n)+": ") {
			break
		}
		if row != fmt.Sprintf("%d: %s", n, want[n-1]) {
			t.Fatalf("line %d came back as %q, want %q", n, row, want[n-1])
		}
		n++
	}
	shown := n - a
	if shown < 100 {
		t.Fatalf("the read-more command gave %d lines of %d-%d: %.300q", shown, a, b, got)
	}
	switch rest := rows[shown:]; {
	case len(rest) == 0 && n == b+1:
	case len(rest) == 1 && strings.HasPrefix(rest[0], fmt.Sprintf("[lines %d-%d of %d", a, n-1, len(want))):
	default:
		t.Errorf("after lines %d-%d: %q", a, n-1, rest)
	}
}

// Lines are the lines of a text that ends with a newline.
func Lines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// GoSource returns the bytes of a file of the Go source tree of the go
// command on the PATH (rel is relative to its GOROOT, as
// "src/net/http/server.go"): real code to move lines of. The test is
// skipped where there is none.
func GoSource(t testing.TB, rel string) []byte {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("no go command to find the Go source: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), filepath.FromSlash(rel)))
	if err != nil {
		t.Skipf("no Go source to move lines of: %v", err)
	}
	return b
}
