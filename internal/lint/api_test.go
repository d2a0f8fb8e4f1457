package lint

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

// publicFiles parses, fully, the non-test Go files of the public packages:
// those outside internal/, cmd/ and the tooling layers, whose package is not
// main. Nested modules (interop/, examples/) are skipped by parseAll.
func publicFiles(t *testing.T, root string) ([]*ast.File, *token.FileSet) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range parseAll(t, root) {
		if f.test || f.pkg == "." || isInternal(f.pkg) || strings.HasPrefix(f.pkg, "cmd/") || f.pkg == "tests" || f.ast.Name.Name == "main" {
			continue
		}
		full, err := parser.ParseFile(fset, filepath.Join(root, f.rel), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, full)
	}
	return files, fset
}

// isInternal: the package directory has an "internal" element, so that
// only the module may import it.
func isInternal(pkg string) bool {
	return pkg == "internal" || strings.HasPrefix(pkg, "internal/") || strings.Contains(pkg, "/internal/") || strings.HasSuffix(pkg, "/internal")
}

// recvTypeName is the name of a method's receiver type (T or *T, generic
// or not).
func recvTypeName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	e := fd.Recv.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestExportedIdentifiersHaveDocComments: go doc of a public package reads
// as a guide, so every exported function, method (of an exported type),
// type, constant, variable and struct field or interface method of an
// exported type has a doc comment. A constant or variable in a group may be
// documented by the group's comment, and a struct field by a comment on its
// line, as go doc shows both.
func TestExportedIdentifiersHaveDocComments(t *testing.T) {
	root := repoRoot(t)
	files, fset := publicFiles(t, root)
	missing := 0
	report := func(pos token.Pos, what string) {
		missing++
		t.Errorf("%s: exported %s has no doc comment", fset.Position(pos), what)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if r := recvTypeName(d); d.Recv != nil && (r == "" || !ast.IsExported(r)) {
					continue
				}
				if d.Doc == nil {
					what := "func " + d.Name.Name
					if d.Recv != nil {
						what = "method " + recvTypeName(d) + "." + d.Name.Name
					}
					report(d.Pos(), what)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if s.Doc == nil && (d.Doc == nil || len(d.Specs) > 1) {
							report(s.Pos(), "type "+s.Name.Name)
						}
						typeDoc := d.Doc.Text()
						if s.Doc != nil {
							typeDoc = s.Doc.Text()
						}
						checkMembers(fset, s, typeDoc, report)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
								report(n.Pos(), d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	if missing > 0 {
		t.Logf("%d exported identifiers without a doc comment", missing)
	}
}

// namesWord reports whether text has word as a whole word.
func namesWord(text, word string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`).MatchString(text)
}

// checkMembers reports the exported fields of an exported struct type and
// the methods of an exported interface that have no comment: above, on
// their line, or a comment above the run of fields (no blank line between,
// no comment of their own) they belong to that names them, as "// NumFiles
// and NumBytes of the input." documents both in go doc, or the type's doc
// comment naming the field as a word ("And is L AND R."). An embedded field
// is documented by its own type.
func checkMembers(fset *token.FileSet, s *ast.TypeSpec, typeDoc string, report func(token.Pos, string)) {
	var list *ast.FieldList
	kind := "field"
	switch x := s.Type.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list, kind = x.Methods, "method"
	default:
		return
	}
	runDoc, prevEnd := "", -1 // the comment above the current run of fields
	for _, fld := range list.List {
		contiguous := fset.Position(fld.Pos()).Line == prevEnd+1
		prevEnd = fset.Position(fld.End()).Line
		switch {
		case fld.Doc != nil:
			runDoc = fld.Doc.Text()
		case !contiguous || fld.Comment != nil:
			runDoc = ""
		}
		if len(fld.Names) == 0 || fld.Doc != nil || fld.Comment != nil {
			continue // embedded, or documented
		}
		for _, n := range fld.Names {
			if n.IsExported() && !strings.Contains(runDoc, n.Name) && !namesWord(typeDoc, n.Name) {
				report(n.Pos(), kind+" "+s.Name.Name+"."+n.Name)
			}
		}
	}
}

// TestNoExportedReferenceToInternal: a user of the module cannot name an
// internal package's types, so no exported signature, type, field, constant
// or variable of a public package may mention one (issue 15; `go doc` would
// send the reader to a package they cannot import).
func TestNoExportedReferenceToInternal(t *testing.T) {
	root := repoRoot(t)
	files, fset := publicFiles(t, root)
	for _, f := range files {
		internal := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(p, "/internal/") && !strings.HasSuffix(p, "/internal") {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = p
		}
		if len(internal) == 0 {
			continue
		}
		check := func(what string, n ast.Node) {
			if n == nil {
				return
			}
			ast.Inspect(n, func(x ast.Node) bool {
				sel, ok := x.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok {
					if p, ok := internal[id.Name]; ok {
						t.Errorf("%s: exported %s refers to %s.%s of the internal package %s", fset.Position(sel.Pos()), what, id.Name, sel.Sel.Name, p)
					}
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if r := recvTypeName(d); d.Recv != nil && (r == "" || !ast.IsExported(r)) {
					continue
				}
				check("func "+d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						checkExportedType(s, check)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								check(d.Tok.String()+" "+n.Name, s.Type)
								if s.Type == nil && len(s.Values) > 0 {
									// var X = internalpkg.Y: the type is the internal one's.
									for _, v := range s.Values {
										if sel, ok := v.(*ast.SelectorExpr); ok {
											check(d.Tok.String()+" "+n.Name, sel)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// checkExportedType checks what a user sees of an exported type: an alias
// or definition's underlying type, its exported fields (and embedded ones),
// its interface methods, its type parameters.
func checkExportedType(s *ast.TypeSpec, check func(string, ast.Node)) {
	what := "type " + s.Name.Name
	if s.TypeParams != nil {
		check(what, s.TypeParams)
	}
	switch x := s.Type.(type) {
	case *ast.StructType:
		for _, fld := range x.Fields.List {
			if len(fld.Names) == 0 {
				check(what+" (embedded field)", fld.Type)
				continue
			}
			for _, n := range fld.Names {
				if n.IsExported() {
					check(what+"."+n.Name, fld.Type)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range x.Methods.List {
			check(what+" (method)", m.Type)
		}
	default:
		check(what, s.Type)
	}
}

// flagRef matches a CLI flag name (--name) in an error message.
var flagRef = regexp.MustCompile(`(^|[\s("'\x60])--[a-z][a-z0-9-]*`)

// TestLibraryErrorsNameNoFlag: a library error never names a CLI flag; the
// CLI maps its errors to flag names (STYLE.md, Errors). It checks the
// format strings of fmt.Errorf and errors.New outside cmd/ and the test
// layers.
func TestLibraryErrorsNameNoFlag(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, f := range parseAll(t, root) {
		if f.test || f.pkg == "." || strings.HasPrefix(f.pkg, "cmd/") || f.pkg == "tests" || strings.HasPrefix(f.pkg, "internal/testutil") ||
			strings.HasPrefix(f.pkg, "internal/lint") || f.ast.Name.Name == "main" {
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
			if s, err := strconv.Unquote(lit.Value); err == nil && flagRef.MatchString(s) {
				t.Errorf("%s: error message %q names a CLI flag (say the option; cmd/lakesink maps it to the flag)", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}

// TestPublicDocsNameNoInternalPackage: what go doc shows of a public package
// (the package comment, and the comments of exported declarations, fields
// and interface methods) never sends the reader to an internal package,
// which they cannot import or look up with go doc: no "internal/" path and
// no internal package's name (parquetio, ...). Say what the reader can
// see instead ("lakesink's Parquet reader", "the Go value of its type listed
// in package schema").
func TestPublicDocsNameNoInternalPackage(t *testing.T) {
	root := repoRoot(t)
	names, err := filepath.Glob(filepath.Join(root, "internal", "*"))
	if err != nil {
		t.Fatal(err)
	}
	alts := []string{`internal/`}
	for _, n := range names {
		if b := filepath.Base(n); b != "lint" && !strings.Contains(b, ".") {
			alts = append(alts, `\b`+regexp.QuoteMeta(b)+`\b`)
		}
	}
	if len(alts) < 2 {
		t.Fatalf("no internal packages found under %s", filepath.Join(root, "internal"))
	}
	re := regexp.MustCompile(strings.Join(alts, "|"))
	files, fset := publicFiles(t, root)
	check := func(what string, cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg == nil {
				continue
			}
			if m := re.FindString(cg.Text()); m != "" {
				t.Errorf("%s: the doc of %s names the internal package %q", fset.Position(cg.Pos()), what, m)
			}
		}
	}
	for _, f := range files {
		check("package "+f.Name.Name, f.Doc)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if r := recvTypeName(d); d.Recv != nil && (r == "" || !ast.IsExported(r)) {
					continue
				}
				check("func "+d.Name.Name, d.Doc)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						check("type "+s.Name.Name, d.Doc, s.Doc, s.Comment)
						var list *ast.FieldList
						switch x := s.Type.(type) {
						case *ast.StructType:
							list = x.Fields
						case *ast.InterfaceType:
							list = x.Methods
						}
						if list == nil {
							continue
						}
						for _, fld := range list.List {
							for _, n := range fld.Names {
								if n.IsExported() {
									check(s.Name.Name+"."+n.Name, fld.Doc, fld.Comment)
									break
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								check(d.Tok.String()+" "+n.Name, d.Doc, s.Doc, s.Comment)
								break
							}
						}
					}
				}
			}
		}
	}
}
