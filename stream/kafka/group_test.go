package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/table"
)

// TestGroupOverlappingSplitsWriteEachRecordOnce: two workers given the
// same partitions (an overlapping --kafka-assign: the worst a rebalance
// race can do) both read and commit; each commit checks every partition's
// txn, so the loser of each race abandons its batch and resumes after the
// table's version. At the end every record is in the table once and each
// partition's txn is its last offset, and some batch was abandoned.
func TestGroupOverlappingSplitsWriteEachRecordOnce(t *testing.T) {
	const parts, total = 2, 4000
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range total {
		recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	url := "file://" + t.TempDir()
	var mu sync.Mutex
	abandoned := 0
	run := func() error {
		tb, err := table.Open(ctx, url)
		if err != nil {
			return err
		}
		defer tb.Close()
		o := kafka.DefaultGroupOptions()
		o.Source.Brokers = c.ListenAddrs()
		o.Source.Topics = []string{"t"}
		o.Source.StartingOffsets = "earliest"
		o.Group = "g"
		o.Assign = map[string][]int32{"t": {0, 1}}
		o.Sink = sink.NewDeltaTable(tb, sink.Options{QueryID: "kafka-group-g"})
		o.MaxRecordsPerBatch = 150
		o.MaxDelay = 20 * time.Millisecond
		o.AvailableNow = true
		o.Progress = func(p kafka.GroupProgress) {
			if p.Abandoned {
				mu.Lock()
				abandoned++
				mu.Unlock()
			}
		}
		g, err := kafka.NewGroup(o)
		if err != nil {
			return err
		}
		return g.Run(ctx)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- run() }()
	}
	for range 2 {
		if err := <-errs; err != nil && !errors.Is(err, sink.ErrTxnMismatch) {
			t.Fatal(err)
		}
	}
	tb, err := table.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(parts) {
		app := kafka.AppID("g", kafka.TP{Topic: "t", Partition: p})
		if v, ok := snap.TxnVersion(app); !ok || v != total/parts-1 {
			t.Fatalf("txn of %s = %d (%v), want %d", app, v, ok, total/parts-1)
		}
	}
	var rows int64
	for _, a := range snap.Files() {
		var n int64
		if _, err := sscanRecords(a.Stats, &n); err != nil {
			t.Fatal(err)
		}
		rows += n
	}
	if rows != total {
		t.Fatalf("table holds %d rows, want %d: a record was lost or doubled", rows, total)
	}
	t.Logf("%d batches abandoned", abandoned)
}

func sscanRecords(stats string, n *int64) (int, error) {
	return fmt.Sscanf(stats, `{"numRecords":%d`, n)
}
