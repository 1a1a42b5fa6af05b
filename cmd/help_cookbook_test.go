package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// docs/cookbook.md shows programs a harness author pastes. Each is a file
// under docs/cookbook/ that the markdown includes verbatim, after a line
// "<!-- snippet: cookbook/NAME -->"; TestCookbookIncludes checks the copies
// and TestCookbook runs each shell snippet against a fresh store (the Go
// harness runs as an Example in its own package).

const cookbookDir = "../docs/cookbook"

var snippetMarker = regexp.MustCompile(`^<!-- snippet: (\S+) -->$`)

// fencedBlocks returns each fenced block of a markdown file with the line
// before its opening fence and its info string.
type fencedBlock struct {
	before, info, body string
	line               int
}

func fencedBlocks(md string) []fencedBlock {
	var out []fencedBlock
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		b := fencedBlock{info: strings.TrimSpace(info), line: i + 1}
		if i > 0 {
			b.before = lines[i-1]
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		b.body = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// TestCookbookIncludes: every runnable block in the cookbook is a snippet
// file, copied exactly; every snippet file is shown, and every shell
// snippet has its test.
func TestCookbookIncludes(t *testing.T) {
	md, err := os.ReadFile("../docs/cookbook.md")
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, b := range fencedBlocks(string(md)) {
		m := snippetMarker.FindStringSubmatch(b.before)
		if m == nil {
			if b.info == "sh" || b.info == "bash" || b.info == "go" {
				t.Errorf("cookbook.md:%d: a %s block without a snippet marker is never run: make it a file under docs/cookbook/ (or fence it as text)", b.line, b.info)
			}
			continue
		}
		file, err := os.ReadFile(filepath.Join("../docs", m[1]))
		if err != nil {
			t.Errorf("cookbook.md:%d: %v", b.line, err)
			continue
		}
		if string(file) != b.body {
			t.Errorf("cookbook.md:%d: the block differs from docs/%s; copy the file into the markdown again", b.line, m[1])
		}
		shown[m[1]] = true
	}
	scripts, _ := filepath.Glob(filepath.Join(cookbookDir, "*.sh"))
	for _, s := range append(scripts, filepath.Join(cookbookDir, "goharness", "main.go")) {
		rel := strings.TrimPrefix(s, "../docs/")
		if !shown[rel] {
			t.Errorf("docs/%s is not shown in cookbook.md", rel)
		}
		if strings.HasSuffix(s, ".sh") {
			test := filepath.Join("testdata", "cookbook", strings.TrimSuffix(filepath.Base(s), ".sh")+".txtar")
			if _, err := os.Stat(test); err != nil {
				t.Errorf("docs/%s has no test %s", rel, test)
			}
		}
	}
}

// TestCookbook runs each shell snippet with retval on PATH, in an empty
// directory with its own runs-dir.
func TestCookbook(t *testing.T) {
	abs, err := filepath.Abs(cookbookDir)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/cookbook",
		Setup: func(e *testscript.Env) error {
			e.Setenv("COOKBOOK", abs)
			e.Setenv("RETVAL_RUNS_DIR", e.WorkDir+"/runs")
			return nil
		},
	})
}
