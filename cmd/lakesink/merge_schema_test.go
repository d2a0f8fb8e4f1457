package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// writeParquetInput writes rows of schema as the Parquet file dir/name.
func writeParquetInput(t *testing.T, dir, name string, sch *schema.StructType, rows [][]any) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := parquetio.NewFileWriter(ctx, st, name, sch, parquetio.DefaultWriteOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// scanLines returns the table's rows as sorted NDJSON lines.
func scanLines(t *testing.T, tbl string) []string {
	t.Helper()
	out, e, code := runCLI(t, "scan", tbl, "--json")
	if code != 0 {
		t.Fatalf("scan %s: exit %d %s", tbl, code, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines)
	return lines
}

// TestIngestMergeSchemaAddsNewColumns is issue 14 item 2: with the table
// existing and no --schema, ingest gave the source the table's schema and a
// new input column was dropped with exit 0, with or without --merge-schema.
// Now, through the whole CLI path and for JSON and Parquet input: without
// --merge-schema the batch fails naming file, field and the flag, and the
// table is unchanged; with it the table gains the column, nullable, and the
// new values land; --schema-evolution-mode none drops them on request.
func TestIngestMergeSchemaAddsNewColumns(t *testing.T) {
	narrow := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong, Nullable: true}}}
	wide := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true}, {Name: "extra", Type: schema.TypeString, Nullable: true}}}
	inputs := []struct {
		format     string
		first, new string // file names
		write      func(t *testing.T, src string, name string, wideRow bool)
	}{
		{"json", "a.json", "b.json", func(t *testing.T, src, name string, wideRow bool) {
			line := `{"id":1}`
			if wideRow {
				line = `{"id":2,"extra":"x"}`
			}
			if err := os.WriteFile(filepath.Join(src, name), []byte(line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"parquet", "a.parquet", "b.parquet", func(t *testing.T, src, name string, wideRow bool) {
			if wideRow {
				writeParquetInput(t, src, name, wide, [][]any{{int64(2), "x"}})
			} else {
				writeParquetInput(t, src, name, narrow, [][]any{{int64(1)}})
			}
		}},
	}
	for _, in := range inputs {
		t.Run(in.format, func(t *testing.T) {
			dir := t.TempDir()
			src, tbl := filepath.Join(dir, "src"), filepath.Join(dir, "t")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			ingest := func(extra ...string) (string, int) {
				args := append([]string{"ingest", "--source", src, "--format", in.format, "--checkpoint", filepath.Join(dir, "chk"), "--table", tbl, "-q"}, extra...)
				_, e, code := runCLI(t, args...)
				return e, code
			}
			in.write(t, src, in.first, false)
			if e, code := ingest(); code != 0 {
				t.Fatalf("first ingest: exit %d %s", code, e)
			}
			in.write(t, src, in.new, true)

			e, code := ingest()
			for _, want := range []string{in.new, "field extra", "--merge-schema"} {
				if code != 1 || !strings.Contains(e, want) {
					t.Fatalf("new column without --merge-schema: exit %d %q; want 1 naming %q", code, e, want)
				}
			}
			if got := scanLines(t, tbl); !slices.Equal(got, []string{`{"id":1}`}) {
				t.Fatalf("table after the refused batch: %q; want only the first row", got)
			}

			if e, code := ingest("--merge-schema"); code != 0 {
				t.Fatalf("ingest --merge-schema: exit %d %s", code, e)
			}
			if got, want := scanLines(t, tbl), []string{`{"id":1,"extra":null}`, `{"id":2,"extra":"x"}`}; !slices.Equal(got, want) {
				t.Fatalf("rows after --merge-schema: %q; want %q", got, want)
			}
			out, e, code := runCLI(t, "describe", tbl, "--json")
			if want := `"fields":[{"metadata":{},"name":"id","nullable":true,"type":"long"},{"metadata":{},"name":"extra","nullable":true,"type":"string"}]`; code != 0 || !strings.Contains(out, want) {
				t.Fatalf("describe after --merge-schema: exit %d %s %s; want the schema %s", code, out, e, want)
			}
		})
	}
	t.Run("file sink hint", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		os.MkdirAll(src, 0o755)
		os.WriteFile(filepath.Join(src, "a.json"), []byte(`{"id":1}`+"\n"), 0o644)
		os.WriteFile(filepath.Join(src, "b.json"), []byte(`{"id":2,"extra":"x"}`+"\n"), 0o644)
		// One run, one file per batch: batch 0 fixes the inferred schema of
		// the run, batch 1 brings a new column.
		args := []string{"ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk"), "--file-sink", filepath.Join(dir, "out"), "-q", "--max-files-per-trigger", "1"}
		_, e, code := runCLI(t, args...)
		if code != 1 || !strings.Contains(e, "b.json line 1 field extra") || !strings.Contains(e, "--schema-evolution-mode none") || strings.Contains(e, "--merge-schema") {
			t.Fatalf("new column into a file sink: exit %d %q; want 1 naming the field and --schema-evolution-mode none, not --merge-schema", code, e)
		}
		if _, e, code := runCLI(t, append(args, "--merge-schema")...); code != 1 || !strings.Contains(e, "file sink") {
			t.Fatalf("--merge-schema with --file-sink: exit %d %q; want 1 saying a file sink has no schema to evolve", code, e)
		}
	})
	t.Run("none drops on request", func(t *testing.T) {
		dir := t.TempDir()
		src, tbl := filepath.Join(dir, "src"), filepath.Join(dir, "t")
		os.MkdirAll(src, 0o755)
		os.WriteFile(filepath.Join(src, "a.json"), []byte(`{"id":1}`+"\n"), 0o644)
		args := []string{"ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk"), "--table", tbl, "-q"}
		if _, e, code := runCLI(t, args...); code != 0 {
			t.Fatalf("first ingest: exit %d %s", code, e)
		}
		os.WriteFile(filepath.Join(src, "b.json"), []byte(`{"id":2,"extra":"x"}`+"\n"), 0o644)
		if _, e, code := runCLI(t, append(args, "--schema-evolution-mode", "none")...); code != 0 {
			t.Fatalf("--schema-evolution-mode none: exit %d %s", code, e)
		}
		if got, want := scanLines(t, tbl), []string{`{"id":1}`, `{"id":2}`}; !slices.Equal(got, want) {
			t.Fatalf("rows: %q; want %q", got, want)
		}
		if _, e, code := runCLI(t, append(args, "--schema-evolution-mode", "none", "--merge-schema")...); code != 1 || !strings.Contains(e, "give one of them") {
			t.Fatalf("--merge-schema with mode none: exit %d %q; want 1", code, e)
		}
	})
}
