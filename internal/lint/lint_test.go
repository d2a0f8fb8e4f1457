package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/lakesink/lakesink"

// tooling lists the layers that are not in DESIGN.md's package table: repository
// checks and test helpers (nil: may import anything).
var tooling = map[string][]string{
	"internal/lint":       {},
	"internal/benchtable": {},
	"internal/testutil":   nil,
	"tests":               nil,
}

// designTable reads the package table of docs/design.md ("## Packages": one
// row per layer, its package in backticks first, then what it owns, then the
// layers it may import) into layer -> allowed imports, nil meaning
// "everything". Names in the third column that are not layers (gocloud.dev,
// parquet-go, ...) are outside the module and ignored here; "parquetio"
// names internal/parquetio.
func designTable(t *testing.T, root string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatalf("read the package table: %v", err)
	}
	_, rest, ok := strings.Cut(string(data), "\n## Packages")
	if !ok {
		t.Fatal("docs/design.md has no \"## Packages\" section")
	}
	type row struct {
		layer string
		may   []string
	}
	var rows []row
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 3 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue
		}
		name := strings.TrimSpace(cells[0])[1:]
		name, _, _ = strings.Cut(name, "`")
		var may []string
		for _, m := range strings.Split(cells[2], ",") {
			m = strings.TrimSpace(strings.ReplaceAll(m, "`", ""))
			m, _, _ = strings.Cut(m, " (") // "sink (interface only)"
			if m == "everything" {
				may = nil
				break
			}
			if m == "parquetio" {
				m = "internal/parquetio"
			}
			may = append(may, m)
		}
		if may == nil && !strings.Contains(cells[2], "everything") {
			may = []string{}
		}
		rows = append(rows, row{name, may})
	}
	if len(rows) < 5 {
		t.Fatalf("docs/design.md: package table has %d rows", len(rows))
	}
	allowed := map[string][]string{}
	for _, r := range rows {
		allowed[r.layer] = r.may
	}
	for _, r := range rows { // keep only the names that are layers
		if r.may == nil {
			continue
		}
		layers := []string{}
		for _, m := range r.may {
			if _, ok := allowed[m]; ok {
				layers = append(layers, m)
			}
		}
		allowed[r.layer] = layers
	}
	for l, may := range tooling {
		allowed[l] = may
	}
	return allowed
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", dir, err)
	}
	return dir
}

// layerOf maps a package directory (relative, slash form) to its layer.
func layerOf(allowed map[string][]string, rel string) (string, bool) {
	best := ""
	for layer := range allowed {
		if rel == layer || strings.HasPrefix(rel, layer+"/") {
			if len(layer) > len(best) {
				best = layer
			}
		}
	}
	return best, best != ""
}

type goFile struct {
	rel  string // file path relative to the root
	pkg  string // package dir relative to the root
	test bool
	ast  *ast.File
}

func parseAll(t *testing.T, root string) []goFile {
	t.Helper()
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "demo" || name == "vendor") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module (interop/) has its own rules
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		files = append(files, goFile{rel: rel, pkg: filepath.ToSlash(filepath.Dir(rel)), test: strings.HasSuffix(name, "_test.go"), ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// below reports whether layer target lies below layer (reachable through
// allowed imports, directly or not).
func below(allowed map[string][]string, layer, target string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(l string) bool {
		for _, m := range allowed[l] {
			if m == target {
				return true
			}
			if !seen[m] {
				seen[m] = true
				if walk(m) {
					return true
				}
			}
		}
		return false
	}
	return walk(layer)
}

// TestImportsFlowDownward fails on an import that goes up or sideways in
// DESIGN.md's layering. Test files may import test helpers, their own layer's
// packages and any layer below theirs (e.g. a stream test checks the Delta
// table its sink wrote through table, which stream reaches through sink), and
// example files (package x_test) any public package.
func TestImportsFlowDownward(t *testing.T) {
	root := repoRoot(t)
	allowed := designTable(t, root)
	for _, f := range parseAll(t, root) {
		layer, ok := layerOf(allowed, f.pkg)
		if !ok {
			if f.pkg != "." {
				t.Errorf("%s: package directory %q is not a layer of docs/design.md's package table", f.rel, f.pkg)
			}
			continue
		}
		may := allowed[layer]
		if may == nil {
			continue
		}
		for _, imp := range f.ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(path, module+"/") {
				continue
			}
			target := strings.TrimPrefix(path, module+"/")
			tl, _ := layerOf(allowed, target)
			if tl == layer {
				continue
			}
			// An example file shows the package as a user of the module sees
			// it, next to the packages a user combines it with (sink's
			// examples read the table back through reader).
			example := f.test && strings.HasPrefix(filepath.Base(f.rel), "example") && strings.HasSuffix(f.ast.Name.Name, "_test")
			if example && !strings.HasPrefix(tl, "internal/") && tl != "cmd/lakesink" && tl != "tests" {
				continue
			}
			if f.test && (tl == "internal/testutil" || tl == "storage" || below(allowed, layer, tl)) {
				continue
			}
			okImp := false
			for _, m := range may {
				if tl == m {
					okImp = true
				}
			}
			if !okImp {
				t.Errorf("%s imports %s: layer %q may import only %v (docs/design.md, Packages)", f.rel, path, layer, may)
			}
		}
	}
}

// TestNoPanic: production code returns errors; it never calls panic.
func TestNoPanic(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, f := range parseAll(t, root) {
		if f.test || strings.HasPrefix(f.pkg, "internal/lint") {
			continue
		}
		full, err := parser.ParseFile(fset, filepath.Join(root, f.rel), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(full, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
				t.Errorf("%s: panic call at %s (return an error instead)", f.rel, fset.Position(call.Pos()))
			}
			return true
		})
	}
}

// TestEveryPackageHasDocGo: each package states its purpose in doc.go.
func TestEveryPackageHasDocGo(t *testing.T) {
	root := repoRoot(t)
	pkgs := map[string]bool{}
	for _, f := range parseAll(t, root) {
		if f.pkg == "." || f.test {
			continue
		}
		if _, ok := pkgs[f.pkg]; !ok {
			pkgs[f.pkg] = false
		}
		if strings.HasSuffix(f.rel, "/doc.go") {
			pkgs[f.pkg] = true
		}
	}
	var missing []string
	for p, has := range pkgs {
		if !has {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("package %s has no doc.go", p)
	}
}
