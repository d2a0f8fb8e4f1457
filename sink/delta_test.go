package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

var sch = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong},
	{Name: "origin", Type: schema.TypeString, Nullable: true},
	{Name: "at", Type: schema.TypeTimestamp, Nullable: true},
}}

func batch(batchID int64, n int) *schema.Batch {
	b := &schema.Batch{Schema: sch}
	for i := 0; i < n; i++ {
		id := batchID*1000 + int64(i)
		b.Rows = append(b.Rows, []any{id, []string{"SFO", "JFK", ""}[i%3], time.UnixMicro(id * 1_000_001).UTC()})
	}
	return b
}

// readIDs reads the id column of every live file of the latest snapshot.
func readIDs(t *testing.T, tb *table.Table) []int64 {
	t.Helper()
	ctx := context.Background()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &schema.StructType{Fields: sch.Fields[:1]}
	var ids []int64
	for _, a := range snap.Files() {
		key, err := snap.FileKey(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquetio.OpenFile(ctx, tb.Store(), key, a.Size)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.ReadAll(ctx, want, parquetio.ReadOptions{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			ids = append(ids, r[0].(int64))
		}
	}
	slices.Sort(ids)
	return ids
}

func expectIDs(batches map[int64]int) []int64 {
	var ids []int64
	for b, n := range batches {
		for i := 0; i < n; i++ {
			ids = append(ids, b*1000+int64(i))
		}
	}
	slices.Sort(ids)
	return ids
}

func newSink(t *testing.T, url string, o sink.Options) *sink.Delta {
	t.Helper()
	s, err := sink.NewDelta(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAppendCommitsBatchWithTxnAndReplayIsSkipped(t *testing.T) {
	ctx := context.Background()
	s := newSink(t, "mem://"+t.Name(), sink.Options{QueryID: "q-1", PartitionColumns: []string{"origin"}})
	for b := int64(0); b < 3; b++ {
		res, err := s.AddBatch(ctx, b, batch(b, 10))
		if err != nil {
			t.Fatal(err)
		}
		if res.Skipped || res.Version != b || res.NumRows != 10 || res.NumFiles != 3 {
			t.Fatalf("batch %d: %+v", b, res)
		}
	}
	// Replays of committed batches (a restart that reruns batch 1 and 2) are no-ops.
	for _, b := range []int64{1, 2, 0} {
		res, err := s.AddBatch(ctx, b, batch(b, 10))
		if err != nil || !res.Skipped {
			t.Fatalf("replay of batch %d: %+v, %v; want skipped", b, res, err)
		}
	}
	if got, want := readIDs(t, s.Table()), expectIDs(map[int64]int{0: 10, 1: 10, 2: 10}); !slices.Equal(got, want) {
		t.Fatalf("ids = %v\nwant %v", got, want)
	}
	acts, err := s.Table().Log().ReadCommit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ci txlog.CommitInfo
	var txn *txlog.Txn
	for _, a := range acts {
		if a.CommitInfo != nil {
			ci = a.CommitInfo
		}
		if a.Txn != nil {
			txn = a.Txn
		}
		if a.Add != nil && !a.Add.DataChange {
			t.Errorf("add %s: dataChange=false, want true", a.Add.Path)
		}
		if a.Add != nil && !strings.Contains(a.Add.Stats, `"numRecords"`) {
			t.Errorf("add %s without stats", a.Add.Path)
		}
	}
	if txn == nil || txn.AppID != "q-1" || txn.Version != 2 || txn.LastUpdated == nil {
		t.Fatalf("txn = %+v, want appId q-1 version 2 with lastUpdated", txn)
	}
	params := ci.StringMap("operationParameters")
	if ci.Operation() != "STREAMING UPDATE" || params["outputMode"] != "Append" || params["queryId"] != "q-1" || params["epochId"] != "2" {
		t.Fatalf("commitInfo = %s %v", ci.Operation(), params)
	}
	if m := ci.StringMap("operationMetrics"); m["numOutputRows"] != "10" || m["numFiles"] != "3" {
		t.Fatalf("operationMetrics = %v", m)
	}
	if e, _ := ci.String("engineInfo"); !strings.HasPrefix(e, "lakesink/") {
		t.Fatalf("engineInfo = %q", e)
	}
	// Null and empty-string partition values go to __HIVE_DEFAULT_PARTITION__ with a null value.
	snap, _ := s.Table().Snapshot(ctx)
	var sawNull bool
	for _, a := range snap.Files() {
		if strings.HasPrefix(a.Path, "origin=__HIVE_DEFAULT_PARTITION__/") {
			sawNull = a.PartitionValues["origin"] == nil
		}
	}
	if !sawNull {
		t.Fatal("no origin=__HIVE_DEFAULT_PARTITION__ file with a null partition value")
	}
}

func TestCompleteModeReplacesTableAtomically(t *testing.T) {
	ctx := context.Background()
	s := newSink(t, "mem://"+t.Name(), sink.Options{QueryID: "agg", OutputMode: sink.Complete})
	for b := int64(0); b < 3; b++ {
		if _, err := s.AddBatch(ctx, b, batch(b, 5+int(b))); err != nil {
			t.Fatal(err)
		}
		if got, want := readIDs(t, s.Table()), expectIDs(map[int64]int{b: 5 + int(b)}); !slices.Equal(got, want) {
			t.Fatalf("after batch %d: ids %v, want %v", b, got, want)
		}
	}
	h, _ := s.Table().History(ctx, 1)
	if got := h[0].CommitInfo.StringMap("operationParameters")["outputMode"]; got != "Complete" {
		t.Fatalf("outputMode = %q", got)
	}
}

func TestUpdateModeNeedsMergeKeys(t *testing.T) {
	_, err := sink.NewDelta(context.Background(), "mem://"+t.Name(), sink.Options{QueryID: "q", OutputMode: sink.Update})
	if !errors.Is(err, sink.ErrInvalidOptions) || !strings.Contains(err.Error(), "MergeKeys") {
		t.Fatalf("err = %v, want ErrInvalidOptions naming MergeKeys", err)
	}
	if _, err := sink.NewDelta(context.Background(), "mem://"+t.Name(), sink.Options{QueryID: "q", MergeKeys: []string{"id"}}); !errors.Is(err, sink.ErrInvalidOptions) {
		t.Fatalf("merge keys in append mode: %v, want ErrInvalidOptions", err)
	}
	if _, err := sink.NewDelta(context.Background(), "mem://"+t.Name(), sink.Options{}); !errors.Is(err, sink.ErrInvalidOptions) {
		t.Fatalf("no query id: %v, want ErrInvalidOptions", err)
	}
}

// TestUpdateModeMerges: update mode merges each batch by key in one MERGE
// commit with the batch's txn; a replayed batch is skipped.
func TestUpdateModeMerges(t *testing.T) {
	ctx := context.Background()
	s := newSink(t, "mem://"+t.Name(), sink.Options{QueryID: "q", OutputMode: sink.Update, MergeKeys: []string{"id"}, PartitionColumns: []string{"origin"}})
	if _, err := s.AddBatch(ctx, 0, batch(0, 6)); err != nil {
		t.Fatal(err)
	}
	// batch 1: ids 0..3 again (updates, new origin) and 1000..1001 (inserts)
	b := batch(0, 4)
	for _, r := range b.Rows {
		r[1] = "LAX"
	}
	b.Rows = append(b.Rows, batch(1, 2).Rows...)
	res, err := s.AddBatch(ctx, 1, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.NumUpdated != 4 || res.NumInserted != 2 || res.NumDeleted != 0 || res.Skipped {
		t.Fatalf("result %+v", res)
	}
	if got, want := readIDs(t, s.Table()), expectIDs(map[int64]int{0: 6, 1: 2}); !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	h, _ := s.Table().History(ctx, 1)
	ci := h[0].CommitInfo
	if ci.Operation() != "MERGE" || ci.StringMap("operationParameters")["outputMode"] != "Update" || ci.StringMap("operationParameters")["epochId"] != "1" {
		t.Fatalf("commitInfo %s %v", ci.Operation(), ci.StringMap("operationParameters"))
	}
	if res, err := s.AddBatch(ctx, 1, b); err != nil || !res.Skipped {
		t.Fatalf("replay: %+v %v", res, err)
	}
}

func TestEmptyBatchRecordsProgress(t *testing.T) {
	ctx := context.Background()
	s := newSink(t, "mem://"+t.Name(), sink.Options{QueryID: "q"})
	if _, err := s.AddBatch(ctx, 0, batch(0, 3)); err != nil {
		t.Fatal(err)
	}
	res, err := s.AddBatch(ctx, 1, &schema.Batch{Schema: sch})
	if err != nil || res.Skipped || res.NumFiles != 0 || res.Version != 1 {
		t.Fatalf("empty batch: %+v, %v", res, err)
	}
	snap, _ := s.Table().Snapshot(ctx)
	if v, _ := snap.TxnVersion("q"); v != 1 || snap.NumFiles() != 1 {
		t.Fatalf("txn %d, files %d; want 1, 1", v, snap.NumFiles())
	}
}

func TestBadRowFailsBatchNamingBatchRowAndField(t *testing.T) {
	ctx := context.Background()
	s := newSink(t, "mem://"+t.Name(), sink.Options{QueryID: "q"})
	b := batch(7, 4)
	b.Rows[3][0] = "not a long"
	_, err := s.AddBatch(ctx, 7, b)
	var be *sink.BatchError
	var re *schema.RowError
	if !errors.As(err, &be) || be.BatchID != 7 || !errors.As(err, &re) || re.Row != 3 || re.Field != "id" {
		t.Fatalf("err = %v, want a BatchError for batch 7 wrapping a RowError at row 3, field id", err)
	}
	if ok, _ := s.Table().Exists(ctx); ok {
		t.Fatal("a failed first batch created the table")
	}
}

// Several sinks with different query ids append concurrently; two sinks with
// the same query id never commit one batch twice.
func TestConcurrentSinks(t *testing.T) {
	ctx := context.Background()
	url := "file://" + t.TempDir()
	if _, err := table.Create(ctx, url, table.CreateOptions{Schema: sch}); err != nil {
		t.Fatal(err)
	}
	const batches = 10
	queries := []string{"a", "b", "c", "a"} // "a" runs twice
	var wg sync.WaitGroup
	errs := make(chan error, len(queries)*batches)
	for qi, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sink.NewDelta(ctx, url, sink.Options{QueryID: q})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for b := int64(0); b < batches; b++ {
				// Query "a"'s two instances write the same rows per batch.
				base := int64(qi) * 100
				if q == "a" {
					base = 0
				}
				if _, err := s.AddBatch(ctx, b, batch(base+b, 2)); err != nil {
					errs <- fmt.Errorf("query %s batch %d: %w", q, b, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tb, err := table.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int{}
	for _, base := range []int64{0, 100, 200} {
		for b := int64(0); b < batches; b++ {
			want[base+b] = 2
		}
	}
	if got, w := readIDs(t, tb), expectIDs(want); !slices.Equal(got, w) {
		t.Fatalf("got %d ids, want %d (a duplicate or lost batch)\ngot  %v\nwant %v", len(got), len(w), got, w)
	}
	versions, err := tb.Log().Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range versions {
		if v != int64(i) {
			t.Fatalf("versions not contiguous: %v", versions)
		}
	}
}

func TestBatchParametersRecordedPerCommit(t *testing.T) {
	ctx := context.Background()
	s := newSink(t, "mem://"+t.Name(), sink.Options{
		QueryID:             "q-bp",
		OperationParameters: txlog.OperationParameters{"sourceUrl": "kafka://b/flights"},
		BatchParameters: func(batchID int64) txlog.OperationParameters {
			// queryId must not be overridable: the txn appId is the truth.
			return txlog.OperationParameters{"sourceEndOffset": fmt.Sprintf(`{"flights":{"0":%d}}`, (batchID+1)*10), "queryId": "evil"}
		},
	})
	for b := int64(0); b < 2; b++ {
		if _, err := s.AddBatch(ctx, b, batch(b, 3)); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := s.Table().History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		version int64
		want    string
	}{
		{name: "batch 0", version: 0, want: `{"flights":{"0":10}}`},
		{name: "batch 1", version: 1, want: `{"flights":{"0":20}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var params map[string]string
			for _, c := range hist {
				if c.Version == tc.version {
					params = c.CommitInfo.StringMap("operationParameters")
				}
			}
			if params["sourceEndOffset"] != tc.want || params["sourceUrl"] != "kafka://b/flights" || params["queryId"] != "q-bp" ||
				params["epochId"] != fmt.Sprint(tc.version) {
				t.Fatalf("version %d operationParameters = %v, want sourceEndOffset %s, queryId q-bp", tc.version, params, tc.want)
			}
		})
	}
}
