package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// A flag means the same before the arguments as after them, --outline's
// optional pointer included: left out, the next word is the value's id or
// another flag, not the pointer.
func TestFlagsBeforeAndAfterTheArguments(t *testing.T) {
	storeWithValue(t)
	if code, _, stderr := run(t, `{"a": [1, 2], "b": "x"}`, "retain", "--run", "r1", "--call", "doc", "--threshold", "0"); code != 0 {
		t.Fatalf("retain: %s", stderr)
	}
	for _, tc := range []struct{ before, after []string }{
		{[]string{"peek", "--run", "r1", "--outline", "--after", "0", "doc"}, []string{"peek", "--run", "r1", "doc", "--outline", "--after", "0"}},
		{[]string{"peek", "--run", "r1", "--outline", "doc"}, []string{"peek", "--run", "r1", "doc", "--outline"}},
		{[]string{"peek", "--run", "r1", "--outline", "/a", "doc"}, []string{"peek", "--run", "r1", "doc", "--outline", "/a"}},
		{[]string{"resolve", "--run", "r1", "--outline", "doc"}, []string{"resolve", "--run", "r1", "doc", "--outline"}},
		{[]string{"resolve", "--run", "r1", "--outline", "", "doc"}, []string{"resolve", "--run", "r1", "doc", "--outline", ""}},
		{[]string{"peek", "--run", "r1", "--lines", "-2", "c1"}, []string{"peek", "--run", "r1", "c1", "--lines", "-2"}},
		{[]string{"peek", "--run", "r1", "--query", "--help", "c1"}, []string{"peek", "--run", "r1", "c1", "--query", "--help"}},
		{[]string{"catalogue", "--json", "--run", "r1", "--page-size", "1"}, []string{"catalogue", "--run", "r1", "--page-size", "1", "--json"}},
	} {
		c1, out1, err1 := run(t, "", tc.before...)
		c2, out2, err2 := run(t, "", tc.after...)
		if c1 != 0 || out1 == "" || c1 != c2 || out1 != out2 || err1 != err2 {
			t.Errorf("%q: exit %d %q %q\n%q: exit %d %q %q", tc.before, c1, out1, err1, tc.after, c2, out2, err2)
		}
	}
	// After an argument, --help is the command's help, whatever the
	// argument (the flag library would read it as a help topic).
	code, out, _ := run(t, "", "peek", "--run", "r1", "c1", "--help")
	if _, want, _ := run(t, "", "peek", "--help"); code != 0 || out != want {
		t.Errorf("peek c1 --help: exit %d\n%s", code, out)
	}
}

// The commands' bodies take their options struct: only the wiring (the
// constructors, which declare the flags, and the files that read and
// check command lines) asks a *cli.Command for a flag or an argument.
func TestCommandsReadOptionsNotTheCommandLine(t *testing.T) {
	wiring := map[string]bool{"app.go": true, "options.go": true, "suggest.go": true, "flags.go": true, "completion.go": true}
	asks := map[string]bool{"String": true, "Bool": true, "Int": true, "Int64": true, "IsSet": true, "Value": true,
		"Set": true, "Args": true, "NArg": true, "LocalFlagNames": true, "Lineage": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || wiring[name] {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || strings.HasSuffix(fn.Name.Name, "Command") {
				continue // a constructor declares flags and binds them
			}
			for _, p := range fn.Type.Params.List {
				if isCLICommand(p.Type) {
					t.Errorf("%s: %s takes a *cli.Command: give it the command's options", fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && asks[sel.Sel.Name] {
					if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "c" || id.Name == "cmd") {
						t.Errorf("%s: %s reads %s.%s: read it into the command's options", fset.Position(call.Pos()), fn.Name.Name, id.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

func isCLICommand(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "cli" && sel.Sel.Name == "Command"
}
