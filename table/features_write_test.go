package table_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// specTable commits version 0 of a table as Spark would leave it (protocol,
// metadata with schemaString and configuration as given) and returns it.
func specTable(t *testing.T, p txlog.Protocol, schemaString string, partCols []string, config map[string]string) *table.Table {
	t.Helper()
	tb := open(t)
	data, err := txlog.EncodeCommit([]txlog.Action{{Protocol: &p}, {MetaData: &txlog.Metadata{ID: "spark-table", Format: txlog.Format{Provider: "parquet"},
		SchemaString: schemaString, PartitionColumns: nonNil(partCols), Configuration: config}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Store().PutIfAbsent(context.Background(), txlog.CommitPath(0), data); err != nil {
		t.Fatal(err)
	}
	return tb
}

// The column-mapped table of the corpus after RENAME COLUMN (a -> a_renamed,
// part -> part_renamed): logical names differ from the physical ones.
const cmSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1d"}},` +
	`{"name":"a_renamed","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2a"}},` +
	`{"name":"s","type":{"type":"struct","fields":[{"name":"x_renamed","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-4x"}}]},"nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-3s"}},` +
	`{"name":"part_renamed","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-5p"}}]}`

// PROTOCOL.md "Writer Requirements for Column Mapping": an append to a
// table in name or id mode writes Parquet columns by physical name with
// field ids (Delta writes them in both modes), and partitionValues and
// stats keyed by physical name.
func TestAppendToColumnMappedTable(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			p := txlog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
				ReaderFeatures: []string{txlog.FeatureColumnMapping}, WriterFeatures: []string{txlog.FeatureColumnMapping}}
			tb := specTable(t, p, cmSchema, []string{"part_renamed"},
				map[string]string{txlog.PropColumnMappingMode: mode, "delta.columnMapping.maxColumnId": "5"})
			st, err := schema.ParseSchema([]byte(cmSchema))
			if err != nil {
				t.Fatal(err)
			}
			b := &schema.Batch{Schema: st, Rows: [][]any{{int64(7), "seven", []any{int32(70)}, "p"}}}
			if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
				t.Fatalf("append: %v", err)
			}
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			files := snap.Files()
			if len(files) != 1 {
				t.Fatalf("%d files, want 1", len(files))
			}
			a := files[0]
			if v := a.PartitionValues["col-5p"]; v == nil || *v != "p" || len(a.PartitionValues) != 1 {
				t.Errorf("partitionValues %v, want {col-5p: p}", a.PartitionValues)
			}
			if !strings.Contains(a.Stats, `"col-1d":7`) || !strings.Contains(a.Stats, `"col-3s":{"col-4x":70}`) || strings.Contains(a.Stats, "renamed") {
				t.Errorf("stats %s, want keys by physical name", a.Stats)
			}
			key, err := snap.FileKey(a.Path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := tb.Store().Read(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fld := range f.Schema().Fields() {
				got = append(got, fld.Name()+"#"+strconv.Itoa(fld.ID()))
				if fld.Name() == "col-3s" {
					for _, sub := range fld.Fields() {
						got = append(got, "  "+sub.Name()+"#"+strconv.Itoa(sub.ID()))
					}
				}
			}
			want := "col-1d#1 col-2a#2 col-3s#3   col-4x#4"
			if strings.Join(got, " ") != want {
				t.Errorf("Parquet columns %q, want %q (physical names, field ids)", strings.Join(got, " "), want)
			}
		})
	}
}

// New columns would need physical names and ids: refused, nothing written.
func TestAppendToColumnMappedTableRefusesNewColumns(t *testing.T) {
	ctx := context.Background()
	p := txlog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	tb := specTable(t, p, cmSchema, nil, map[string]string{txlog.PropColumnMappingMode: "name", "delta.columnMapping.maxColumnId": "5"})
	b := &schema.Batch{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "extra", Type: schema.TypeString, Nullable: true}}}, Rows: [][]any{{int64(1), "x"}}}
	_, err := tb.Write(ctx, b, table.WriteOptions{MergeSchema: true})
	if !errors.Is(err, table.ErrSchemaMismatch) || !strings.Contains(err.Error(), "column mapping") {
		t.Fatalf("err = %v, want ErrSchemaMismatch naming column mapping", err)
	}
}

const checkSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"x","type":"integer","nullable":true,"metadata":{}}]}`

func checkBatch(xs ...any) *schema.Batch {
	st, _ := schema.ParseSchema([]byte(checkSchema))
	b := &schema.Batch{Schema: st}
	for i, x := range xs {
		b.Rows = append(b.Rows, []any{int64(i), x})
	}
	return b
}

// PROTOCOL.md "CHECK Constraints": every new row must satisfy each
// constraint; a row for which it is false or null (Delta's
// CheckDeltaInvariant) fails the write, which commits nothing.
func TestAppendChecksConstraints(t *testing.T) {
	ctx := context.Background()
	p := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{txlog.FeatureCheckConstraints, txlog.FeatureAppendOnly, txlog.FeatureInvariants}}
	tb := specTable(t, p, checkSchema, nil, map[string]string{"delta.constraints.x_positive": "x > 0"})
	if _, err := tb.Write(ctx, checkBatch(int32(1), int32(5)), table.WriteOptions{}); err != nil {
		t.Fatalf("rows that satisfy the constraint: %v", err)
	}
	for _, bad := range []struct {
		name string
		b    *schema.Batch
		row  int
		show string
	}{
		{"false", checkBatch(int32(3), int32(-1)), 1, "x = -1"},
		{"null", checkBatch(nil), 0, "x = NULL"},
	} {
		_, err := tb.Write(ctx, bad.b, table.WriteOptions{})
		var re *schema.RowError
		var cve *table.ConstraintViolationError
		if !errors.Is(err, table.ErrConstraintViolation) || !errors.As(err, &re) || !errors.As(err, &cve) {
			t.Fatalf("%s: err = %v, want a RowError wrapping a ConstraintViolationError", bad.name, err)
		}
		if re.Row != bad.row || cve.Constraint != "x_positive" || !strings.Contains(err.Error(), "x_positive (x > 0)") || !strings.Contains(err.Error(), bad.show) {
			t.Errorf("%s: %v: want row %d, constraint x_positive (x > 0), %s", bad.name, err, bad.row, bad.show)
		}
	}
	if snap, _ := tb.Snapshot(ctx); snap.Version() != 1 {
		t.Errorf("version %d, want 1: a violating write must commit nothing", snap.Version())
	}
}

// A constraint lakesink's predicate language cannot evaluate is refused by
// name (exit 4 in the CLI), never skipped.
func TestAppendRefusesConstraintItCannotEvaluate(t *testing.T) {
	p := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 3}
	tb := specTable(t, p, checkSchema, nil, map[string]string{"delta.constraints.small": "x * 2 < 10"})
	_, err := tb.Write(context.Background(), checkBatch(int32(1)), table.WriteOptions{})
	var ufe *txlog.UnsupportedFeatureError
	if !errors.As(err, &ufe) || ufe.Feature != txlog.FeatureCheckConstraints || !strings.Contains(err.Error(), "constraint small CHECK (x * 2 < 10)") {
		t.Fatalf("err = %v, want a checkConstraints refusal naming constraint small", err)
	}
}

// Generated columns are refused by name: their values would have to be
// computed by the writer (PROTOCOL.md "Generated Columns").
func TestAppendRefusesGeneratedColumns(t *testing.T) {
	gen := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"x","type":"integer","nullable":true,"metadata":{"delta.generationExpression":"id * 2"}}]}`
	p := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{txlog.FeatureGeneratedColumns}}
	tb := specTable(t, p, gen, nil, nil)
	_, err := tb.Write(context.Background(), checkBatch(int32(1)), table.WriteOptions{})
	var ufe *txlog.UnsupportedFeatureError
	if !errors.As(err, &ufe) || ufe.Feature != txlog.FeatureGeneratedColumns || !strings.Contains(err.Error(), "column x GENERATED ALWAYS AS (id * 2)") {
		t.Fatalf("err = %v, want a generatedColumns refusal naming column x", err)
	}
}

func identitySchema(start, step, hwm, explicit string) string {
	md := `"delta.identity.start":` + start + `,"delta.identity.step":` + step + `,"delta.identity.allowExplicitInsert":` + explicit
	if hwm != "" {
		md += `,"delta.identity.highWaterMark":` + hwm
	}
	return `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{` + md + `}},{"name":"x","type":"integer","nullable":true,"metadata":{}}]}`
}

// identityOf is the id column and the high-water mark after the writes.
func identityOf(t *testing.T, tb *table.Table) ([]int64, string) {
	t.Helper()
	rows, sch, err := table.LiveRows(context.Background(), tb)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows {
		if r[0] == nil {
			t.Fatalf("row %v has a null identity", r)
		}
		ids = append(ids, r[0].(int64))
	}
	slices.Sort(ids)
	return ids, fmt.Sprint(sch.Fields[0].Metadata["delta.identity.highWaterMark"])
}

// PROTOCOL.md "Identity Columns": values start + k*step beyond the
// high-water mark, which the commit moves to the last one; a value given
// for a GENERATED ALWAYS column is refused, one for BY DEFAULT is kept.
func TestAppendToIdentityColumn(t *testing.T) {
	ctx := context.Background()
	p := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{txlog.FeatureIdentityColumns}}
	t.Run("always, after Spark's rows", func(t *testing.T) {
		tb := specTable(t, p, identitySchema("1", "3", "4", "false"), nil, nil)
		b := &schema.Batch{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeInteger, Nullable: true}}},
			Rows: [][]any{{int32(1)}, {int32(2)}}}
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		b.Rows = [][]any{{int32(3)}}
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		ids, hwm := identityOf(t, tb)
		if !slices.Equal(ids, []int64{7, 10, 13}) || hwm != "13" {
			t.Errorf("ids %v, highWaterMark %s; want 7 10 13 (1 + 3k beyond 4), 13", ids, hwm)
		}
		_, err := tb.Write(ctx, checkBatch(int32(9)), table.WriteOptions{}) // id 0 given
		if !errors.Is(err, table.ErrIdentityColumn) || !strings.Contains(err.Error(), "GENERATED ALWAYS AS IDENTITY") {
			t.Errorf("a value for a GENERATED ALWAYS column: err = %v, want ErrIdentityColumn", err)
		}
	})
	t.Run("by default, negative step, no rows yet", func(t *testing.T) {
		tb := specTable(t, p, identitySchema("-1", "-2", "", "true"), nil, nil)
		b := checkBatch(int32(1), int32(2), int32(3))
		b.Rows[1][0] = int64(100) // given: kept
		b.Rows[0][0], b.Rows[2][0] = nil, nil
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if b.Rows[0][0] != nil {
			t.Error("Write modified the caller's batch")
		}
		ids, hwm := identityOf(t, tb)
		if !slices.Equal(ids, []int64{-3, -1, 100}) || hwm != "-3" {
			t.Errorf("ids %v, highWaterMark %s; want -3 -1 100, -3", ids, hwm)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		tb := specTable(t, p, identitySchema("1", "1", "9223372036854775807", "false"), nil, nil)
		b := &schema.Batch{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeInteger, Nullable: true}}},
			Rows: [][]any{{int32(1)}}}
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); !errors.Is(err, table.ErrIdentityColumn) || !strings.Contains(err.Error(), "overflows") {
			t.Errorf("err = %v, want ErrIdentityColumn: overflow", err)
		}
	})
}

// An append to a row-tracking table: its commit assigns baseRowId and
// defaultRowCommitVersion (txlog's rules, through table.Write).
func TestAppendToRowTrackingTable(t *testing.T) {
	ctx := context.Background()
	p := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{txlog.FeatureDomainMetadata, txlog.FeatureRowTracking}}
	tb := specTable(t, p, checkSchema, nil, map[string]string{"delta.enableRowTracking": "true"})
	for i := 0; i < 2; i++ {
		if _, err := tb.Write(ctx, checkBatch(int32(1), int32(2), int32(3)), table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := tb.Snapshot(ctx)
	var bases []int64
	for _, a := range snap.Files() {
		if a.BaseRowID == nil || a.DefaultRowCommitVersion == nil {
			t.Fatalf("%s lacks baseRowId/defaultRowCommitVersion", a.Path)
		}
		bases = append(bases, *a.BaseRowID*10+*a.DefaultRowCommitVersion)
	}
	if len(bases) != 2 || !(bases[0] == 1 && bases[1] == 32 || bases[0] == 32 && bases[1] == 1) {
		t.Errorf("baseRowId*10+defaultRowCommitVersion = %v, want {0*10+1, 3*10+2}", bases)
	}
	d, ok := snap.DomainMetadata(txlog.DomainRowTracking)
	if !ok || d.Configuration != `{"rowIdHighWaterMark":5}` {
		t.Errorf("delta.rowTracking domain %+v, want rowIdHighWaterMark 5", d)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// PROTOCOL.md "Add CDC File": an operation that only adds rows (or removes
// whole files) needs no change data files, so Write appends to and
// overwrites a table with delta.enableChangeDataFeed=true; Merge, which
// updates rows, is still refused by name.
func TestWriteToChangeDataFeedTable(t *testing.T) {
	ctx := context.Background()
	p := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}
	tb := specTable(t, p, checkSchema, nil, map[string]string{"delta.enableChangeDataFeed": "true"})
	if _, err := tb.Write(ctx, checkBatch(int32(1)), table.WriteOptions{}); err != nil {
		t.Fatalf("append: %v", err)
	}
	if _, err := tb.Write(ctx, checkBatch(int32(2)), table.WriteOptions{Mode: table.Overwrite}); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	_, err := tb.Merge(ctx, checkBatch(int32(3)), table.MergeOptions{Keys: []string{"id"}})
	var ufe *txlog.UnsupportedFeatureError
	if !errors.As(err, &ufe) || ufe.Feature != txlog.FeatureChangeDataFeed {
		t.Fatalf("merge: err = %v, want a changeDataFeed refusal", err)
	}
}
