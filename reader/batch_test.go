package reader

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
)

// batchStrings reads with Batches and renders every row (Column.Value) as
// canonRow does, checking each batch's shape: Len rows, every column's
// slice of its type Len long, Nulls nil or Len long.
func batchStrings(t *testing.T, s *Snapshot, o ReadOptions) ([]string, error) {
	t.Helper()
	var out []string
	for b, err := range s.Batches(context.Background(), o) {
		if err != nil {
			return out, err
		}
		if b.Len < 1 || len(b.Columns) != len(b.Schema.Fields) {
			t.Fatalf("batch of %d rows, %d columns for %d fields", b.Len, len(b.Columns), len(b.Schema.Fields))
		}
		for i, c := range b.Columns {
			f := b.Schema.Fields[i]
			var n int
			switch parquetio.KindOf(f.Type) {
			case parquetio.VecInt64:
				n = len(c.Int64)
			case parquetio.VecFloat64:
				n = len(c.Float64)
			case parquetio.VecString:
				n = len(c.String)
			case parquetio.VecBool:
				n = len(c.Bool)
			default:
				n = len(c.Values)
			}
			if n != b.Len || (c.Nulls != nil && len(c.Nulls) != b.Len) || c.Type != f.Type {
				t.Fatalf("column %s (%s): %d values, %d null flags, type %v, for %d rows", f.Name, schema.FormatType(f.Type), n, len(c.Nulls), c.Type, b.Len)
			}
		}
		vals := make([]any, len(b.Columns))
		for r := range b.Len {
			for i := range b.Columns {
				vals[i] = b.Columns[i].Value(r)
				if vals[i] == nil && !b.Columns[i].IsNull(r) {
					t.Fatalf("column %s row %d: nil value not flagged null", b.Schema.Fields[i].Name, r)
				}
			}
			out = append(out, canonRow(vals))
		}
	}
	return out, nil
}

func rowStrings(t *testing.T, s *Snapshot, o ReadOptions) ([]string, error) {
	t.Helper()
	recs, err := readAll(t, s, o)
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = canonRow(r.Values)
	}
	return out, err
}

// assertBatchesMatchRows: Batches gives Rows' values, in Rows' order, for
// the whole table and for projections (reversed, partition columns only),
// a predicate, a limit and one worker. It returns the rows read.
func assertBatchesMatchRows(t *testing.T, s *Snapshot) int {
	t.Helper()
	var names []string
	for _, f := range s.Schema().Fields {
		names = append(names, f.Name)
	}
	rev := slices.Clone(names)
	slices.Reverse(rev)
	opts := map[string]ReadOptions{
		"all":      {},
		"reversed": {Columns: rev},
		"limit 3":  {Limit: 3, Workers: 1},
		"1 worker": {Workers: 1},
	}
	if len(names) > 0 {
		opts["where not null"] = ReadOptions{Where: "`" + names[0] + "` IS NOT NULL"}
	}
	if parts := s.PartitionColumns(); len(parts) > 0 {
		opts["partitions only"] = ReadOptions{Columns: parts}
		opts["where partition not null"] = ReadOptions{Where: "`" + parts[0] + "` IS NOT NULL", Columns: rev}
	}
	files, err := s.Files(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range files {
		size += f.Size
	}
	if size > 4<<20 { // a big corpus table (1.1M rows): its first rows only
		opts = map[string]ReadOptions{"limit 20000": {Limit: 20_000}, "reversed, limit 20000": {Columns: rev, Limit: 20_000}}
	}
	n := 0
	for name, o := range opts {
		want, werr := rowStrings(t, s, o)
		got, gerr := batchStrings(t, s, o)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: Rows error %v, Batches error %v", name, werr, gerr)
		}
		if werr != nil {
			t.Logf("%s: both fail: %v", name, werr)
			continue
		}
		if !slices.Equal(got, want) {
			if len(got) != len(want) {
				t.Fatalf("%s: Batches gave %d rows, Rows %d", name, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: row %d:\n batches %s\n rows    %s", name, i, got[i], want[i])
				}
			}
		}
		n = max(n, len(want))
	}
	return n
}

// batchTables checks every Delta table directly under root (its delta/
// subdirectory for DAT cases).
func batchTables(t *testing.T, root string) {
	cases, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		dir := filepath.Join(root, c.Name())
		if _, err := os.Stat(filepath.Join(dir, "delta")); err == nil {
			dir = filepath.Join(dir, "delta")
		}
		t.Run(c.Name(), func(t *testing.T) {
			s, err := Open(context.Background(), dir)
			if err != nil {
				t.Skipf("not a readable table: %v", err)
			}
			defer s.Close()
			t.Logf("%d rows", assertBatchesMatchRows(t, s))
			checked++
		})
	}
	if checked == 0 {
		t.Fatalf("no table checked under %s", root)
	}
}

// TestBatchesMatchRowsLocal: the reader's test tables (DAT, delta-rs: deletion
// vectors, partitions, column mapping, null partitions, edge timestamps).
func TestBatchesMatchRowsLocal(t *testing.T) {
	for _, sub := range []string{"dat", "deltars"} {
		t.Run(sub, func(t *testing.T) { batchTables(t, localDir(t, sub)) })
	}
}

// TestBatchesMatchRowsCorpus: the engine corpus in ../shared/testdata.
func TestBatchesMatchRowsCorpus(t *testing.T) {
	for _, sub := range []string{"dat", "delta-rs"} {
		t.Run(sub, func(t *testing.T) { batchTables(t, sharedDir(t, sub)) })
	}
}

// TestBatchesRowGroupsInParallel: a file of several row groups read as
// batches with several workers gives every row once, in order, and batches
// never span row groups.
func TestBatchesRowGroupsInParallel(t *testing.T) {
	dir, f := idTable(t, 50_000, 64<<10)
	if n := rowGroups(t, dir, f); n < 4 {
		t.Fatalf("%d row groups", n)
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var next int64
	for b, err := range s.Batches(context.Background(), ReadOptions{Columns: []string{"id"}, Workers: 4}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range b.Columns[0].Int64 {
			if id != next {
				t.Fatalf("id %d, want %d", id, next)
			}
			next++
		}
	}
	if next != 50_000 {
		t.Fatalf("%d rows", next)
	}
	assertBatchesMatchRows(t, s)
}
