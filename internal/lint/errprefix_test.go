package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
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

// prefixedErrorsLeft counts, per file, the messages that still start with a
// package name: the list only shrinks. A file with more fails (a prefix
// came back); a file with fewer fails too, so that its entry is lowered
// (or removed) in the same change.
var prefixedErrorsLeft = map[string]int{
	"filesink/codec.go":                        4,
	"filesink/jsonfile.go":                     4,
	"filesink/log.go":                          13,
	"filesink/read.go":                         4,
	"filesink/sink.go":                         7,
	"filesink/uri.go":                          1,
	"internal/parquetio/batch_writer.go":       2,
	"internal/parquetio/read_chunks.go":        1,
	"internal/parquetio/write.go":              2,
	"internal/testutil/kafkatest/kafkatest.go": 5,
	"internal/testutil/s3test/errors.go":       3,
	"internal/testutil/s3test/s3test.go":       3,
	"metrics/serve.go":                         1,
	"storage/faultstore/errors.go":             2,
	"storage/local.go":                         1,
	"stream/checkpoint/checkpoint.go":          7,
	"stream/checkpoint/offsets.go":             3,
	"stream/checkpoint/sourcelog.go":           7,
	"stream/kafka/group.go":                    8,
	"stream/kafka/read.go":                     2,
	"stream/kafka/source.go":                   8,
	"stream/query.go":                          7,
	"stream/source/file.go":                    8,
	"txlog/actions.go":                         2,
	"txlog/checkpoint_read.go":                 1,
	"txlog/checkpoint_write.go":                7,
	"txlog/checksum.go":                        2,
	"txlog/cleanup.go":                         3,
	"txlog/log.go":                             1,
	"txlog/logfile.go":                         5,
	"txlog/paths.go":                           2,
	"txlog/snapshot.go":                        1,
	"txlog/txn.go":                             3,
}

// TestErrorsHaveNoPackagePrefix checks the format strings of fmt.Errorf
// and errors.New in non-test code against the names of the module's
// packages.
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
	got := map[string]int{}
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
				got[f.rel]++
				where[f.rel] = append(where[f.rel], fset.Position(lit.Pos()).String()+" "+strconv.Quote(s))
			}
			return true
		})
	}
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for k := range got {
			seen[k] = true
		}
		for k := range prefixedErrorsLeft {
			seen[k] = true
		}
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	}) {
		switch n, left := got[rel], prefixedErrorsLeft[rel]; {
		case n > left:
			t.Errorf("%s: %d error messages start with a package name (%d allowed): say what failed and name the table, version or path instead:\n\t%s",
				rel, n, left, strings.Join(where[rel], "\n\t"))
		case n < left:
			t.Errorf("%s: %d error messages start with a package name, prefixedErrorsLeft allows %d: lower its entry to %d", rel, n, left, n)
		}
	}
}
