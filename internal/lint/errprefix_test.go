package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pkgPrefix matches an error message that starts with a package name and a
// colon ("compaction: vacuum ..."): each layer adds what it knows (the
// table, the version, the path), never its package name, and the CLI
// prints "lakesink: " once (STYLE.md, Errors; issue 15).
var pkgPrefix = regexp.MustCompile(`^([a-z][a-z0-9]*): `)

// TestErrorsHaveNoPackagePrefix checks the format strings of fmt.Errorf
// and errors.New in non-test code against the names of the module's
// packages: no message starts with one ("txlog: read ...", "filesink:
// batch 3: ..."), so a wrapped error never stacks "compaction: ...:
// txlog: ..." prefixes. It covers every non-test file of the module,
// internal packages and cmd/ included.
func TestErrorsHaveNoPackagePrefix(t *testing.T) {
	root := repoRoot(t)
	files := parseAll(t, root)
	names := map[string]bool{}
	for _, f := range files {
		names[f.ast.Name.Name] = true
		names[filepath.Base(f.pkg)] = true
	}
	delete(names, "main")
	delete(names, ".")
	fset := token.NewFileSet()
	var where = map[string][]string{}
	for _, f := range files {
		if f.test || strings.HasPrefix(f.pkg, "internal/lint") {
			continue
		}
		full, err := parser.ParseFile(fset, filepath.Join(root, f.rel), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(full, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !(pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && sel.Sel.Name == "New") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if m := pkgPrefix.FindStringSubmatch(s); m != nil && names[m[1]] {
				where[f.rel] = append(where[f.rel], fset.Position(lit.Pos()).String()+" "+strconv.Quote(s))
			}
			return true
		})
	}
	for _, rel := range slices.Sorted(maps.Keys(where)) {
		t.Errorf("%s: %d error messages start with a package name: say what failed and name the table, version, path or batch instead (the CLI prints \"lakesink: \" once):\n\t%s",
			rel, len(where[rel]), strings.Join(where[rel], "\n\t"))
	}
}
