package reader

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

var writeConformance = flag.Bool("conformance", false, "rewrite testdata/conformance.md from the shared interop data")

// tableResult is the outcome of reading one table.
type tableResult struct {
	Name    string
	Status  string // pass, unsupported, log-only, FAIL
	Rows    int
	Files   int
	Note    string
	Err     error
	Checked int // files whose rows were checked against their statistics
}

// knownRows are hand-derived expectations for some delta-rs tables (from
// their commit logs): the sorted canonical values of one column.
var knownRows = map[string]struct {
	col  string
	want []string
}{
	// DELETE ... WHERE value IN (0, 9) through a deletion vector.
	"table-with-dv-small":       {"value", []string{"int32(1)", "int32(2)", "int32(3)", "int32(4)", "int32(5)", "int32(6)", "int32(7)", "int32(8)"}},
	"table-without-dv-small":    {"value", []string{"int64(0)", "int64(1)", "int64(2)", "int64(3)", "int64(4)", "int64(5)", "int64(6)", "int64(7)", "int64(8)", "int64(9)"}},
	"table_with_column_mapping": {"Company Very Short", []string{"string(BME)", "string(BMS)", "string(BMS)", "string(BMS)", "string(BMS)"}},
}

// knownBadStats are tables whose logged statistics contradict their data
// files (the data is right, the writer's stats are not).
var knownBadStats = map[string]string{
	"issue_1374": "stats contradict the data (delta-rs 0.11 wrote one timestamp as min and max: delta-rs issue #1374; such stats would wrongly skip this file, as in that issue)",
}

// findTables lists the directories under root holding a _delta_log.
func findTables(t testing.TB, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == "_delta_log" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			out = append(out, rel)
			return filepath.SkipDir
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// checkTable reads a whole table and checks every file's rows against the
// file's own statistics (row count = numRecords - deleted rows; values
// within minValues/maxValues; nullCount when bounds are tight and nothing is
// deleted), which were written independently by Spark or delta-rs.
func checkTable(ctx context.Context, dir, name string) tableResult {
	res := tableResult{Name: name}
	snap, err := Open(ctx, dir)
	if err != nil {
		return classify(res, err)
	}
	defer snap.Close()
	p, err := snap.plan(ctx, ReadOptions{})
	if err != nil {
		return classify(res, err)
	}
	res.Files = len(p.files)
	var all [][]any
	for i := range p.files {
		f := &p.files[i]
		var rows [][]any
		err := p.readFile(ctx, f, func(recs []Record) bool {
			for _, r := range recs {
				rows = append(rows, r.Values)
			}
			return true
		})
		if err != nil {
			return classify(res, err)
		}
		// Row count against the Parquet footer, minus deleted rows.
		pf, err := parquetio.OpenFile(ctx, snap.store, f.Key, f.Size)
		if err != nil {
			return classify(res, err)
		}
		footer := pf.NumRows()
		pf.Close()
		deleted := int64(0)
		if f.DeletionVector != nil {
			deleted = f.DeletionVector.Cardinality
		}
		if int64(len(rows)) != footer-deleted {
			res.Status, res.Err = "FAIL", fmt.Errorf("file %s: %d rows, footer says %d - %d deleted", f.Path, len(rows), footer, deleted)
			return res
		}
		checked, err := checkAgainstStats(snap.Schema(), f, rows)
		if err != nil && knownBadStats[name] != "" {
			res.Note = knownBadStats[name] + "; "
			checked, err = false, nil
		}
		if err != nil {
			res.Status, res.Err = "FAIL", fmt.Errorf("file %s: %w", f.Path, err)
			return res
		}
		if checked {
			res.Checked++
		}
		all = append(all, rows...)
	}
	res.Rows = len(all)
	if len(all) > 100_000 {
		// Large tables: the per-file pass above is enough (keeps the test fast).
		res.Status = "pass"
		res.Note += fmt.Sprintf("row counts match the Parquet footers; %d/%d files checked against their stats", res.Checked, res.Files)
		return res
	}
	// The streaming path must agree with the per-file path.
	n := 0
	for _, err := range snap.Rows(ctx, ReadOptions{Workers: 3}) {
		if err != nil {
			return classify(res, err)
		}
		n++
	}
	if n != len(all) {
		res.Status, res.Err = "FAIL", fmt.Errorf("Rows returned %d rows, files hold %d", n, len(all))
		return res
	}
	if k, ok := knownRows[name]; ok {
		idx, err := topLevelField(snap.Schema(), k.col)
		if err != nil {
			res.Status, res.Err = "FAIL", err
			return res
		}
		var got []string
		for _, r := range all {
			got = append(got, canon(r[idx]))
		}
		slices.Sort(got)
		if !slices.Equal(got, k.want) {
			res.Status, res.Err = "FAIL", fmt.Errorf("column %s = %v, want %v", k.col, got, k.want)
			return res
		}
		res.Note += "values checked against the log's history; "
	}
	res.Status = "pass"
	res.Note += fmt.Sprintf("row counts match the Parquet footers; %d/%d files checked against their stats", res.Checked, res.Files)
	return res
}

func classify(res tableResult, err error) tableResult {
	var ufe *txlog.UnsupportedFeatureError
	switch {
	case errors.As(err, &ufe):
		res.Status, res.Note = "unsupported", "refused: "+ufe.Feature
	case errors.Is(err, storage.ErrNotFound) && !errors.Is(err, txlog.ErrTableNotFound):
		res.Status, res.Note = "log-only", "data files are not part of the fixture (log replay only)"
	default:
		res.Status = "FAIL"
	}
	res.Err = err
	return res
}

// checkAgainstStats reports whether the file had statistics to check.
func checkAgainstStats(sch *schema.StructType, f *File, rows [][]any) (bool, error) {
	if f.Stats == nil {
		return false, nil
	}
	deleted := int64(0)
	if f.DeletionVector != nil {
		deleted = f.DeletionVector.Cardinality
	}
	if f.NumRecords >= 0 && int64(len(rows)) != f.NumRecords-deleted {
		return true, fmt.Errorf("%d rows, stats say numRecords %d - %d deleted", len(rows), f.NumRecords, deleted)
	}
	tight := f.DeletionVector == nil && (f.Stats.TightBounds == nil || *f.Stats.TightBounds)
	var walk func(st *schema.StructType, path []string, index []int) error
	walk = func(st *schema.StructType, path []string, index []int) error {
		for i, fld := range st.Fields {
			p := append(slices.Clone(path), fld.PhysicalName())
			ix := append(slices.Clone(index), i)
			if sub, ok := fld.Type.(*schema.StructType); ok {
				if err := walk(sub, p, ix); err != nil {
					return err
				}
				continue
			}
			if _, part := f.PartitionValues[fld.Name]; part && len(path) == 0 {
				continue
			}
			d := f.Stats.Domain(p, fld.Type)
			nulls := int64(0)
			for _, r := range rows {
				v := expr.ValueAt(r, ix)
				if v == nil {
					nulls++
					continue
				}
				if d.Min != nil {
					if c, ok := expr.CompareValues(v, d.Min); ok && c < 0 {
						return fmt.Errorf("column %s: value %s below minValues %s", strings.Join(p, "."), canon(v), canon(d.Min))
					}
				}
				if d.Max != nil {
					if c, ok := expr.CompareValues(v, d.Max); ok && c > 0 {
						s, isStr := v.(string)
						m, _ := d.Max.(string)
						if !(isStr && d.MaxPrefix && strings.HasPrefix(s, m)) {
							return fmt.Errorf("column %s: value %s above maxValues %s", strings.Join(p, "."), canon(v), canon(d.Max))
						}
					}
				}
			}
			// nullCount of a nested leaf also counts rows whose parent
			// struct is null, which ValueAt reports as null too.
			if tight && d.NullCount >= 0 && d.NullCount != nulls {
				return fmt.Errorf("column %s: %d nulls, stats nullCount %d", strings.Join(p, "."), nulls, d.NullCount)
			}
		}
		return nil
	}
	return true, walk(sch, nil, nil)
}

// TestDeltaRSLocal reads the delta-rs tables copied into testdata.
func TestDeltaRSLocal(t *testing.T) {
	root := localDir(t, "deltars")
	for _, name := range findTables(t, root) {
		t.Run(name, func(t *testing.T) {
			res := checkTable(context.Background(), filepath.Join(root, name), filepath.Base(name))
			if res.Status != "pass" {
				t.Fatalf("%s: %s: %v", name, res.Status, res.Err)
			}
			t.Logf("%d rows; %s", res.Rows, res.Note)
		})
	}
}

// TestConformance runs every DAT case and every delta-rs table of the
// shared interop data. Each must read correctly or stop with an error
// naming an unsupported feature (or, for fixtures that ship only a log,
// with the missing data file). With -conformance it rewrites
// testdata/conformance.md.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the full interop corpus includes a 1.1M-row table; skipped with -short")
	}
	datRoot := sharedDir(t, "dat")
	rsRoot := sharedDir(t, "delta-rs")
	var md strings.Builder
	md.WriteString("# Reader conformance\n\nGenerated by `go test ./reader -run TestConformance -conformance` over `../shared/testdata`.\n\n")
	md.WriteString("## DAT (expected rows compared after sorting, types included)\n\n| case | version | rows | result |\n|---|---|---|---|\n")
	cases, _ := os.ReadDir(datRoot)
	for _, c := range cases {
		var results []datResult
		t.Run("dat/"+c.Name(), func(t *testing.T) { results = runDATCase(t, filepath.Join(datRoot, c.Name())) })
		for _, r := range results {
			status := "pass"
			if r.Err != nil {
				status = "FAIL: " + r.Err.Error()
			}
			fmt.Fprintf(&md, "| %s | %s | %d | %s |\n", r.Case, r.Version, r.Rows, status)
		}
	}
	md.WriteString("\n## delta-rs tables (every file's rows checked against its own statistics)\n\n| table | result | rows | files | note |\n|---|---|---|---|---|\n")
	for _, name := range findTables(t, rsRoot) {
		var res tableResult
		t.Run("delta-rs/"+name, func(t *testing.T) {
			res = checkTable(context.Background(), filepath.Join(rsRoot, name), filepath.Base(name))
			switch res.Status {
			case "pass":
				t.Logf("%d rows; %s", res.Rows, res.Note)
			case "unsupported", "log-only":
				t.Logf("%s: %v", res.Status, res.Err)
			default:
				t.Errorf("%v", res.Err)
			}
		})
		note := res.Note
		if res.Status == "FAIL" {
			note = strings.ReplaceAll(res.Err.Error(), "|", "/")
		}
		fmt.Fprintf(&md, "| %s | %s | %d | %d | %s |\n", name, res.Status, res.Rows, res.Files, note)
	}
	if *writeConformance {
		// The generated-corpus section is written by interop/engines
		// (make interop); keep it.
		path := filepath.Join("testdata", "conformance.md")
		if old, err := os.ReadFile(path); err == nil {
			if i := strings.Index(string(old), "<!-- corpus:begin"); i >= 0 {
				md.WriteString("\n" + string(old[i:]))
			}
		}
		if err := os.WriteFile(path, []byte(md.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
