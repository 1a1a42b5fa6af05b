package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are the helper commands the scripts use.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// gen FILE LINES [WIDTH]: write LINES numbered lines ("line N xxxx…").
	"gen": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: gen FILE LINES [WIDTH]")
		}
		n, _ := strconv.Atoi(args[1])
		width := 0
		if len(args) > 2 {
			width, _ = strconv.Atoi(args[2])
		}
		var b bytes.Buffer
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", width))
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
	},
	// repeat FILE COUNT TEXT: write TEXT (with \n escapes) COUNT times.
	"repeat": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: repeat FILE COUNT TEXT")
		}
		n, _ := strconv.Atoi(args[1])
		text, err := strconv.Unquote(`"` + args[2] + `"`)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Repeat(text, n)), 0o644))
	},
	// nofiles DIR GLOB: fail if DIR holds a file matching GLOB (debris check).
	"nofiles": func(ts *testscript.TestScript, neg bool, args []string) {
		m, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), args[1]))
		if len(m) > 0 && !neg {
			ts.Fatalf("unexpected files: %v", m)
		}
		if len(m) == 0 && neg {
			ts.Fatalf("no files match %s", args[1])
		}
	},
	// count DIR N: DIR holds exactly N entries.
	"count": func(ts *testscript.TestScript, neg bool, args []string) {
		ents, err := os.ReadDir(ts.MkAbs(args[0]))
		ts.Check(err)
		want, _ := strconv.Atoi(args[1])
		if len(ents) != want {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			ts.Fatalf("%s holds %d entries, want %d: %v", args[0], len(ents), want, names)
		}
	},
}
