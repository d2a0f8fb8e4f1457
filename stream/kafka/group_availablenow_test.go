package kafka_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/table"
)

// TestGroupAvailableNowStops: a consumer-group worker (not a static split)
// with AvailableNow writes every record of the topic, or none of an empty
// one, and returns. kgo joins the group while NewClient runs, so the
// assignment callback could run before the admin client it lists offsets
// with existed: Run then panicked (1 in 3 runs on kfake; the runs repeat to
// meet that window).
func TestGroupAvailableNowStops(t *testing.T) {
	for i, total := range []int{300, 0, 300, 0, 300} {
		t.Run(strconv.Itoa(i)+"-"+strconv.Itoa(total), func(t *testing.T) {
			const parts = 3
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "t"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if total > 0 {
				cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
				if err != nil {
					t.Fatal(err)
				}
				var recs []*kgo.Record
				for i := range total {
					recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))})
				}
				err = cl.ProduceSync(context.Background(), recs...).FirstErr()
				cl.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, not blocks the suite
			defer cancel()
			tb, err := table.Open(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			o := kafka.DefaultGroupOptions()
			o.Source.Brokers = c.ListenAddrs()
			o.Source.Topics = []string{"t"}
			o.Source.StartingOffsets = "earliest"
			o.Group = "g"
			o.Sink = sink.NewDeltaTable(tb, sink.Options{QueryID: "kafka-group-g"})
			o.MaxDelay = 50 * time.Millisecond
			o.AvailableNow = true
			g, err := kafka.NewGroup(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Run(ctx); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if total == 0 {
				return
			}
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			for _, a := range snap.Files() {
				var n int64
				if _, err := sscanRecords(a.Stats, &n); err != nil {
					t.Fatal(err)
				}
				rows += n
			}
			if rows != int64(total) {
				t.Fatalf("table holds %d rows, want %d", rows, total)
			}
		})
	}
}
