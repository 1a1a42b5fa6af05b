package installdoc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// call is one installdoc.Command call in the module's source.
type call struct {
	line  string   // its line argument
	where string   // file:line
	tests []string // the tests that reach it: "internal/release TestRelease"
}

// TestEveryLineIsRun reads the Install section of README.md and every
// installdoc.Command call in the module: each line must be taken by a
// call that a test reaches, and each call must take a line the README
// has. It lists which test runs each line.
func TestEveryLineIsRun(t *testing.T) {
	readme, err := Readme()
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Lines(readme)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(lines) == 0 {
		t.Fatal("README.md's Install section has no command line")
	}
	root := moduleRoot(t)
	calls := commandCalls(t, root)
	for _, c := range calls {
		switch {
		case !slices.Contains(lines, c.line):
			t.Errorf("%s runs %q, which is not a line of README.md's Install section (%q)", c.where, c.line, lines)
		case len(c.tests) == 0:
			t.Errorf("%s takes %q, but no test reaches it", c.where, c.line)
		}
	}
	for _, l := range lines {
		var by []string
		for _, c := range calls {
			if c.line == l {
				by = append(by, c.tests...)
			}
		}
		if len(by) == 0 {
			t.Errorf("README.md's install line %q is run by no test: take it with installdoc.Command in the test that proves it", l)
			continue
		}
		slices.Sort(by)
		t.Logf("%-60s %s", l, strings.Join(slices.Compact(by), ", "))
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = filepath.Dir(dir)
	}
}

// commandCalls finds every installdoc.Command call in the module's Go
// files, with the tests of its package that reach the function holding
// it (through any mention of a function's name: a call, a method call or
// a function passed as a value).
func commandCalls(t *testing.T, root string) []call {
	t.Helper()
	fset := token.NewFileSet()
	// Files by directory and package name (an external _test package is
	// a package of its own).
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		key := filepath.Dir(path) + " " + f.Name.Name
		pkgs[key] = append(pkgs[key], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var calls []call
	for key, files := range pkgs {
		dir, _, _ := strings.Cut(key, " ")
		rel, _ := filepath.Rel(root, dir)
		// mentions: function name -> names of the package's functions it
		// mentions; tests: the Test functions; found: the calls and the
		// function each is in.
		funcs := map[string]bool{}
		for _, f := range files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					funcs[fd.Name.Name] = true
				}
			}
		}
		mentions := map[string][]string{}
		var tests []string
		type found struct {
			call
			in string
		}
		var here []found
		for _, f := range files {
			alias := importName(f)
			file := fset.File(f.Pos()).Name()
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				name := fd.Name.Name
				if strings.HasPrefix(name, "Test") && fd.Recv == nil && strings.HasSuffix(file, "_test.go") {
					tests = append(tests, name)
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.Ident:
						if funcs[n.Name] {
							mentions[name] = append(mentions[name], n.Name)
						}
					case *ast.CallExpr:
						sel, ok := n.Fun.(*ast.SelectorExpr)
						if !ok || sel.Sel.Name != "Command" {
							break
						}
						if x, ok := sel.X.(*ast.Ident); !ok || alias == "" || x.Name != alias {
							break
						}
						pos := fset.Position(n.Pos())
						where := filepath.ToSlash(mustRel(root, pos.Filename)) + ":" + strconv.Itoa(pos.Line)
						var lit *ast.BasicLit
						if len(n.Args) == 3 {
							lit, _ = n.Args[1].(*ast.BasicLit)
						}
						if lit == nil || lit.Kind != token.STRING {
							t.Errorf("%s: installdoc.Command's line must be a string literal, for this check to read it", where)
							break
						}
						line, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Errorf("%s: %v", where, err)
							break
						}
						here = append(here, found{call{line: line, where: where}, name})
					}
					return true
				})
			}
		}
		for _, h := range here {
			for _, test := range tests {
				if reaches(mentions, test, h.in) {
					h.tests = append(h.tests, filepath.ToSlash(rel)+" "+test)
				}
			}
			calls = append(calls, h.call)
		}
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].where < calls[j].where })
	return calls
}

// importName is the name file f gives this package, "" if it does not
// import it.
func importName(f *ast.File) string {
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/retval/retval/internal/installdoc" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "installdoc"
		}
	}
	return ""
}

// reaches reports whether function from mentions to, directly or
// through other functions.
func reaches(mentions map[string][]string, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if f == to {
			return true
		}
		for _, g := range mentions[f] {
			if !seen[g] {
				seen[g] = true
				queue = append(queue, g)
			}
		}
	}
	return false
}

func mustRel(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return rel
}

func TestLines(t *testing.T) {
	readme := "# x\n\n```sh\nnot install\n```\n\n## Install\n\nSome prose.\n\n" +
		"```sh\n" +
		"go install example.com/x@VERSION   # with Go\n" +
		"# a comment line\n" +
		"\n" +
		"sha256sum -c SUMS && tar -xzf x_VERSION.tar.gz\n" +
		"```\n\nMore prose.\n\n```\n/plugin install x@x\n```\n\n## Next\n\n```sh\nnot install either\n```\n"
	got, err := Lines([]byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"go install example.com/x@VERSION", "sha256sum -c SUMS && tar -xzf x_VERSION.tar.gz", "/plugin install x@x"}
	if !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	for _, bad := range []string{"# x\n\n## Use\n", "## Install\n\n```sh\ngo install .\n"} {
		if _, err := Lines([]byte(bad)); err == nil {
			t.Errorf("Lines(%q): no error", bad)
		}
	}
}

func TestSubstitute(t *testing.T) {
	lines := []string{"npx -y x@VERSION --version", "go install ."}
	for _, c := range []struct {
		line, version, want string
		ok                  bool
	}{
		{"npx -y x@VERSION --version", "1.2.3", "npx -y x@1.2.3 --version", true},
		{"go install .", "", "go install .", true},
		{"npx -y x@VERSION --version", "", "", false}, // needs a version
		{"go install .", "1.2.3", "", false},          // has no place for one
		{"npx -y x@VERSION", "1.2.3", "", false},      // not a line of the README
	} {
		got, err := substitute(lines, c.line, c.version)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("substitute(%q, %q) = %q, %v; want %q, ok %v", c.line, c.version, got, err, c.want, c.ok)
		}
	}
}
