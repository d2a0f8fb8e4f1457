package table_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// kvSchema: id (key), part (partition), v, seq.
func kvSchema(extra ...schema.StructField) *schema.StructType {
	return &schema.StructType{Fields: append([]schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "part", Type: schema.TypeString, Nullable: true},
		{Name: "v", Type: schema.TypeString, Nullable: true},
		{Name: "seq", Type: schema.TypeLong, Nullable: true},
	}, extra...)}
}

// state renders the table as sorted "id:part:v:seq" lines.
func state(t *testing.T, tb *table.Table) string {
	t.Helper()
	rows, _, err := table.LiveRows(context.Background(), tb)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%v:%v:%v:%v", r[0], r[1], r[2], r[3]))
	}
	slices.Sort(lines)
	return strings.Join(lines, " ")
}

func createKV(t *testing.T, tb *table.Table, partitioned bool, n int) {
	t.Helper()
	var pc []string
	if partitioned {
		pc = []string{"part"}
	}
	b := &schema.Batch{Schema: kvSchema()}
	for i := range n {
		b.Rows = append(b.Rows, []any{int64(i), fmt.Sprint("p", i%2), "old", int64(1)})
	}
	if _, err := tb.Write(context.Background(), b, table.WriteOptions{PartitionColumns: pc}); err != nil {
		t.Fatal(err)
	}
}

func TestMergeUpsertDeleteAndCommitInfo(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	createKV(t, tb, true, 4) // 0..3 in p0/p1
	op := schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true}
	b := &schema.Batch{Schema: kvSchema(op), Rows: [][]any{
		{int64(1), "p1", "new", int64(2), "u"}, // update
		{int64(2), "p0", nil, int64(2), "d"},   // delete
		{int64(9), "p1", "ins", int64(2), "c"}, // insert
		{int64(8), "p0", nil, int64(2), "d"},   // delete of a missing key: nothing
	}}
	res, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}, SequenceBy: "seq", DeleteWhen: "op = 'd'", AppID: "app", Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumInserted != 1 || res.NumUpdated != 1 || res.NumDeleted != 1 || res.NumSourceRows != 4 {
		t.Fatalf("result %+v", res)
	}
	if got, want := state(t, tb), "0:p0:old:1 1:p1:new:2 3:p1:old:1 9:p1:ins:2"; got != want {
		t.Fatalf("table\n got %s\nwant %s", got, want)
	}
	h, err := tb.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ci := h[0].CommitInfo
	if ci.Operation() != "MERGE" {
		t.Fatalf("operation %q", ci.Operation())
	}
	m := ci.StringMap("operationMetrics")
	for k, v := range map[string]string{"numTargetRowsInserted": "1", "numTargetRowsUpdated": "1", "numTargetRowsDeleted": "1", "numSourceRows": "4", "numTargetFilesRemoved": "2"} {
		if m[k] != v {
			t.Errorf("operationMetrics[%s] = %q, want %q (%v)", k, m[k], v, m)
		}
	}
	pm := ci.StringMap("operationParameters")
	if pm["predicate"] != `["(t.id = s.id)"]` || !strings.Contains(pm["matchedPredicates"], `"actionType":"delete"`) || pm["notMatchedBySourcePredicates"] != "[]" {
		t.Errorf("operationParameters %v", pm)
	}
	// Replay: a no-op by txn.
	res2, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}, SequenceBy: "seq", DeleteWhen: "op = 'd'", AppID: "app", Version: 1})
	if err != nil || !res2.Skipped || res2.Version != res.Version {
		t.Fatalf("replay: %+v %v", res2, err)
	}
	// 'op' stays out of the table.
	snap, _ := tb.Snapshot(ctx)
	if s, _ := snap.Schema(); s.FieldIndex("op") >= 0 {
		t.Fatalf("op column written to the table")
	}
}

func TestMergeSequence(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	createKV(t, tb, false, 2)
	opts := table.MergeOptions{Keys: []string{"id"}, SequenceBy: "seq"}
	b := &schema.Batch{Schema: kvSchema(), Rows: [][]any{
		{int64(0), "p0", "s5", int64(5)},
		{int64(0), "p0", "s3", int64(3)}, // older within the batch: loses
		{int64(1), "p1", "s0", int64(0)}, // older than the table's 1: not applied
		{int64(2), "p0", "a", int64(7)},
		{int64(2), "p0", "b", int64(7)}, // tie: the later row wins
	}}
	res, err := tb.Merge(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := state(t, tb), "0:p0:s5:5 1:p1:old:1 2:p0:b:7"; got != want {
		t.Fatalf("table\n got %s\nwant %s", got, want)
	}
	if res.NumStale != 1 || res.NumUpdated != 1 || res.NumInserted != 1 {
		t.Fatalf("result %+v", res)
	}
	// A late change for key 0 (seq 4 < 5) changes nothing, and rewrites nothing.
	res, err = tb.Merge(ctx, &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(0), "p0", "late", int64(4)}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.NumFilesRemoved != 0 || res.NumStale != 1 || state(t, tb) != "0:p0:s5:5 1:p1:old:1 2:p0:b:7" {
		t.Fatalf("late change applied: %+v %s", res, state(t, tb))
	}
}

func TestMergeDuplicateKeyRefused(t *testing.T) {
	tb := open(t)
	createKV(t, tb, false, 1)
	b := &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(7), "p", "a", nil}, {int64(7), "p", "b", nil}}}
	_, err := tb.Merge(context.Background(), b, table.MergeOptions{Keys: []string{"id"}})
	if !errors.Is(err, table.ErrDuplicateKey) || !strings.Contains(err.Error(), "id=7") {
		t.Fatalf("err %v, want ErrDuplicateKey naming id=7", err)
	}
	b.Rows[1][0] = nil
	if _, err := tb.Merge(context.Background(), b, table.MergeOptions{Keys: []string{"id"}}); !errors.Is(err, table.ErrNullKey) {
		t.Fatalf("null key: %v", err)
	}
	if _, err := tb.Merge(context.Background(), b, table.MergeOptions{Keys: []string{"nope"}}); !errors.Is(err, table.ErrInvalidOptions) {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestMergePrunesByStats: with one file per 100 keys, an upsert of two keys
// rewrites only their file and reads the key column of no other.
func TestMergePrunesByStats(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	for f := range 10 {
		b := &schema.Batch{Schema: kvSchema()}
		for i := f * 100; i < f*100+100; i++ {
			b.Rows = append(b.Rows, []any{int64(i), "p", "old", int64(1)})
		}
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	b := &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(305), "p", "new", int64(2)}, {int64(350), "p", "new", int64(2)}, {int64(5000), "p", "ins", int64(2)}}}
	res, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumFilesScanned != 1 || res.NumFilesRemoved != 1 || res.NumUpdated != 2 || res.NumInserted != 1 || res.NumCopied != 98 {
		t.Fatalf("result %+v", res)
	}
	rows, _, _ := table.LiveRows(ctx, tb)
	if len(rows) != 1001 {
		t.Fatalf("%d rows", len(rows))
	}
}

// TestMergeRetriesAfterOptimize: a concurrent rewrite (dataChange=false) of
// the file the merge rewrites conflicts, and the merge re-plans on the new
// snapshot.
func TestMergeRetriesAfterOptimize(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	createKV(t, tb, false, 3)
	snap, _ := tb.Snapshot(ctx)
	old := snap.Files()[0]
	// Rewrite the file's rows into a new file (as OPTIMIZE would) between
	// the merge's read and its commit: commit it from a hook on the first
	// attempt by racing with a pre-computed plan.
	rows, sch, _ := table.LiveRows(ctx, tb)
	opt := func() {
		files, err := parquetio.WriteFiles(ctx, tb.Store(), &schema.Batch{Schema: sch, Rows: rows}, parquetio.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tx := tb.Log().Begin(snap)
		tx.ReadFiles(old.Path)
		tx.Add(txlog.Action{Remove: &txlog.Remove{Path: old.Path, DataChange: false}},
			txlog.Action{Add: &txlog.Add{Path: txlog.EncodePath(files[0].Path), PartitionValues: map[string]*string{}, Size: files[0].Size, Stats: files[0].Stats}})
		if _, err := tx.Commit(ctx, "OPTIMIZE", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	res, err := table.MergeWithHook(ctx, tb, &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(1), "p", "new", int64(2)}}},
		table.MergeOptions{Keys: []string{"id"}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 {
		t.Fatalf("attempts %d, want 2 (one conflict, one re-plan)", res.Attempts)
	}
	if got, want := state(t, tb), "0:p0:old:1 1:p:new:2 2:p0:old:1"; got != want {
		t.Fatalf("table\n got %s\nwant %s", got, want)
	}
}

// TestMergeCreatesTableWithoutChangeColumns: a merge into a missing table
// creates it from the batch without the columns only DeleteWhen reads;
// LastRowWins takes the last of several rows of one key.
func TestMergeCreatesTableWithoutChangeColumns(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	op := schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true}
	b := &schema.Batch{Schema: kvSchema(op), Rows: [][]any{
		{int64(1), "p", "a", nil, "c"},
		{int64(1), "p", "b", nil, "u"},
		{int64(2), "p", "x", nil, "c"},
		{int64(2), "p", nil, nil, "d"},
	}}
	o := table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'", PartitionColumns: []string{"part"}}
	if _, err := tb.Merge(ctx, b, o); !errors.Is(err, table.ErrDuplicateKey) {
		t.Fatalf("duplicates without LastRowWins: %v", err)
	}
	o.LastRowWins = true
	if _, err := tb.Merge(ctx, b, o); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	s, _ := snap.Schema()
	if len(s.Fields) != 4 || s.FieldIndex("op") >= 0 {
		t.Fatalf("schema %s, want the batch's without op", s)
	}
	if got := state(t, tb); got != "1:p:b:<nil>" {
		t.Fatalf("table %s", got)
	}
}

// TestMergeDeletionVectors: on a table created with
// delta.enableDeletionVectors=true (protocol 3/7 with the deletionVectors
// features), a merge marks the changed rows deleted in a deletion vector
// file (deletion_vector_<uuid>.bin, magic 1681511377, version byte, size and
// CRC framing) and re-adds the same data file with the descriptor
// (storageType u, 20 Z85 characters, offset 1, cardinality); a second merge
// into the file replaces its deletion vector with the union.
func TestMergeDeletionVectors(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	b := &schema.Batch{Schema: kvSchema()}
	for i := range 10 {
		b.Rows = append(b.Rows, []any{int64(i), "p", "old", int64(1)})
	}
	if _, err := tb.Write(ctx, b, table.WriteOptions{Properties: map[string]string{txlog.PropEnableDeletionVectors: "true"}}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	if p := snap.Protocol(); p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Contains(p.ReaderFeatures, "deletionVectors") || !slices.Contains(p.WriterFeatures, "deletionVectors") {
		t.Fatalf("protocol %+v", p)
	}
	dataPath := snap.Files()[0].Path
	op := schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true}
	o := table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"}
	res, err := tb.Merge(ctx, &schema.Batch{Schema: kvSchema(op), Rows: [][]any{
		{int64(3), "p", "new", int64(2), "u"}, {int64(5), "p", nil, nil, "d"}, {int64(20), "p", "ins", int64(2), "c"},
	}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletionVectorsAdded != 1 || res.NumFilesRemoved != 0 || res.NumCopied != 0 || res.NumUpdated != 1 || res.NumDeleted != 1 || res.NumInserted != 1 {
		t.Fatalf("result %+v", res)
	}
	snap, _ = tb.Snapshot(ctx)
	var dvFile *txlog.Add
	for _, a := range snap.Files() {
		if a.Path == dataPath {
			dvFile = a
		}
	}
	if dvFile == nil || dvFile.DeletionVector == nil {
		t.Fatalf("data file %s not re-added with a deletion vector: %+v", dataPath, snap.Files())
	}
	d := dvFile.DeletionVector
	if d.StorageType != "u" || len(d.PathOrInlineDV) != 20 || d.Offset == nil || *d.Offset != 1 || d.Cardinality != 2 {
		t.Fatalf("descriptor %+v", d)
	}
	if !strings.Contains(dvFile.Stats, `"tightBounds":false`) {
		t.Errorf("stats of the re-added file %s: want tightBounds false", dvFile.Stats)
	}
	var dvKey string
	for fi, err := range tb.Store().List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(fi.Path, "deletion_vector_") && strings.HasSuffix(fi.Path, ".bin") {
			dvKey = fi.Path
		}
	}
	raw, err := tb.Store().Read(ctx, dvKey)
	if err != nil {
		t.Fatalf("deletion vector file %q: %v", dvKey, err)
	}
	if len(raw) != 1+4+int(d.SizeInBytes)+4 || raw[0] != 1 || fmt.Sprint(raw[5:9]) != fmt.Sprint([]byte{0xd1, 0xd3, 0x39, 0x64}) {
		t.Fatalf("deletion vector file: %d bytes, head % x", len(raw), raw[:min(len(raw), 9)])
	}
	if got, want := state(t, tb), "0:p:old:1 1:p:old:1 20:p:ins:2 2:p:old:1 3:p:new:2 4:p:old:1 6:p:old:1 7:p:old:1 8:p:old:1 9:p:old:1"; got != want {
		t.Fatalf("table\n got %s\nwant %s", got, want)
	}
	// A second merge into the same file: the union of deletions.
	res, err = tb.Merge(ctx, &schema.Batch{Schema: kvSchema(op), Rows: [][]any{{int64(7), "p", nil, nil, "d"}}}, o)
	if err != nil || res.NumDeletionVectorsUpdated != 1 || res.NumDeleted != 1 {
		t.Fatalf("second merge %+v %v", res, err)
	}
	snap, _ = tb.Snapshot(ctx)
	for _, a := range snap.Files() {
		if a.Path == dataPath && (a.DeletionVector == nil || a.DeletionVector.Cardinality != 3) {
			t.Fatalf("descriptor after the second merge %+v", a.DeletionVector)
		}
	}
	if got := state(t, tb); strings.Contains(got, "7:p") || strings.Contains(got, "5:p") || !strings.Contains(got, "3:p:new:2") {
		t.Fatalf("table after the second merge %s", got)
	}
}

// TestMergeNullKeys: a source row with a null key matches nothing, as in
// Spark's MERGE (t.id = s.id is null): it is inserted, two of them in one
// batch are both inserted (with or without a sequence column), a null-key
// delete does nothing, and a table row with a null key is never updated or
// deleted. A composite key with one null part is a null key too. Into a NOT
// NULL key column the insert is refused with ErrNullKey, and a null-key
// delete there is no error.
func TestMergeNullKeys(t *testing.T) {
	for _, mode := range []struct {
		name  string
		props map[string]string
	}{{"copy-on-write", nil}, {"deletion vectors", map[string]string{txlog.PropEnableDeletionVectors: "true"}}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			tb := open(t)
			sch := kvSchema()
			sch.Fields[0].Nullable = true
			if _, err := tb.Write(ctx, &schema.Batch{Schema: sch, Rows: [][]any{
				{int64(1), "p", "old", int64(1)}, {nil, "p", "tableNull", int64(1)},
			}}, table.WriteOptions{Properties: mode.props}); err != nil {
				t.Fatal(err)
			}
			op := schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true}
			for n, seq := range []string{"", "seq"} {
				b := &schema.Batch{Schema: kvSchema(op), Rows: [][]any{
					{nil, "p", "a" + seq, int64(9), "u"},
					{nil, "p", "b" + seq, int64(9), "u"},
					{nil, "p", "gone", int64(9), "d"},
					{int64(1), "p", "new" + seq, int64(2 + n), "u"},
				}}
				b.Schema.Fields[0].Nullable = true
				res, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}, SequenceBy: seq, DeleteWhen: "op = 'd'"})
				if err != nil {
					t.Fatalf("sequence %q: %v", seq, err)
				}
				if res.NumInserted != 2 || res.NumUpdated != 1 || res.NumDeleted != 0 || res.NumSourceChanges != 4 {
					t.Fatalf("sequence %q: result %+v", seq, res)
				}
			}
			if got, want := state(t, tb), "1:p:newseq:3 <nil>:p:a:9 <nil>:p:aseq:9 <nil>:p:b:9 <nil>:p:bseq:9 <nil>:p:tableNull:1"; got != want {
				t.Fatalf("table\n got %s\nwant %s", got, want)
			}
		})
	}
	t.Run("composite key", func(t *testing.T) {
		ctx := context.Background()
		tb := open(t)
		createKV(t, tb, false, 2) // (0, p0), (1, p1)
		b := &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(0), nil, "x", int64(2)}, {int64(0), "p0", "y", int64(2)}}}
		res, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id", "part"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.NumInserted != 1 || res.NumUpdated != 1 {
			t.Fatalf("result %+v", res)
		}
		if got, want := state(t, tb), "0:<nil>:x:2 0:p0:y:2 1:p1:old:1"; got != want {
			t.Fatalf("table\n got %s\nwant %s", got, want)
		}
	})
	t.Run("NOT NULL key", func(t *testing.T) {
		ctx := context.Background()
		tb := open(t)
		createKV(t, tb, false, 1) // id is NOT NULL
		op := schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true}
		del := &schema.Batch{Schema: kvSchema(op), Rows: [][]any{{nil, "p", nil, nil, "d"}}}
		if res, err := tb.Merge(ctx, del, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"}); err != nil || res.NumDeleted != 0 {
			t.Fatalf("null-key delete: %+v %v", res, err)
		}
		ins := &schema.Batch{Schema: kvSchema(op), Rows: [][]any{{nil, "p", "x", nil, "c"}}}
		_, err := tb.Merge(ctx, ins, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"})
		if !errors.Is(err, table.ErrNullKey) || !strings.Contains(err.Error(), `"id"`) {
			t.Fatalf("null-key insert into NOT NULL id: %v, want ErrNullKey naming id", err)
		}
		if got := state(t, tb); got != "0:p0:old:1" {
			t.Fatalf("table %s", got)
		}
	})
}

// TestCreateWithDeletionVectorsKeepsImpliedFeatures: a table created with
// delta.enableDeletionVectors=true from the default protocol 1/2 lists the
// features writer 2 implied (appendOnly, invariants) beside deletionVectors,
// as Delta's Protocol.forNewTable / withFeatures does; dropping them would
// leave delta.appendOnly=true unenforced by readers of the feature lists.
func TestCreateWithDeletionVectorsKeepsImpliedFeatures(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	if _, err := tb.Write(ctx, &schema.Batch{Schema: kvSchema()}, table.WriteOptions{Properties: map[string]string{txlog.PropEnableDeletionVectors: "true"}}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	p := snap.Protocol()
	wf, rf := slices.Sorted(slices.Values(p.WriterFeatures)), slices.Sorted(slices.Values(p.ReaderFeatures))
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || fmt.Sprint(wf) != "[appendOnly deletionVectors invariants]" || fmt.Sprint(rf) != "[deletionVectors]" {
		t.Fatalf("protocol %d/%d readerFeatures %v writerFeatures %v, want 3/7 [deletionVectors] [appendOnly deletionVectors invariants]", p.MinReaderVersion, p.MinWriterVersion, rf, wf)
	}
}

// TestMergeDeletionVectorPropertyWithoutFeature: delta.enableDeletionVectors
// set later on a 1/2 table by a writer that did not upgrade the protocol.
// Delta's MERGE writes deletion vectors only when the protocol has the
// feature (DeletionVectorUtils.deletionVectorsWritable) and a MERGE that
// changes no metadata does not upgrade the protocol: lakesink's merge is
// copy-on-write there and leaves the protocol as it is.
func TestMergeDeletionVectorPropertyWithoutFeature(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	createKV(t, tb, false, 4)
	snap, _ := tb.Snapshot(ctx)
	md := snap.Metadata()
	md.Configuration = map[string]string{txlog.PropEnableDeletionVectors: "true"}
	tx := tb.Log().Begin(snap)
	tx.Add(txlog.Action{MetaData: &md})
	if _, err := tx.Commit(ctx, "SET TBLPROPERTIES", nil, nil); err != nil {
		t.Fatal(err)
	}
	res, err := tb.Merge(ctx, &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(1), "p1", "new", int64(2)}}}, table.MergeOptions{Keys: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletionVectorsAdded != 0 || res.NumFilesRemoved != 1 || res.NumCopied != 3 {
		t.Fatalf("result %+v, want copy-on-write", res)
	}
	snap, _ = tb.Snapshot(ctx)
	if p := snap.Protocol(); p.MinReaderVersion != 1 || p.MinWriterVersion != 2 {
		t.Fatalf("protocol %+v changed by the merge", p)
	}
	for _, a := range snap.Files() {
		if a.DeletionVector != nil {
			t.Fatalf("file %s has a deletion vector", a.Path)
		}
	}
	if got, want := state(t, tb), "0:p0:old:1 1:p1:new:2 2:p0:old:1 3:p1:old:1"; got != want {
		t.Fatalf("table\n got %s\nwant %s", got, want)
	}
}

// TestMergeIntoMissingTableRefusedLeavesNothing: a merge that creates the
// table commits protocol and metaData in its own commit (version 0, with
// the batch's adds), so a batch it refuses, before or after planning,
// leaves no table behind; a good batch then creates it at version 0.
func TestMergeIntoMissingTableRefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		rows [][]any
		opts table.MergeOptions
		want error
	}{
		{"duplicate key", [][]any{{int64(1), "p", "a", nil}, {int64(1), "p", "b", nil}}, table.MergeOptions{Keys: []string{"id"}}, table.ErrDuplicateKey},
		{"unknown key", [][]any{{int64(1), "p", "a", nil}}, table.MergeOptions{Keys: []string{"nope"}}, table.ErrInvalidOptions},
		{"null in a NOT NULL key", [][]any{{nil, "p", "a", nil}}, table.MergeOptions{Keys: []string{"id"}}, table.ErrNullKey},
		{"bad value", [][]any{{int64(1), "p", int64(5), nil}}, table.MergeOptions{Keys: []string{"id"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := open(t)
			_, err := tb.Merge(ctx, &schema.Batch{Schema: kvSchema(), Rows: c.rows}, c.opts)
			if err == nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("merge: %v, want %v", err, c.want)
			}
			if _, err := tb.Snapshot(ctx); !errors.Is(err, txlog.ErrTableNotFound) {
				t.Fatalf("after the refused merge: snapshot %v, want no table", err)
			}
			res, err := tb.Merge(ctx, &schema.Batch{Schema: kvSchema(), Rows: [][]any{{int64(1), "p", "a", nil}}}, table.MergeOptions{Keys: []string{"id"}})
			if err != nil || res.Version != 0 || res.NumInserted != 1 {
				t.Fatalf("good merge: %+v %v, want version 0 with one insert", res, err)
			}
		})
	}
}
