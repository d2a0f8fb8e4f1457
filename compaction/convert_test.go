package compaction

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// A file-sink directory is converted incrementally into a Delta table in
// place; OPTIMIZE and VACUUM on it never lose or resurrect rows, even across
// a file-sink compaction batch.
func TestConvertFileSink(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fo := filesink.DefaultOptions()
	fo.PartitionColumns = []string{"origin"}
	fo.CompactInterval = 5
	fo.DeleteExpiredLog = false
	fs, err := filesink.New(ctx, st, fo)
	if err != nil {
		t.Fatal(err)
	}
	var written [][]any
	batch := int64(0)
	addBatches := func(n int) {
		for range n {
			rows := flightsRows(batch*20, 20, origins)
			if _, err := fs.AddBatch(ctx, batch, &schema.Batch{Schema: flightsSchema(), Rows: rows}); err != nil {
				t.Fatal(err)
			}
			written = append(written, rows...)
			batch++
		}
	}
	tb, err := table.OpenStore(st, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) *txlog.Snapshot {
		t.Helper()
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got, err := readSnapshot(ctx, st, snap)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		// The converted schema puts the partition column last.
		sch, err := snap.Schema()
		if err != nil {
			t.Fatal(err)
		}
		src := flightsSchema()
		want := make([][]any, len(written))
		for i, r := range written {
			want[i] = make([]any, len(sch.Fields))
			for j, f := range sch.Fields {
				want[i][j] = r[src.FieldIndex(f.Name)]
			}
		}
		if len(got) != len(written) || !equalRowSets(rowSet(got), rowSet(want)) {
			t.Fatalf("%s: %d rows in the table, %d written", step, len(got), len(written))
		}
		return snap
	}

	addBatches(3)
	res, err := Convert(ctx, tb, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.ToBatch != 2 || res.NumFiles != 9 || res.Version != 0 {
		t.Fatalf("first convert %+v", res)
	}
	snap := check("first convert")
	if pc := snap.Metadata().PartitionColumns; len(pc) != 1 || pc[0] != "origin" {
		t.Fatalf("partition columns %v", pc)
	}
	if v, _ := snap.TxnVersion(ConvertAppID); v != 2 {
		t.Fatalf("txn %d", v)
	}

	res, err = Convert(ctx, tb, ConvertOptions{})
	if err != nil || res.Version != -1 {
		t.Fatalf("repeated convert: %+v %v", res, err)
	}

	addBatches(1)
	res, err = Convert(ctx, tb, ConvertOptions{})
	if err != nil || res.NumFiles != 3 || res.Created {
		t.Fatalf("incremental convert: %+v %v", res, err)
	}
	check("incremental convert")

	// OPTIMIZE the Delta table: the file-sink files are tombstoned.
	if _, ores, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{}); err != nil || ores.NumRemovedFiles != 12 {
		t.Fatalf("optimize: %+v %v", ores, err)
	}
	check("optimize")

	// Batches 4..6: batch 4 is a compaction batch (interval 5) repeating
	// every file, including those OPTIMIZE removed.
	addBatches(3)
	res, err = Convert(ctx, tb, ConvertOptions{})
	if err != nil || res.NumFiles != 9 {
		t.Fatalf("convert across a compaction batch: %+v %v", res, err)
	}
	check("convert across a compaction batch")

	// VACUUM far in the future: the compacted-away file-sink files stay
	// (the sink log names them); the table still reads, and so does the
	// file-sink directory.
	addBatches(1)
	if _, err := Vacuum(ctx, tb, VacuumOptions{Now: func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }}); !errors.Is(err, ErrUnconvertedBatches) {
		t.Fatalf("vacuum before converting batch 7: %v", err)
	}
	if _, err := Convert(ctx, tb, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	vres, err := Vacuum(ctx, tb, VacuumOptions{Now: func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if vres.FilesDeleted != 0 {
		t.Fatalf("vacuum deleted files the sink log names: %v", vres.Files)
	}
	check("vacuum")
	l, err := filesink.ListFiles(ctx, st, fo)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Files {
		if _, err := st.Stat(ctx, f.Key); err != nil {
			t.Fatalf("file-sink file %s: %v", f.Key, err)
		}
	}
}

func TestConvertRefusesPlainDirectory(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTable(t, nil, nil)
	if _, err := Convert(ctx, tb, ConvertOptions{}); !errors.Is(err, ErrNotFileSink) {
		t.Fatalf("convert of a directory without _spark_metadata: %v", err)
	}
}
