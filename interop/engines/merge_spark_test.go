package engines

// Issue 16, "Spark's own MERGE": the same change batches, merged by
// lakesink (table.Merge) into one table and by Spark + Delta's MERGE INTO
// into a copy of the starting table, give the same rows, in copy-on-write
// and in deletion-vector mode. The batches hold updates, deletes, inserts,
// keys that move to another partition, late changes (a sequence older than
// the table's), several changes of one key (the highest sequence wins, the
// later row on a tie) and rows with a null key (two in one batch), which
// Spark's ON t.id = s.id never matches.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// sparkMergeSQL is the MERGE Spark runs for one change batch, stored as a
// Delta table at src with a pos column (the batch row): first deduplicated
// as table.Merge deduplicates (per key the highest seq, nulls lowest, the
// later row on a tie; null keys are never equal, so every null-key row
// stays), then MergeOptions' statement, with its "a null sequence is lower
// than any other" written out for a null t.seq.
func sparkMergeSQL(target, src string) string {
	newer := "(s.seq > t.seq OR (t.seq IS NULL AND s.seq IS NOT NULL))"
	return "MERGE INTO delta.`" + target + "` t USING (" +
		"SELECT id, part, v, seq, op FROM (" +
		"SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY seq DESC NULLS LAST, pos DESC) AS rn FROM delta.`" + src + "`" +
		") WHERE id IS NULL OR rn = 1) s ON t.id = s.id " +
		"WHEN MATCHED AND s.op = 'd' AND " + newer + " THEN DELETE " +
		"WHEN MATCHED AND " + newer + " THEN UPDATE SET * " +
		"WHEN NOT MATCHED AND s.op != 'd' THEN INSERT *"
}

func TestSparkMergeSameRowsAsLakesink(t *testing.T) {
	for _, mode := range []struct {
		name  string
		props map[string]string
	}{
		{"copy-on-write", nil},
		{"deletion vectors", map[string]string{txlog.PropEnableDeletionVectors: "true"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			needEngines(t, "Spark", "Spark MERGE vs lakesink merge ("+mode.name+")")
			ctx := context.Background()
			seed := rand.Uint64()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 0))
			dir := t.TempDir()
			ours, theirs := localURL(t, filepath.Join(dir, "lakesink")), localURL(t, filepath.Join(dir, "spark"))

			rowSchema := &schema.StructType{Fields: []schema.StructField{
				field("id", prim("long")), field("part", prim("string")), field("v", prim("string")), field("seq", prim("long")),
			}}
			parts := []string{"a", "b", "c"}
			base := &schema.Batch{Schema: rowSchema}
			for i := range 30 {
				base.Rows = append(base.Rows, []any{int64(i), parts[i%3], fmt.Sprint("base", i), int64(10)})
			}
			base.Rows = append(base.Rows, []any{nil, "a", "base-null", int64(10)}, []any{int64(30), "b", "base-nullseq", nil})
			write(t, ours, base, table.WriteOptions{PartitionColumns: []string{"part"}, Properties: mode.props})
			if err := os.CopyFS(theirs, os.DirFS(ours)); err != nil {
				t.Fatal(err)
			}

			tb, err := table.Open(ctx, ours)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			changeSchema := &schema.StructType{Fields: append(append([]schema.StructField(nil), rowSchema.Fields...), field("op", prim("string")))}
			srcSchema := &schema.StructType{Fields: append(append([]schema.StructField(nil), changeSchema.Fields...), field("pos", prim("long")))}
			var total struct{ ins, upd, del int64 }
			for batch := range 3 {
				b := &schema.Batch{Schema: changeSchema}
				for i := range 16 {
					var id any = int64(rng.IntN(40))
					if i < 2 && batch%2 == 0 {
						id = nil // two null keys in one batch: both inserted
					}
					op := []string{"c", "u", "u", "d"}[rng.IntN(4)]
					seq := int64(5 + batch*3 + rng.IntN(8)) // from older than the base's 10 to newer
					b.Rows = append(b.Rows, []any{id, parts[rng.IntN(3)], fmt.Sprintf("b%d-%d", batch, i), seq, op})
				}
				res, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}, SequenceBy: "seq", DeleteWhen: "op = 'd'", AppID: "spark-merge", Version: int64(batch)})
				if err != nil {
					t.Fatalf("lakesink merge of batch %d: %v", batch, err)
				}
				total.ins += res.NumInserted
				total.upd += res.NumUpdated
				total.del += res.NumDeleted

				src := &schema.Batch{Schema: srcSchema}
				for pos, r := range b.Rows {
					src.Rows = append(src.Rows, append(append([]any(nil), r...), int64(pos)))
				}
				srcPath := localURL(t, filepath.Join(dir, fmt.Sprintf("changes-%d", batch)))
				write(t, srcPath, src, table.WriteOptions{})
				srv.must(t, map[string]any{"op": "spark_sql", "sql": sparkMergeSQL(theirs, srcPath)}, nil)

				got, want := engineRows(sparkRead(t, theirs, "delta", nil).Rows), lakesinkRows(t, ours)
				sameRows(t, fmt.Sprintf("after batch %d: Spark's MERGE (Spark read) vs lakesink's merge (lakesink read)", batch), got, want)
				if t.Failed() {
					t.Fatalf("batch %d rows: %v", batch, b.Rows)
				}
				t.Logf("batch %d: %d rows alike (lakesink: %d inserted, %d updated, %d deleted)", batch, len(want), res.NumInserted, res.NumUpdated, res.NumDeleted)
			}
			if total.ins == 0 || total.upd == 0 || total.del == 0 {
				t.Fatalf("the batches did not insert, update and delete (%+v): the comparison is too weak", total)
			}
			// Spark reads lakesink's table with the same rows too.
			checkSpark(t, ours, ours, engineRows(sparkRead(t, theirs, "delta", nil).Rows))
			if mode.props != nil {
				// Both sides wrote deletion vectors: neither rewrote files.
				var hist []map[string]any
				srv.must(t, map[string]any{"op": "spark_sql", "sql": "DESCRIBE HISTORY delta.`" + theirs + "`"}, &hist)
				var dvs []string
				for _, h := range hist {
					if h["operation"] == "MERGE" {
						m, _ := h["operationMetrics"].(map[string]any)
						dvs = append(dvs, fmt.Sprint(m["numTargetDeletionVectorsAdded"]))
					}
				}
				t.Logf("Spark's MERGE numTargetDeletionVectorsAdded per batch: %s", strings.Join(dvs, " "))
			}
		})
	}
}

// TestLakesinkMergesAfterSparkEnablesDeletionVectors: on a copy-on-write
// table lakesink created (protocol 1/2), Spark's ALTER TABLE SET
// TBLPROPERTIES (delta.enableDeletionVectors = true) upgrades the protocol
// in that commit (Delta's OptimisticTransactionImpl.updateMetadata:
// reader 3 / writer 7, the features 1/2 implied made explicit); lakesink's
// merge then writes deletion vectors, and Spark reads the rows of the model.
func TestLakesinkMergesAfterSparkEnablesDeletionVectors(t *testing.T) {
	needEngines(t, "Spark", "lakesink MERGE after Spark enables deletion vectors")
	ctx := context.Background()
	path := localURL(t, filepath.Join(t.TempDir(), "later-dv"))
	base := smallBatch(0, 20, false)
	write(t, path, base, table.WriteOptions{PartitionColumns: []string{"part"}})
	srv.must(t, map[string]any{"op": "spark_sql", "sql": "ALTER TABLE delta.`" + path + "` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"}, nil)

	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Protocol()
	t.Logf("protocol after Spark's ALTER TABLE: %d/%d reader %v writer %v", p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures)
	for _, f := range []string{"appendOnly", "invariants", "deletionVectors"} {
		if !slices.Contains(p.WriterFeatures, f) {
			t.Errorf("Spark's upgrade: writerFeatures %v lack %s", p.WriterFeatures, f)
		}
	}
	changeSchema := &schema.StructType{Fields: append(append([]schema.StructField(nil), base.Schema.Fields...), field("op", prim("string")))}
	b := &schema.Batch{Schema: changeSchema, Rows: [][]any{{int64(3), "a", 30.5, "u"}, {int64(4), "b", 0.0, "d"}, {int64(50), "c", 5.0, "c"}}}
	res, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletionVectorsAdded == 0 || res.NumCopied != 0 {
		t.Fatalf("merge after the upgrade: %+v, want deletion vectors and no copied rows", res)
	}
	want := &schema.Batch{Schema: base.Schema}
	for _, r := range base.Rows {
		switch r[0].(int64) {
		case 3:
			want.Rows = append(want.Rows, []any{int64(3), "a", 30.5})
		case 4:
		default:
			want.Rows = append(want.Rows, r)
		}
	}
	want.Rows = append(want.Rows, []any{int64(50), "c", 5.0})
	checkSpark(t, path, path, batchRows(want))
}
