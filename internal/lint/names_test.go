package lint

import (
	"go/ast"
	"go/token"
	"testing"
)

// TestOneNamePerConcept keeps the public API's names for the same concept
// the same (docs/design.md, "One name per concept"): Validate has a value
// receiver; a clock is a struct field Now func() time.Time, never a Clock
// field or a now argument; a dry run is a DryRun options field, never a
// dryRun argument; the exported types named Snapshot are reader's (the
// user's read snapshot) and txlog's (the log state) only.
func TestOneNamePerConcept(t *testing.T) {
	files, fset := publicFiles(t, repoRoot(t))
	bad := func(pos token.Pos, format string, args ...any) {
		t.Errorf("%s: "+format, append([]any{fset.Position(pos)}, args...)...)
	}
	for _, f := range files {
		pkg := f.Name.Name
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Name.Name == "Validate" && d.Recv != nil && len(d.Recv.List) == 1 {
					if _, ptr := d.Recv.List[0].Type.(*ast.StarExpr); ptr {
						bad(d.Pos(), "%s.Validate has a pointer receiver; every Validate has a value receiver", recvTypeName(d))
					}
				}
				for _, p := range d.Type.Params.List {
					for _, n := range p.Names {
						switch n.Name {
						case "now":
							bad(n.Pos(), "%s takes a now argument; the clock is an options field Now func() time.Time", d.Name.Name)
						case "dryRun":
							bad(n.Pos(), "%s takes a dryRun argument; a dry run is an options field DryRun bool", d.Name.Name)
						}
					}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if ts.Name.Name == "Snapshot" && pkg != "reader" && pkg != "txlog" {
						bad(ts.Pos(), "%s.Snapshot: the exported Snapshot types are reader's and txlog's only", pkg)
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						clock := isClockFunc(fld.Type)
						for _, n := range fld.Names {
							if !n.IsExported() {
								continue
							}
							switch {
							case n.Name == "Clock":
								bad(n.Pos(), "%s.%s: the clock is a field Now func() time.Time", ts.Name.Name, n.Name)
							case clock && n.Name != "Now":
								bad(n.Pos(), "%s.%s func() time.Time: a clock field is named Now", ts.Name.Name, n.Name)
							case n.Name == "Now" && !clock:
								bad(n.Pos(), "%s.Now is not a func() time.Time", ts.Name.Name)
							}
						}
					}
				}
			}
		}
	}
}

// isClockFunc: the type is func() time.Time.
func isClockFunc(e ast.Expr) bool {
	ft, ok := e.(*ast.FuncType)
	if !ok || len(ft.Params.List) != 0 || ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return false
	}
	sel, ok := ft.Results.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "time" && sel.Sel.Name == "Time"
}
