package table_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

func sch() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "city", Type: schema.TypeString, Nullable: true},
		{Name: "at", Type: schema.TypeTimestamp, Nullable: true},
	}}
}

func rows(from, n int) *schema.Batch {
	b := &schema.Batch{Schema: sch()}
	cities := []string{"SFO", "LAX", "a b/c"}
	for i := from; i < from+n; i++ {
		b.Rows = append(b.Rows, []any{int64(i), cities[i%3], time.Unix(int64(i), 0).UTC()})
	}
	return b
}

func open(t *testing.T) *table.Table {
	t.Helper()
	url := fmt.Sprintf("mem://%s", strings.ReplaceAll(t.Name(), "/", "_"))
	tb, err := table.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// numRecords sums stats.numRecords over the live files of the latest snapshot.
func numRecords(t *testing.T, tb *table.Table) (files int, records int64) {
	t.Helper()
	snap, err := tb.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range snap.Files() {
		var n int64
		if _, err := fmt.Sscanf(a.Stats, `{"numRecords":%d`, &n); err != nil {
			t.Fatalf("stats of %s: %q: %v", a.Path, a.Stats, err)
		}
		records += n
	}
	return snap.NumFiles(), records
}

func TestCreateThenExistsAndRefusesSecondCreate(t *testing.T) {
	ctx := context.Background()
	url := "mem://" + t.Name()
	tb, err := table.Create(ctx, url, table.CreateOptions{Schema: sch(), PartitionColumns: []string{"city"}, Properties: map[string]string{"delta.appendOnly": "false"}, Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 0 || snap.Metadata().Name != "events" || len(snap.Metadata().PartitionColumns) != 1 {
		t.Fatalf("version %d metadata %+v", snap.Version(), snap.Metadata())
	}
	if p := snap.Protocol(); p.MinReaderVersion != 1 || p.MinWriterVersion != 2 {
		t.Fatalf("plain table protocol = %+v, want reader 1 writer 2", p)
	}
	if _, err := table.Create(ctx, url, table.CreateOptions{Schema: sch()}); !errors.Is(err, txlog.ErrTableExists) {
		t.Fatalf("second create: %v, want ErrTableExists", err)
	}
}

func TestCreateValidation(t *testing.T) {
	cases := map[string]table.CreateOptions{
		"no schema":             {},
		"unknown partition col": {Schema: sch(), PartitionColumns: []string{"nope"}},
		"duplicate partition":   {Schema: sch(), PartitionColumns: []string{"city", "city"}},
		// Regression: a typo in a Delta property was accepted and ignored later.
		"bad checkpoint interval": {Schema: sch(), Properties: map[string]string{"delta.checkpointInterval": "abc"}},
		"bad target file size":    {Schema: sch(), Properties: map[string]string{"delta.targetFileSize": "big"}},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			if err := o.Validate(); !errors.Is(err, table.ErrInvalidOptions) {
				t.Fatalf("Validate = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestWriteCreatesTableAndIdempotentVersionsSkip(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	res, err := tb.Write(ctx, rows(0, 10), table.WriteOptions{AppID: "q1", Version: 0, PartitionColumns: []string{"city"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped || res.Version != 0 || res.NumRows != 10 || res.NumFiles != 3 {
		t.Fatalf("first write = %+v", res)
	}
	// The same (appId, version) again, and an older one: skipped, nothing written.
	for _, v := range []int64{0} {
		res, err := tb.Write(ctx, rows(0, 10), table.WriteOptions{AppID: "q1", Version: v})
		if err != nil || !res.Skipped {
			t.Fatalf("replay of version %d = %+v, %v; want skipped", v, res, err)
		}
	}
	if res, err := tb.Write(ctx, rows(10, 5), table.WriteOptions{AppID: "q1", Version: 1}); err != nil || res.Skipped || res.Version != 1 {
		t.Fatalf("version 1 = %+v, %v", res, err)
	}
	if res, err := tb.Write(ctx, rows(0, 5), table.WriteOptions{AppID: "q1", Version: 0}); err != nil || !res.Skipped {
		t.Fatalf("older version after 1 = %+v, %v; want skipped (Delta skips batchId <= txn version)", res, err)
	}
	// Another appId is independent.
	if res, err := tb.Write(ctx, rows(100, 1), table.WriteOptions{AppID: "q2", Version: 0}); err != nil || res.Skipped {
		t.Fatalf("q2 version 0 = %+v, %v", res, err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := snap.TxnVersion("q1"); v != 1 {
		t.Fatalf("txn q1 = %d, want 1", v)
	}
	if _, n := numRecords(t, tb); n != 16 {
		t.Fatalf("rows = %d, want 16", n)
	}
	for _, a := range snap.Files() {
		if a.PartitionValues["city"] == nil {
			t.Fatalf("file %s has no city partition value", a.Path)
		}
		if *a.PartitionValues["city"] == "a b/c" && !strings.Contains(a.Path, "city=a%20b%252Fc") {
			t.Errorf("path %q: want the Hive-escaped directory city=a b%%2Fc (Spark escapes / but not space), URL-encoded in the log", a.Path)
		}
	}
}

func TestOverwriteReplacesEveryFileInOneCommit(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	for i := 0; i < 3; i++ {
		if _, err := tb.Write(ctx, rows(i*10, 10), table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tb.Write(ctx, rows(1000, 4), table.WriteOptions{Mode: table.Overwrite})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumRemovedFiles != 3 || res.Version != 3 {
		t.Fatalf("overwrite = %+v, want 3 removed files at version 3", res)
	}
	files, n := numRecords(t, tb)
	if files != 1 || n != 4 {
		t.Fatalf("after overwrite: %d files, %d rows; want 1, 4", files, n)
	}
	// The version before still shows the old contents (snapshots never change).
	old, err := tb.SnapshotAt(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if old.NumFiles() != 3 {
		t.Fatalf("version 2 has %d files, want 3", old.NumFiles())
	}
	acts, err := tb.Log().ReadCommit(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var adds, removes int
	for _, a := range acts {
		if a.Add != nil {
			adds++
		}
		if a.Remove != nil {
			removes++
			if !a.Remove.DataChange || a.Remove.DeletionTimestamp == nil {
				t.Errorf("remove %+v: want dataChange=true and a deletionTimestamp", a.Remove)
			}
		}
	}
	if adds != 1 || removes != 3 {
		t.Fatalf("commit 3 has %d adds, %d removes", adds, removes)
	}
}

func TestSchemaMismatchAndMerge(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	if _, err := tb.Write(ctx, rows(0, 2), table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	wider := sch()
	wider.Fields = append(wider.Fields, schema.StructField{Name: "extra", Type: schema.TypeDouble, Nullable: true})
	b := &schema.Batch{Schema: wider, Rows: [][]any{{int64(5), "SFO", nil, 1.5}}}
	if _, err := tb.Write(ctx, b, table.WriteOptions{}); !errors.Is(err, table.ErrSchemaMismatch) || !strings.Contains(err.Error(), `"extra"`) {
		t.Fatalf("new column without merge: %v, want ErrSchemaMismatch naming extra", err)
	}
	if _, err := tb.Write(ctx, b, table.WriteOptions{MergeSchema: true}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	s, err := snap.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Field("extra"); !ok {
		t.Fatalf("merged schema lacks extra: %+v", s)
	}
	wrongType := &schema.Batch{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeString, Nullable: false}}}, Rows: [][]any{{"x"}}}
	if _, err := tb.Write(ctx, wrongType, table.WriteOptions{}); !errors.Is(err, table.ErrSchemaMismatch) {
		t.Fatalf("type change: %v, want ErrSchemaMismatch", err)
	}
}

func TestRowThatDoesNotFitCommitsNothing(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	if _, err := tb.Write(ctx, rows(0, 2), table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b := rows(0, 3)
	b.Rows[2][0] = nil // id is not nullable
	_, err := tb.Write(ctx, b, table.WriteOptions{AppID: "q", Version: 0})
	var re *schema.RowError
	if !errors.As(err, &re) || re.Row != 2 || re.Field != "id" {
		t.Fatalf("err = %v, want RowError at row 2 field id", err)
	}
	snap, _ := tb.Snapshot(ctx)
	if snap.Version() != 0 {
		t.Fatalf("version = %d after a failed write, want 0", snap.Version())
	}
	if _, ok := snap.TxnVersion("q"); ok {
		t.Fatal("txn recorded for a failed write")
	}
}

func TestEmptyBatchCommitsTxnOnly(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	if _, err := tb.Write(ctx, rows(0, 2), table.WriteOptions{AppID: "q", Version: 0}); err != nil {
		t.Fatal(err)
	}
	res, err := tb.Write(ctx, &schema.Batch{}, table.WriteOptions{AppID: "q", Version: 1})
	if err != nil || res.NumFiles != 0 || res.Version != 1 {
		t.Fatalf("empty batch = %+v, %v", res, err)
	}
	snap, _ := tb.Snapshot(ctx)
	if v, _ := snap.TxnVersion("q"); v != 1 {
		t.Fatalf("txn = %d, want 1", v)
	}
	fresh, err := table.Open(ctx, "mem://"+t.Name()+"-fresh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Write(ctx, &schema.Batch{}, table.WriteOptions{}); !errors.Is(err, table.ErrInvalidOptions) {
		t.Fatalf("empty batch without schema on a missing table: %v, want ErrInvalidOptions", err)
	}
}

func TestHistoryAndTimeTravel(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	for i := 0; i < 3; i++ {
		if _, err := tb.Write(ctx, rows(i, 1), table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := tb.History(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Version != 2 || h[1].Version != 1 {
		t.Fatalf("history = %+v, want versions 2, 1", h)
	}
	if op := h[0].CommitInfo.Operation(); op != "WRITE" {
		t.Fatalf("operation = %q, want WRITE", op)
	}
	snap, err := tb.SnapshotAsOf(ctx, h[1].Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() < 1 {
		t.Fatalf("as of version 1's timestamp: version %d", snap.Version())
	}
}

// Two writers creating the same table at once: the loser of version 0
// appends to the table the winner created instead of failing.
func TestConcurrentCreateByWriteAppends(t *testing.T) {
	ctx := context.Background()
	url := "file://" + t.TempDir()
	const writers = 4
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			tb, err := table.Open(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer tb.Close()
			_, err = tb.Write(ctx, rows(w*10, 10), table.WriteOptions{})
			errs <- err
		}()
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	tb, _ := table.Open(ctx, url)
	defer tb.Close()
	if _, n := numRecords(t, tb); n != writers*10 {
		t.Fatalf("rows = %d, want %d", n, writers*10)
	}
}

// TestTargetFileSizePropertyWithUnit: delta.targetFileSize "16kb" rolls the
// sink's files as OPTIMIZE reads it (regression: the write path parsed only
// plain integers and silently used 128 MiB).
func TestTargetFileSizePropertyWithUnit(t *testing.T) {
	ctx := context.Background()
	url := fmt.Sprintf("mem://%s", t.Name())
	tb, err := table.Create(ctx, url, table.CreateOptions{Schema: sch(), Properties: map[string]string{"delta.targetFileSize": "16kb"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	res, err := tb.Write(ctx, rows(0, 20_000), table.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumFiles < 4 {
		t.Fatalf("%d files for 20,000 rows at a 16 KiB target; want the files rolled", res.NumFiles)
	}
}

// TestMergeSchemaNestedField (issue 14 item 2): with MergeSchema a struct
// column gains a nested field when the batch's type is the merged one (the
// table's fields first, then the new one), as Delta's mergeSchema evolves
// nested structs; it was refused as "struct in the table but struct in the
// batch". Another nested layout, or no MergeSchema, is still refused.
func TestMergeSchemaNestedField(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	st := func(names ...string) *schema.StructType {
		s := &schema.StructType{}
		for _, n := range names {
			s.Fields = append(s.Fields, schema.StructField{Name: n, Type: schema.TypeString, Nullable: true})
		}
		return &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.TypeLong, Nullable: true}, {Name: "s", Type: s, Nullable: true}}}
	}
	if _, err := tb.Write(ctx, &schema.Batch{Schema: st("a"), Rows: [][]any{{int64(1), []any{"x"}}}}, table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	wider := &schema.Batch{Schema: st("a", "b"), Rows: [][]any{{int64(2), []any{"y", "z"}}}}
	if _, err := tb.Write(ctx, wider, table.WriteOptions{}); !errors.Is(err, table.ErrSchemaMismatch) {
		t.Fatalf("nested field without merge: %v, want ErrSchemaMismatch", err)
	}
	reordered := &schema.Batch{Schema: st("b", "a"), Rows: [][]any{{int64(2), []any{"z", "y"}}}}
	if _, err := tb.Write(ctx, reordered, table.WriteOptions{MergeSchema: true}); !errors.Is(err, table.ErrSchemaMismatch) {
		t.Fatalf("nested fields in another order: %v, want ErrSchemaMismatch", err)
	}
	if _, err := tb.Write(ctx, wider, table.WriteOptions{MergeSchema: true}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	s, err := snap.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Field("s"); !schema.TypesEqual(f.Type, st("a", "b").Fields[1].Type) || snap.Version() != 1 {
		t.Fatalf("version %d schema %+v; want version 1 with s struct<a,b>", snap.Version(), s)
	}
}

// TestCreateWithInCommitTimestampsHasTheFeature is the adversarial repro
// 01: delta.enableInCommitTimestamps=true at create left protocol 1/2 while
// commits carried inCommitTimestamp. PROTOCOL.md "In-Commit Timestamps":
// writer 7 with the inCommitTimestamp writer feature; a writer 7 table lists
// the features writer 2 implied (appendOnly, invariants); readers unaffected.
func TestCreateWithInCommitTimestampsHasTheFeature(t *testing.T) {
	ctx := context.Background()
	tb, err := table.Create(ctx, "mem://"+t.Name(), table.CreateOptions{Schema: sch(),
		Properties: map[string]string{txlog.PropEnableInCommitTimestamps: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Protocol()
	if p.MinReaderVersion != 1 || p.MinWriterVersion != 7 || len(p.ReaderFeatures) != 0 {
		t.Fatalf("protocol %+v, want reader 1 / writer 7", p)
	}
	for _, f := range []string{txlog.FeatureInCommitTimestamp, txlog.FeatureAppendOnly, txlog.FeatureInvariants} {
		if !strings.Contains(strings.Join(p.WriterFeatures, ","), f) {
			t.Errorf("writerFeatures %v lack %s", p.WriterFeatures, f)
		}
	}
}

// streamed turns a batch into a streamed one (schema.Batch.Chunks) of
// chunks of n rows, the last yielding err when it is not nil.
func streamed(b *schema.Batch, n int, err error) *schema.Batch {
	rows := b.Rows
	return &schema.Batch{Schema: b.Schema, Chunks: func(yield func([][]any, error) bool) {
		for lo := 0; lo < len(rows); lo += n {
			if !yield(rows[lo:min(lo+n, len(rows))], nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}}
}

// Issue 22: a streamed batch is written chunk by chunk into the same files
// as the batch held whole (one file per partition, the same rows); a row
// that does not fit in a later chunk, or a chunk's error, commits nothing
// and leaves no data file behind.
func TestWriteStreamedBatch(t *testing.T) {
	ctx := context.Background()
	opts := table.WriteOptions{AppID: "q", Version: 0, PartitionColumns: []string{"city"}}
	whole, chunked := open(t), func() *table.Table {
		tb, err := table.Open(ctx, "mem://"+t.Name()+"-chunked")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		return tb
	}()
	rw, err := whole.Write(ctx, rows(0, 1000), opts)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := chunked.Write(ctx, streamed(rows(0, 1000), 70, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rc.NumFiles != 3 || rc.NumFiles != rw.NumFiles || rc.NumRows != 1000 {
		t.Errorf("streamed write: %+v, whole write: %+v (want 3 files, one per city, 1000 rows)", rc, rw)
	}
	if f, n := numRecords(t, chunked); f != 3 || n != 1000 {
		t.Errorf("streamed table: %d files, %d records", f, n)
	}

	dataFiles := func(tb *table.Table) int {
		n := 0
		for fi, err := range tb.Store().List(ctx, "", "") {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(fi.Path, ".parquet") {
				n++
			}
		}
		return n
	}
	before := dataFiles(chunked)
	bad := rows(1000, 500)
	bad.Rows[321][0] = nil // id is not nullable: the 5th chunk of 70
	// Tiny target files: earlier chunks' files are closed (visible in the
	// store) by the time the failure comes.
	_, err = chunked.Write(ctx, streamed(bad, 70, nil), table.WriteOptions{AppID: "q", Version: 1, TargetFileSizeBytes: 1})
	var re *schema.RowError
	if !errors.As(err, &re) || re.Row != 321 || re.Field != "id" {
		t.Errorf("err = %v, want RowError at row 321 field id", err)
	}
	boom := errors.New("source read failed")
	if _, err = chunked.Write(ctx, streamed(rows(1000, 500), 70, boom), table.WriteOptions{AppID: "q", Version: 1, TargetFileSizeBytes: 1}); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the chunk's error", err)
	}
	snap, _ := chunked.Snapshot(ctx)
	if v, _ := snap.TxnVersion("q"); snap.Version() != 0 || v != 0 {
		t.Errorf("version %d, txn %d after failed streamed writes, want 0 and 0", snap.Version(), v)
	}
	if after := dataFiles(chunked); after != before {
		t.Errorf("%d data files after the failed writes, %d before: the failed writes' files were left", after, before)
	}
}
