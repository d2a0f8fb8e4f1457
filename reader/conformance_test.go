package reader

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// datResult is the outcome of one DAT case version.
type datResult struct {
	Case, Version string
	Rows          int
	Err           error
}

// runDATCase compares every expected version of one DAT case
// (delta/, expected/<version>/table_content.parquet) with what Rows
// returns, after sorting, types included.
func runDATCase(t *testing.T, dir string) []datResult {
	t.Helper()
	ctx := context.Background()
	versions, err := os.ReadDir(filepath.Join(dir, "expected"))
	if err != nil {
		t.Fatal(err)
	}
	var results []datResult
	for _, v := range versions {
		res := datResult{Case: filepath.Base(dir), Version: v.Name()}
		t.Run(v.Name(), func(t *testing.T) {
			n, err := checkDATVersion(ctx, dir, v.Name())
			res.Rows, res.Err = n, err
			if err != nil {
				t.Error(err)
			}
		})
		results = append(results, res)
	}
	return results
}

func checkDATVersion(ctx context.Context, dir, version string) (int, error) {
	expDir := filepath.Join(dir, "expected", version)
	var meta struct {
		Version int64 `json:"version"`
	}
	b, err := os.ReadFile(filepath.Join(expDir, "table_version_metadata.json"))
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return 0, err
	}
	snap, err := Open(ctx, filepath.Join(dir, "delta"), AtVersion(meta.Version))
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	if snap.Version() != meta.Version {
		return 0, fmt.Errorf("snapshot version %d, expected %d", snap.Version(), meta.Version)
	}
	expSchema, expRows, err := readExpected(ctx, filepath.Join(expDir, "table_content.parquet"))
	if err != nil {
		return 0, err
	}
	// Our rows, projected in the expected file's column order.
	var cols []string
	for _, f := range expSchema.Fields {
		cols = append(cols, f.Name)
	}
	var got []string
	for r, err := range snap.Rows(ctx, ReadOptions{Columns: cols}) {
		if err != nil {
			return len(got), err
		}
		got = append(got, canonRow(r.Values))
	}
	want := make([]string, len(expRows))
	for i, r := range expRows {
		want[i] = canonRow(r)
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(got) != len(want) {
		return len(got), fmt.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return len(got), fmt.Errorf("sorted row %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
	return len(got), nil
}

func TestDATLocal(t *testing.T) {
	root := localDir(t, "dat")
	cases, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) { runDATCase(t, filepath.Join(root, c.Name())) })
	}
}

// readExpected reads the expected rows: a Parquet file, or a directory of
// part-*.parquet files as Spark writes them.
func readExpected(ctx context.Context, p string) (*schema.StructType, [][]any, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	dir, names := filepath.Dir(p), []string{filepath.Base(p)}
	if fi.IsDir() {
		dir, names = p, nil
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".parquet") && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
	}
	st, err := storage.Open(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	var sch *schema.StructType
	var rows [][]any
	for _, n := range names {
		pf, err := parquetio.OpenFile(ctx, st, n, -1)
		if err != nil {
			return nil, nil, err
		}
		if sch == nil {
			sch = pf.Schema()
		}
		rs, err := pf.ReadAll(ctx, sch, parquetio.ReadOptions{})
		pf.Close()
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, rs...)
	}
	if sch == nil {
		return nil, nil, fmt.Errorf("no expected parquet files in %s", p)
	}
	return sch, rows, nil
}
