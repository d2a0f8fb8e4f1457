package compaction

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

var dvTestSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: true},
	{Name: "v", Type: schema.TypeString, Nullable: true},
}}

// dvTable: a table with delta.enableDeletionVectors=true where two merges
// updated rows of the first file, so its add carries a second deletion
// vector and the first one is named only by a remove (the file is re-added
// with the new DV, not rewritten).
func dvTable(t *testing.T) (*table.Table, storage.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, fmt.Sprintf("mem://compaction-%d/dv", memSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tb, err := table.OpenStore(st, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
	if err != nil {
		t.Fatal(err)
	}
	opts := table.MergeOptions{Keys: []string{"id"}, Properties: map[string]string{txlog.PropEnableDeletionVectors: "true"}}
	for _, rows := range [][][]any{
		{{int64(1), "a"}, {int64(2), "a"}, {int64(3), "a"}, {int64(4), "a"}},
		{{int64(2), "u"}},
		{{int64(3), "w"}},
	} {
		if _, err := tb.Merge(ctx, &schema.Batch{Schema: dvTestSchema, Rows: rows}, opts); err != nil {
			t.Fatal(err)
		}
		opts.Properties = nil
	}
	return tb, st
}

func dvRows(t *testing.T, st storage.Store) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, st.URL(), reader.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var out []string
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id", "v"}}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v|%v", rec.Values[0], rec.Values[1]))
	}
	slices.Sort(out)
	return out
}

func dvFiles(t *testing.T, st storage.Store) []string {
	t.Helper()
	var out []string
	for fi, err := range st.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(fi.Path, "deletion_vector_") {
			out = append(out, fi.Path)
		}
	}
	slices.Sort(out)
	return out
}

// TestVacuumDeletionVectors: VACUUM (full and lite) runs on a table whose
// merges wrote deletion vectors; past the retention it deletes the DV file
// only a remove names and keeps the one the live add names (PROTOCOL.md
// "Deletion Vectors"; Delta's VacuumCommand keeps the DVs of live adds).
func TestVacuumDeletionVectors(t *testing.T) {
	for _, mode := range []VacuumMode{VacuumFull, VacuumLite} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			tb, st := dvTable(t)
			want := []string{"1|a", "2|u", "3|w", "4|a"}
			if got := dvRows(t, st); !slices.Equal(got, want) {
				t.Fatalf("rows before vacuum %v, want %v", got, want)
			}
			before := dvFiles(t, st)
			if len(before) != 2 {
				t.Fatalf("DV files before vacuum %v, want 2", before)
			}
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var live string
			for _, a := range snap.Files() {
				if k, ok, err := dvKey(snap, a.DeletionVector); err != nil {
					t.Fatal(err)
				} else if ok {
					live = k
				}
			}
			if live == "" {
				t.Fatal("no live add has a deletion vector")
			}
			later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
			res, err := Vacuum(ctx, tb, VacuumOptions{Mode: mode, Now: later})
			if err != nil {
				t.Fatal(err)
			}
			if got := dvFiles(t, st); !slices.Equal(got, []string{live}) {
				t.Errorf("DV files after vacuum %v, want only the live %s", got, live)
			}
			// The data file stays live (merges re-add it with a new DV): only
			// the replaced DV file goes.
			if res.FilesDeleted != 1 || res.Files[0].Path == live || !slices.Contains(before, res.Files[0].Path) {
				t.Errorf("deleted %d files (%v), want only the replaced DV file of %v", res.FilesDeleted, res.Files, before)
			}
			if got := dvRows(t, st); !slices.Equal(got, want) {
				t.Fatalf("rows after vacuum %v, want %v", got, want)
			}
		})
	}
}

// TestOptimizeDeletionVectors: OPTIMIZE rewrites a file with a deletion
// vector without its deleted rows; the new add has no DV, the remove carries
// the old add's DV (PROTOCOL.md "Add File and Remove File"), numRecords is
// the live rows, and a VACUUM past the retention then deletes the old data
// file and every DV file, with the rows unchanged.
func TestOptimizeDeletionVectors(t *testing.T) {
	ctx := context.Background()
	tb, st := dvTable(t)
	want := []string{"1|a", "2|u", "3|w", "4|a"}
	before, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dvOf := map[string]*txlog.DeletionVector{}
	for _, a := range before.Files() {
		if a.DeletionVector != nil {
			dvOf[a.Path] = a.DeletionVector
		}
	}
	if len(dvOf) != 1 {
		t.Fatalf("files with a DV before OPTIMIZE: %v, want 1", dvOf)
	}
	if _, _, err := Optimize(ctx, tb, PlanOptions{}, DefaultExecOptions()); err != nil {
		t.Fatal(err)
	}
	if got := dvRows(t, st); !slices.Equal(got, want) {
		t.Fatalf("rows after OPTIMIZE %v, want %v", got, want)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var records int64
	for _, a := range snap.Files() {
		if a.DeletionVector != nil {
			t.Errorf("file %s still has a DV after OPTIMIZE", a.Path)
		}
		if dvOf[a.Path] != nil {
			t.Errorf("file %s with a DV is still live", a.Path)
		}
		n, ok := numRecords(a.Stats)
		if !ok {
			t.Fatalf("file %s: no numRecords in %s", a.Path, a.Stats)
		}
		records += n
	}
	if records != int64(len(want)) {
		t.Errorf("numRecords of the live files sum to %d, want %d", records, len(want))
	}
	found := false
	for _, r := range snap.Tombstones() {
		// Only OPTIMIZE removed the file with its latest DV (merges
		// removed it with older ones).
		if d := dvOf[r.Path]; d != nil && r.DeletionVector != nil && r.DeletionVector.UniqueID() == d.UniqueID() {
			found = true
		}
	}
	if !found {
		t.Error("the remove of the rewritten file does not carry its deletion vector")
	}
	later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	if _, err := Vacuum(ctx, tb, VacuumOptions{Now: later}); err != nil {
		t.Fatal(err)
	}
	if got := dvFiles(t, st); len(got) != 0 {
		t.Errorf("DV files after OPTIMIZE and VACUUM: %v, want none", got)
	}
	for p := range dvOf {
		if _, err := st.Stat(ctx, p); err == nil {
			t.Errorf("rewritten data file %s survived VACUUM", p)
		}
	}
	if got := dvRows(t, st); !slices.Equal(got, want) {
		t.Fatalf("rows after VACUUM %v, want %v", got, want)
	}
}
