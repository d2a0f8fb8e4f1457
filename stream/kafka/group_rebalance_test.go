package kafka_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/table"
)

// polledHook is a kgo hook that closes polled when a poll first returns
// a record.
type polledHook struct {
	once   sync.Once
	polled chan struct{}
}

func (h *polledHook) OnFetchRecordUnbuffered(_ *kgo.Record, polled bool) {
	if polled {
		h.once.Do(func() { close(h.polled) })
	}
}

// TestGroupRebalanceDoesNotWaitForTheBatch: a worker holding a batch that
// is not due (MaxDelay an hour, no record or byte cap reached) when a
// second worker joins commits that batch at once, marked Rebalance, so the
// rebalance goes on and the second worker gets partitions. Before, the
// worker blocked the rebalance (BlockRebalanceOnPoll) until its batch was
// due: every join or leave stalled the whole group for up to the trigger
// interval, twice per cooperative rebalance (3 workers on a 60,000-record
// topic were 6x slower than 1). Without the fix no batch is committed
// before the hour, and the test fails at its hang bound.
func TestGroupRebalanceDoesNotWaitForTheBatch(t *testing.T) {
	const parts, total = 4, 400
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

	// A bound on a hang, not a measurement.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	url := "file://" + t.TempDir()
	type batch struct {
		worker string
		p      kafka.GroupProgress
	}
	batches := make(chan batch, 100)
	var running sync.WaitGroup
	defer running.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	start := func(name string, extra ...kgo.Opt) {
		tb, err := table.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		o := kafka.DefaultGroupOptions()
		o.Source.Brokers = c.ListenAddrs()
		o.Source.Topics = []string{"t"}
		o.Source.StartingOffsets = "earliest"
		o.Source.ExtraClientOpts = extra
		o.Group = "g"
		o.Sink = sink.NewDeltaTable(tb, sink.Options{QueryID: "kafka-group-g"})
		o.MaxDelay = time.Hour
		o.MaxRecordsPerBatch = 1_000_000
		o.Progress = func(p kafka.GroupProgress) { batches <- batch{name, p} }
		g, err := kafka.NewGroup(o)
		if err != nil {
			t.Fatal(err)
		}
		running.Add(1)
		go func() {
			defer running.Done()
			defer tb.Close()
			if err := g.Run(runCtx); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("worker %s: %v", name, err)
			}
		}()
	}

	hook := &polledHook{polled: make(chan struct{})}
	start("a", kgo.WithHooks(hook))
	select {
	case <-hook.polled: // a holds a batch that is due in an hour
	case <-ctx.Done():
		t.Fatal("worker a polled no record")
	}
	start("b")

	// a commits what it holds as soon as b's join waits for it.
	var b batch
	select {
	case b = <-batches:
	case <-ctx.Done():
		t.Fatal("no batch committed: the rebalance waits for a batch due in an hour")
	}
	if b.worker != "a" || !b.p.Rebalance || b.p.Version < 0 || b.p.NumInputRecords == 0 {
		t.Fatalf("first batch: worker %s %+v, want a's committed batch marked Rebalance", b.worker, b.p)
	}

	// The rebalance completes: both members own partitions.
	adm := kadm.NewClient(cl)
	for {
		described, err := adm.DescribeGroups(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		d := described["g"]
		owning := 0
		for _, m := range d.Members {
			if ca, ok := m.Assigned.AsConsumer(); ok {
				for _, tp := range ca.Topics {
					if len(tp.Partitions) > 0 {
						owning++
						break
					}
				}
			}
		}
		if d.State == "Stable" && len(d.Members) == 2 && owning == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s with %d members, %d owning partitions: the rebalance did not complete", d.State, len(d.Members), owning)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	running.Wait()
	close(batches)
	for b := range batches {
		// Nothing else was due: every batch was committed for a rebalance.
		if !b.p.Rebalance {
			t.Fatalf("worker %s committed a batch not marked Rebalance: %+v", b.worker, b.p)
		}
	}
}
