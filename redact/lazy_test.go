package redact_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The package's regular expressions are compiled at their first use
// (lazyRegexp), so a pattern that does not compile would panic only when
// the redactor reaches it, not at start-up: this test compiles every one,
// reading them from the source, and refuses a package-level variable that
// compiles a regexp at start-up.
func TestRegexpsCompileLazily(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	lazy := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "lazyRegexp" {
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: lazyRegexp of something other than a string literal", fset.Position(call.Pos()))
					return true
				}
				expr, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := regexp.Compile(expr); err != nil {
					t.Errorf("%s: %v", fset.Position(call.Pos()), err)
				}
				lazy++
			}
			return true
		})
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			var atStart func(n ast.Node) bool
			atStart = func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if fn, ok := n.Fun.(*ast.FuncLit); ok {
						ast.Inspect(fn.Body, atStart) // called here: runs at start-up
						for _, a := range n.Args {
							ast.Inspect(a, atStart)
						}
						return false
					}
				case *ast.FuncLit:
					return false // runs when called, not at start-up
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "regexp" && n.Sel.Name == "MustCompile" {
						t.Errorf("%s: a package-level variable compiles a regexp at start-up; use lazyRegexp", fset.Position(n.Pos()))
					}
				}
				return true
			}
			ast.Inspect(g, atStart)
		}
	}
	if lazy < 30 {
		t.Errorf("found %d lazyRegexp calls; the package has more than 30 (is the test reading the right files?)", lazy)
	}
	t.Logf("%d lazy regexps compile", lazy)
}
