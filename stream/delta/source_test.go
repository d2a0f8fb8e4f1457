package delta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

var testSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: true},
	{Name: "part", Type: schema.TypeString, Nullable: true},
}}

type bronze struct {
	t    *testing.T
	tbl  *table.Table
	next int64
}

func newBronze(t *testing.T) *bronze {
	t.Helper()
	ctx := context.Background()
	tbl, err := table.Create(ctx, t.TempDir(), table.CreateOptions{Schema: testSchema, PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return &bronze{t: t, tbl: tbl}
}

// appendRows commits one append of n rows (one file); it returns the version.
func (b *bronze) appendRows(n int) int64 {
	b.t.Helper()
	batch := &schema.Batch{Schema: testSchema}
	for range n {
		batch.Rows = append(batch.Rows, []any{b.next, "p"})
		b.next++
	}
	res, err := b.tbl.Write(context.Background(), batch, table.WriteOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	return res.Version
}

// optimize commits what OPTIMIZE commits for one file: the file removed and
// a byte copy of it added, both with dataChange=false. It returns the version.
func (b *bronze) optimize() int64 {
	b.t.Helper()
	ctx := context.Background()
	l := b.tbl.Log()
	snap, err := l.Snapshot(ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	old := *snap.Files()[0]
	key, err := snap.FileKey(old.Path)
	if err != nil {
		b.t.Fatal(err)
	}
	data, err := b.tbl.Store().Read(ctx, key)
	if err != nil {
		b.t.Fatal(err)
	}
	newKey := "part=p/optimized-" + fmt.Sprint(snap.Version()) + ".parquet"
	if err := b.tbl.Store().Put(ctx, newKey, data); err != nil {
		b.t.Fatal(err)
	}
	ts := int64(1)
	add := old
	add.Path, add.DataChange = newKey, false
	tx := l.Begin(snap)
	tx.ReadFiles(old.Path)
	tx.Add(txlog.Action{Remove: &txlog.Remove{Path: old.Path, DeletionTimestamp: &ts, DataChange: false, PartitionValues: old.PartitionValues, Size: &old.Size}},
		txlog.Action{Add: &add})
	v, err := tx.Commit(ctx, "OPTIMIZE", nil, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// deleteKey commits a Merge deleting the row id (a change commit).
func (b *bronze) deleteKey(id int64) int64 {
	b.t.Helper()
	batch := &schema.Batch{Schema: &schema.StructType{Fields: append(slices.Clone(testSchema.Fields),
		schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true})}, Rows: [][]any{{id, "p", "d"}}}
	res, err := b.tbl.Merge(context.Background(), batch, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"})
	if err != nil {
		b.t.Fatal(err)
	}
	return res.Version
}

type run struct {
	batches [][]int64
	err     error
}

// runQuery streams the table with AvailableNow into a collector.
func runQuery(t *testing.T, chk storage.Store, o Options, maxFiles int, failBatch int64) run {
	t.Helper()
	ctx := context.Background()
	src, err := NewSource(o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var r run
	so := stream.DefaultOptions()
	so.CheckpointStore, so.Source, so.MaxFilesPerTrigger = chk, src, maxFiles
	so.ForeachBatch = func(_ context.Context, id int64, b *schema.Batch) error {
		if id == failBatch {
			return errors.New("simulated crash")
		}
		var ids []int64
		for _, row := range b.Rows {
			ids = append(ids, row[0].(int64))
		}
		r.batches = append(r.batches, ids)
		return nil
	}
	r.err = stream.Run(ctx, so)
	return r
}

func openStore(t *testing.T) storage.Store {
	t.Helper()
	st, err := storage.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func flat(r run) []int64 { return slices.Concat(r.batches...) }

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// The starting snapshot's files, then each later commit's; OPTIMIZE gives
// no rows; a restart continues after the last batch; every row once.
func TestSnapshotThenCommitsExactlyOnce(t *testing.T) {
	b := newBronze(t)
	b.appendRows(2)
	b.appendRows(2)
	b.appendRows(2)
	chk := openStore(t)
	o := DefaultOptions(b.tbl.URL())
	r := runQuery(t, chk, o, 2, -1)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.batches) != 2 || len(flat(r)) != 6 {
		t.Fatalf("first run: batches %v, want 2 batches (2 files, then 1) of 6 rows", r.batches)
	}
	got := slices.Sorted(slices.Values(flat(r)))
	if !slices.Equal(got, seq(0, 6)) {
		t.Fatalf("first run rows %v", got)
	}
	vOpt := b.optimize()
	b.appendRows(3)
	r2 := runQuery(t, chk, o, 0, -1)
	if r2.err != nil {
		t.Fatal(r2.err)
	}
	if !slices.Equal(flat(r2), seq(6, 9)) {
		t.Fatalf("second run rows %v, want 6..8 (OPTIMIZE at version %d gives none)", r2.batches, vOpt)
	}
	// The offsets are DeltaSourceOffset JSON with the table id.
	data, err := chk.Read(context.Background(), "offsets/0")
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := b.tbl.Snapshot(context.Background())
	want := fmt.Sprintf(`{"sourceVersion":1,"reservoirId":"%s","reservoirVersion":3,"index":1,"isStartingVersion":true}`, snap.Metadata().ID)
	if !strings.HasSuffix(string(data), "\n"+want) {
		t.Fatalf("offsets/0 =\n%s\nwant last line %s", data, want)
	}
}

// A batch that failed before its commit reruns with exactly its files,
// even when the table grew meanwhile.
func TestRerunReadsTheSameFiles(t *testing.T) {
	b := newBronze(t)
	chk := openStore(t)
	o := DefaultOptions(b.tbl.URL())
	o.StartingVersion = 1
	b.appendRows(1) // v1
	b.appendRows(1) // v2
	r := runQuery(t, chk, o, 1, 1)
	if r.err == nil || len(r.batches) != 1 || !slices.Equal(r.batches[0], []int64{0}) {
		t.Fatalf("first run: %v, %v; want batch 0 = [0] then the crash", r.batches, r.err)
	}
	b.appendRows(1) // v3
	r2 := runQuery(t, chk, o, 0, -1)
	if r2.err != nil {
		t.Fatal(r2.err)
	}
	if len(r2.batches) != 2 || !slices.Equal(r2.batches[0], []int64{1}) || !slices.Equal(r2.batches[1], []int64{2}) {
		t.Fatalf("rerun: %v, want [[1] [2]]: batch 1 reruns with its one file", r2.batches)
	}
}

// --max-bytes-per-trigger: a soft cap, at least one file per batch.
func TestMaxBytesPerTrigger(t *testing.T) {
	b := newBronze(t)
	for range 3 {
		b.appendRows(1)
	}
	src, err := NewSource(DefaultOptions(b.tbl.URL()))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if err := src.Start(ctx, openStore(t)); err != nil {
		t.Fatal(err)
	}
	var ends []string
	for range 4 {
		end, err := src.LatestOffset(ctx, source.ReadLimit{MaxBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, end)
	}
	for i, e := range ends[:2] {
		o, _ := ParseOffset(e)
		if o.Index != int64(i) || !o.IsStartingVersion {
			t.Fatalf("plan %d = %s, want index %d of the starting snapshot", i, e, i)
		}
	}
	// The snapshot's last file completes it: the offset moves to the next
	// version, as Delta's buildOffsetFromIndexedFile does for isLast.
	if o, _ := ParseOffset(ends[2]); o.ReservoirVersion != 4 || o.Index != BaseIndex || o.IsStartingVersion {
		t.Fatalf("plan 2 = %s, want version 4 index -1 (snapshot done)", ends[2])
	}
	if ends[3] != ends[2] {
		t.Fatalf("plan 3 = %s, want %s again (no new data)", ends[3], ends[2])
	}
}

// A commit removing data fails the query naming the version; with
// SkipChangeCommits it is skipped and the stream goes on.
func TestChangeCommit(t *testing.T) {
	b := newBronze(t)
	b.appendRows(2)
	chk := openStore(t)
	o := DefaultOptions(b.tbl.URL())
	if r := runQuery(t, chk, o, 0, -1); r.err != nil {
		t.Fatal(r.err)
	}
	vDel := b.deleteKey(0)
	b.appendRows(1)
	r := runQuery(t, chk, o, 0, -1)
	if !errors.Is(r.err, ErrChangeCommit) || !strings.Contains(r.err.Error(), fmt.Sprintf("version %d ", vDel)) {
		t.Fatalf("err = %v, want ErrChangeCommit naming version %d", r.err, vDel)
	}
	o.SkipChangeCommits = true
	r = runQuery(t, chk, o, 0, -1)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !slices.Equal(flat(r), []int64{2}) {
		t.Fatalf("with SkipChangeCommits: %v, want [2] (the merge's rewrite skipped)", r.batches)
	}
}

// A table deleted and recreated under a checkpoint fails naming both ids.
func TestTableRecreated(t *testing.T) {
	b := newBronze(t)
	b.appendRows(1)
	chk := openStore(t)
	o := DefaultOptions(b.tbl.URL())
	if r := runQuery(t, chk, o, 0, -1); r.err != nil {
		t.Fatal(r.err)
	}
	ctx := context.Background()
	snap, _ := b.tbl.Snapshot(ctx)
	oldID := snap.Metadata().ID
	for fi, err := range b.tbl.Store().List(ctx, "_delta_log/", "") {
		if err != nil {
			t.Fatal(err)
		}
		if err := b.tbl.Store().Delete(ctx, fi.Path); err != nil {
			t.Fatal(err)
		}
	}
	t2, err := table.Create(ctx, b.tbl.URL(), table.CreateOptions{Schema: testSchema})
	if err != nil {
		t.Fatal(err)
	}
	snap2, _ := t2.Snapshot(ctx)
	t2.Close()
	r := runQuery(t, chk, o, 0, -1)
	if !errors.Is(r.err, ErrTableChanged) || !strings.Contains(r.err.Error(), oldID) || !strings.Contains(r.err.Error(), snap2.Metadata().ID) {
		t.Fatalf("err = %v, want ErrTableChanged naming %s and %s", r.err, oldID, snap2.Metadata().ID)
	}
}

// A commit removed by log cleanup fails naming its version.
func TestVersionRemovedByCleanup(t *testing.T) {
	b := newBronze(t)
	b.appendRows(1) // v1
	chk := openStore(t)
	o := DefaultOptions(b.tbl.URL())
	if r := runQuery(t, chk, o, 0, -1); r.err != nil {
		t.Fatal(r.err)
	}
	b.appendRows(1) // v2
	b.appendRows(1) // v3
	ctx := context.Background()
	snap, err := b.tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.tbl.Log().Checkpoint(ctx, snap); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{0, 1, 2} {
		if err := b.tbl.Store().Delete(ctx, txlog.CommitPath(v)); err != nil {
			t.Fatal(err)
		}
	}
	r := runQuery(t, chk, o, 0, -1)
	if !errors.Is(r.err, ErrVersionUnavailable) || !strings.Contains(r.err.Error(), "version 2 ") {
		t.Fatalf("err = %v, rows %v; want ErrVersionUnavailable naming version 2", r.err, r.batches)
	}
}

// Spark's DeltaSourceOffset JSON, as Delta 2.x/3.x writes it, is read and
// written back byte for byte; Delta 3's metadata-change indexes and newer
// source versions are handled.
func TestOffsetJSONAsSparkWritesIt(t *testing.T) {
	spark := `{"sourceVersion":1,"reservoirId":"9d7f4a8e-3b52-4c0f-8a0e-2b5d1c6e7f80","reservoirVersion":7,"index":3,"isStartingVersion":false}`
	o, err := ParseOffset(spark)
	if err != nil {
		t.Fatal(err)
	}
	want := Offset{SourceVersion: 1, ReservoirID: "9d7f4a8e-3b52-4c0f-8a0e-2b5d1c6e7f80", ReservoirVersion: 7, Index: 3}
	if o != want || o.String() != spark {
		t.Fatalf("parsed %+v, rendered %s", o, o.String())
	}
	v3, err := ParseOffset(`{"sourceVersion":3,"reservoirId":"x","reservoirVersion":2,"index":-20,"isStartingVersion":false}`)
	if err != nil || v3.Index != BaseIndex {
		t.Fatalf("sourceVersion 3 with METADATA_CHANGE_INDEX: %+v, %v", v3, err)
	}
	for _, bad := range []string{
		`{"sourceVersion":4,"reservoirId":"x","reservoirVersion":2,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirVersion":2,"index":-1,"isStartingVersion":false}`,
		`{"logOffset":3}`,
		`{"sourceVersion":1,"reservoirId":"x","reservoirVersion":2,"index":-5,"isStartingVersion":false}`,
	} {
		if _, err := ParseOffset(bad); !errors.Is(err, ErrBadOffset) {
			t.Errorf("ParseOffset(%s) = %v, want ErrBadOffset", bad, err)
		}
	}
}

// StartingVersion and StartingTimestamp read commits from there, no
// snapshot; the starting point is recorded once: a restart with other
// options keeps it.
func TestStartingVersionAndTimestamp(t *testing.T) {
	b := newBronze(t)
	b.appendRows(1)       // v1: id 0
	v2 := b.appendRows(1) // v2: id 1
	b.appendRows(1)       // v3: id 2
	o := DefaultOptions(b.tbl.URL())
	o.StartingVersion = v2
	chk := openStore(t)
	r := runQuery(t, chk, o, 0, -1)
	if r.err != nil || !slices.Equal(flat(r), []int64{1, 2}) {
		t.Fatalf("StartingVersion %d: %v, %v; want [1 2]", v2, r.batches, r.err)
	}
	b.appendRows(1) // v4: id 3
	o.StartingVersion = 0
	if r := runQuery(t, chk, o, 0, -1); r.err != nil || !slices.Equal(flat(r), []int64{3}) {
		t.Fatalf("restart with another StartingVersion: %v, %v; want [3] (the recorded start holds)", r.batches, r.err)
	}

	hist, err := b.tbl.History(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ts3 = hist[0].Timestamp
	for _, e := range hist {
		if e.Version == 3 {
			ts3 = e.Timestamp
		}
	}
	o = DefaultOptions(b.tbl.URL())
	o.StartingTimestamp = ts3
	if r := runQuery(t, openStore(t), o, 0, -1); r.err != nil || !slices.Equal(flat(r), []int64{2, 3}) {
		t.Fatalf("StartingTimestamp of version 3: %v, %v; want [2 3]", r.batches, r.err)
	}
	o.StartingTimestamp = ts3.Add(-time.Microsecond)
	if r := runQuery(t, openStore(t), o, 0, -1); r.err != nil || !slices.Equal(flat(r), []int64{2, 3}) {
		t.Fatalf("StartingTimestamp just before version 3: %v, %v; want [2 3]", r.batches, r.err)
	}
}

// Where filters rows and Columns projects them.
func TestWhereAndColumns(t *testing.T) {
	b := newBronze(t)
	b.appendRows(5) // ids 0..4
	src, err := NewSource(Options{TableURL: b.tbl.URL(), StartingVersion: -1, Where: "id >= 3", Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if err := src.Start(ctx, openStore(t)); err != nil {
		t.Fatal(err)
	}
	end, err := src.LatestOffset(ctx, source.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	batch, st, err := src.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Schema.Fields) != 1 || batch.Schema.Fields[0].Name != "id" || st.NumFiles != 1 {
		t.Fatalf("schema %v, %d files", batch.Schema, st.NumFiles)
	}
	var ids []int64
	for _, r := range batch.Rows {
		if len(r) != 1 {
			t.Fatalf("row %v has %d values, want 1", r, len(r))
		}
		ids = append(ids, r[0].(int64))
	}
	if !slices.Equal(ids, []int64{3, 4}) {
		t.Fatalf("rows %v, want [3 4]", ids)
	}
}

// A column added under a running query fails it naming the version; a
// restart reads with the new schema.
func TestAddedColumnNeedsARestart(t *testing.T) {
	b := newBronze(t)
	b.appendRows(1)
	src, err := NewSource(DefaultOptions(b.tbl.URL()))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	dir := openStore(t)
	if err := src.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	wide := &schema.StructType{Fields: append(slices.Clone(testSchema.Fields), schema.StructField{Name: "extra", Type: schema.TypeString, Nullable: true})}
	res, err := b.tbl.Write(ctx, &schema.Batch{Schema: wide, Rows: [][]any{{int64(9), "p", "x"}}}, table.WriteOptions{MergeSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	// The starting snapshot's file comes first, read with its own schema;
	// then the query fails at the change, naming it.
	first, err := src.LatestOffset(ctx, source.ReadLimit{})
	if o, _ := ParseOffset(first); err != nil || o.ReservoirVersion != res.Version || o.Index != BaseIndex {
		t.Fatalf("first plan %s, %v; want the files before version %d", first, err, res.Version)
	}
	_, err = src.LatestOffset(ctx, source.ReadLimit{})
	for _, want := range []string{fmt.Sprintf("version %d ", res.Version), `"extra"`, "struct<id:long,part:string>",
		"struct<id:long,part:string,extra:string>", "restart the query"} {
		if !errors.Is(err, ErrSchemaChanged) || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want ErrSchemaChanged naming %s", err, want)
		}
	}
	src2, _ := NewSource(DefaultOptions(b.tbl.URL()))
	defer src2.Close()
	if err := src2.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	end, err := src2.LatestOffset(ctx, source.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	batch, _, err := src2.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Schema.Fields) != 3 || len(batch.Rows) != 2 {
		t.Fatalf("after a restart: schema %v, rows %v; want 3 columns, 2 rows", batch.Schema, batch.Rows)
	}
}

// A merge into a table with deletion vectors (delta.enableDeletionVectors)
// removes the data file and re-adds it with a deletion vector, both with
// dataChange=true: a change commit, which fails the query naming its
// version; SkipChangeCommits skips it whole (the re-added file is not
// streamed again) and the stream goes on. A new query's starting snapshot
// reads the file through its deletion vector.
func TestDeletionVectorCommit(t *testing.T) {
	ctx := context.Background()
	tbl, err := table.Create(ctx, t.TempDir(), table.CreateOptions{Schema: testSchema, PartitionColumns: []string{"part"},
		Properties: map[string]string{txlog.PropEnableDeletionVectors: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	b := &bronze{t: t, tbl: tbl}
	b.appendRows(4) // ids 0..3, one file
	chk := openStore(t)
	o := DefaultOptions(tbl.URL())
	if r := runQuery(t, chk, o, 0, -1); r.err != nil || !slices.Equal(flat(r), seq(0, 4)) {
		t.Fatalf("first run: %v, %v", r.batches, r.err)
	}
	vDel := b.deleteKey(1)
	// The commit must be the DV form (the test proves nothing otherwise):
	// a remove and a re-add of one path, the add with a deletion vector.
	acts, err := tbl.Log().ReadCommit(ctx, vDel)
	if err != nil {
		t.Fatal(err)
	}
	var removed, dvAdded []string
	for _, a := range acts {
		if a.Remove != nil && a.Remove.DataChange {
			removed = append(removed, a.Remove.Path)
		}
		if a.Add != nil && a.Add.DeletionVector != nil && a.Add.DataChange {
			dvAdded = append(dvAdded, a.Add.Path)
		}
	}
	if len(dvAdded) != 1 || !slices.Equal(removed, dvAdded) {
		t.Fatalf("version %d: removes %v, adds with a deletion vector %v; want one path re-added with a DV", vDel, removed, dvAdded)
	}
	b.appendRows(1) // id 4
	r := runQuery(t, chk, o, 0, -1)
	if !errors.Is(r.err, ErrChangeCommit) || !strings.Contains(r.err.Error(), fmt.Sprintf("version %d ", vDel)) || len(flat(r)) != 0 {
		t.Fatalf("after the DV merge: rows %v, err %v; want ErrChangeCommit naming version %d and no rows", r.batches, r.err, vDel)
	}
	o.SkipChangeCommits = true
	if r := runQuery(t, chk, o, 0, -1); r.err != nil || !slices.Equal(flat(r), []int64{4}) {
		t.Fatalf("with SkipChangeCommits: %v, %v; want [4] (the re-added file is not streamed again)", r.batches, r.err)
	}
	// A new query starts from the snapshot: the file's deletion vector hides id 1.
	r = runQuery(t, openStore(t), DefaultOptions(tbl.URL()), 0, -1)
	if got := slices.Sorted(slices.Values(flat(r))); r.err != nil || !slices.Equal(got, []int64{0, 2, 3, 4}) {
		t.Fatalf("new query over the DV table: %v, %v; want [0 2 3 4]", got, r.err)
	}
}

// A commit that only removes data (every row of a file deleted: a remove
// with dataChange=true and no add, Delta's deltaSourceIgnoreDeleteError
// case) fails the query naming its version; SkipChangeCommits skips it.
func TestDeleteOnlyCommit(t *testing.T) {
	b := newBronze(t)
	b.appendRows(1) // id 0, its own file
	b.appendRows(2) // ids 1, 2
	chk := openStore(t)
	o := DefaultOptions(b.tbl.URL())
	if r := runQuery(t, chk, o, 0, -1); r.err != nil || len(flat(r)) != 3 {
		t.Fatalf("first run: %v, %v", r.batches, r.err)
	}
	vDel := b.deleteKey(0)
	acts, err := b.tbl.Log().ReadCommit(context.Background(), vDel)
	if err != nil {
		t.Fatal(err)
	}
	removes, adds := 0, 0
	for _, a := range acts {
		if a.Remove != nil && a.Remove.DataChange {
			removes++
		}
		if a.Add != nil {
			adds++
		}
	}
	if removes != 1 || adds != 0 {
		t.Fatalf("version %d has %d removes and %d adds; want a delete-only commit (1 remove, no add)", vDel, removes, adds)
	}
	b.appendRows(1) // id 3
	r := runQuery(t, chk, o, 0, -1)
	if !errors.Is(r.err, ErrChangeCommit) || !strings.Contains(r.err.Error(), fmt.Sprintf("version %d ", vDel)) {
		t.Fatalf("err = %v, want ErrChangeCommit naming version %d", r.err, vDel)
	}
	o.SkipChangeCommits = true
	if r := runQuery(t, chk, o, 0, -1); r.err != nil || !slices.Equal(flat(r), []int64{3}) {
		t.Fatalf("with SkipChangeCommits: %v, %v; want [3]", r.batches, r.err)
	}
}

// changeSchema commits a metaData action with schema sch (what an ALTER or
// an overwrite with overwriteSchema commits); it returns the version.
func (b *bronze) changeSchema(sch *schema.StructType) int64 {
	b.t.Helper()
	ctx := context.Background()
	l := b.tbl.Log()
	snap, err := l.Snapshot(ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	md := snap.Metadata()
	js, err := sch.MarshalJSON()
	if err != nil {
		b.t.Fatal(err)
	}
	md.SchemaString = string(js)
	tx := l.Begin(snap)
	tx.Add(txlog.Action{MetaData: &md})
	v, err := tx.Commit(ctx, "CHANGE COLUMN", nil, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// An incompatible schema change (id long -> string): the running query
// reads the files before it with the old schema, then fails naming the
// version, the column and both schemas. A restart, which resumes at the
// change, reads on with the new schema; a query that would read files
// before the change with the new schema fails at its first plan naming the
// version it resumes at, and says a restart does not help.
func TestIncompatibleSchemaChange(t *testing.T) {
	ctx := context.Background()
	b := newBronze(t)
	b.appendRows(1) // v1: id 0
	dir := openStore(t)
	src, err := NewSource(DefaultOptions(b.tbl.URL()))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	rowsOf := func(src *Source, start, end string) []string {
		t.Helper()
		batch, _, err := src.GetBatch(ctx, start, end)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range batch.Rows {
			out = append(out, fmt.Sprint(r[0]))
		}
		return out
	}
	end1, err := src.LatestOffset(ctx, source.ReadLimit{})
	if err != nil || !slices.Equal(rowsOf(src, "", end1), []string{"0"}) {
		t.Fatalf("first batch: %s, %v", end1, err)
	}
	b.appendRows(1) // v2: id 1
	strID := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeString, Nullable: true}, {Name: "part", Type: schema.TypeString, Nullable: true}}}
	vChange := b.changeSchema(strID)
	if _, err := b.tbl.Write(ctx, &schema.Batch{Schema: strID, Rows: [][]any{{"x", "p"}}}, table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	end2, err := src.LatestOffset(ctx, source.ReadLimit{})
	if err != nil || !slices.Equal(rowsOf(src, end1, end2), []string{"1"}) {
		t.Fatalf("the batch before the change: %s, %v", end2, err)
	}
	_, err = src.LatestOffset(ctx, source.ReadLimit{})
	for _, want := range []string{fmt.Sprintf("version %d ", vChange), `"id"`, "struct<id:long,part:string>",
		"struct<id:string,part:string>", "not additive: restart the query to read on from this version"} {
		if !errors.Is(err, ErrSchemaChanged) || !strings.Contains(err.Error(), want) {
			t.Fatalf("running query: err = %v, want ErrSchemaChanged naming %s", err, want)
		}
	}

	// A restart on the same checkpoint resumes at the change: the new rows.
	src2, _ := NewSource(DefaultOptions(b.tbl.URL()))
	defer src2.Close()
	if err := src2.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	end3, err := src2.LatestOffset(ctx, source.ReadLimit{})
	if err != nil || !slices.Equal(rowsOf(src2, end2, end3), []string{"x"}) {
		t.Fatalf("restart at the change: %s, %v; want the row x", end3, err)
	}

	// A query that would read version 1 (id long) with the new schema.
	o := DefaultOptions(b.tbl.URL())
	o.StartingVersion = 1
	src3, _ := NewSource(o)
	defer src3.Close()
	if err := src3.Start(ctx, openStore(t)); err != nil {
		t.Fatal(err)
	}
	_, err = src3.LatestOffset(ctx, source.ReadLimit{})
	for _, want := range []string{"version 1 ", `"id" as long`, "a restart does not help"} {
		if !errors.Is(err, ErrSchemaChanged) || !strings.Contains(err.Error(), want) {
			t.Fatalf("resuming before the change: err = %v, want ErrSchemaChanged naming %s", err, want)
		}
	}
}
