package sink_test

// Hostile-input tests (issue #9) through the Delta sink: a batch whose
// partition column has 100,000 distinct values (one commit of 100,000 adds),
// and a batch whose schema Parquet cannot hold. Larger sizes run with
// LAKESINK_BOMB_FULL=1.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/heaptest"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
)

// TestBombManyPartitionsOneBatch: 5,000 distinct partition values in one
// batch (100,000 with LAKESINK_BOMB_FULL=1) on a mem:// table: one file per
// partition and ONE commit holding every add and the txn. (On this
// machine's local disk each data file costs ~1.3 ms of fsync, so 5,000
// partitions take ~7 s there: the in-memory store keeps the test fast and
// measures our own cost.) The heap holds
// the batch, the written-file list, the commit's actions and its JSON, and
// WriteOptions.Workers open writers; bound 8 KiB per partition + 64 MiB.
// The commit file is read back as the next snapshot.
func TestBombManyPartitionsOneBatch(t *testing.T) {
	n := 5_000 // the heap bound is per partition
	if os.Getenv("LAKESINK_BOMB_FULL") == "1" {
		n = 100_000
	}
	ctx := context.Background()
	url := "mem://" + t.Name()
	s, err := sink.NewDelta(ctx, url, sink.Options{QueryID: "bomb", PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "part", Type: schema.TypeString, Nullable: true},
	}}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), fmt.Sprintf("p%06d", i)}
	}
	var res sink.Result
	start := time.Now()
	peak := heaptest.Peak(func() { res, err = s.AddBatch(ctx, 0, &schema.Batch{Schema: sch, Rows: rows}) })
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if res.NumFiles != n || res.NumRows != int64(n) {
		t.Fatalf("result %+v, want %d files and rows", res, n)
	}
	t.Logf("%d partitions in one batch: %v (%.0f µs/partition), peak heap %.1f MiB (%.0f B/partition)",
		n, elapsed.Round(time.Millisecond), float64(elapsed.Microseconds())/float64(n), float64(peak)/(1<<20), float64(peak)/float64(n))
	if bound := uint64(8192*n + 64<<20); peak > bound {
		t.Errorf("peak heap %.1f MiB > bound %.1f MiB", float64(peak)/(1<<20), float64(bound)/(1<<20))
	}
	tb, err := table.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	start = time.Now()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.NumFiles() != n || snap.Version() != 0 {
		t.Fatalf("snapshot v%d with %d files, want v0 with %d", snap.Version(), snap.NumFiles(), n)
	}
	t.Logf("replay of the %d-add commit: %v", n, time.Since(start).Round(time.Millisecond))
}

// TestBombDeepSchemaBatch: a batch whose column lies 256 Parquet levels deep
// (255 nested nullable structs) is refused with schema.ErrSchema naming
// the column, as a *BatchError; nothing is committed and no data file is
// written. (Before, parquet-go panicked in the writer goroutine and took the
// process down.)
func TestBombDeepSchemaBatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sink.NewDelta(ctx, "file://"+dir, sink.Options{QueryID: "bomb"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var typ schema.DataType = schema.TypeLong
	var v any = int64(1)
	for range 255 {
		typ = &schema.StructType{Fields: []schema.StructField{{Name: "s", Type: typ, Nullable: true}}}
		v = []any{v}
	}
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "c", Type: typ, Nullable: true}}}
	_, err = s.AddBatch(ctx, 0, &schema.Batch{Schema: sch, Rows: [][]any{{v}}})
	var be *sink.BatchError
	if !errors.As(err, &be) || !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "column c.s.s") ||
		!strings.Contains(err.Error(), "256 Parquet levels deep") {
		t.Fatalf("AddBatch = %v, want *BatchError wrapping ErrSchema naming column c.s.s...", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("refused batch left %d entries in the table directory (first %s)", len(entries), entries[0].Name())
	}
}
