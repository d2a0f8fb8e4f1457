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

// TestGroupRebalanceDoesNotWaitForTheBatch: a worker holding a batch that
// is not due (MaxDelay an hour, no record or byte cap reached, its backlog
// committed just before) when a second worker joins commits that batch at
// once, marked Rebalance, so the rebalance goes on and the second worker
// gets partitions. Before, the worker blocked the rebalance
// (BlockRebalanceOnPoll) until its batch was due: every join or leave
// stalled the whole group for up to the trigger interval, twice per
// cooperative rebalance. Without the fix no batch is committed before the
// hour, and the test fails at its hang bound.
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
	produce := func(from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, total)

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

	hook := &pollHook{high: -1}
	start("a", kgo.WithHooks(hook))
	// a commits the backlog once read (TestGroupCommitsWhatIsAvailableAtOnce).
	for committed := int64(0); committed < total; {
		select {
		case b := <-batches:
			if b.p.Version < 0 {
				t.Fatalf("worker %s: batch %+v, want a committed batch", b.worker, b.p)
			}
			committed += b.p.NumInputRecords
		case <-ctx.Done():
			t.Fatal("worker a did not commit the backlog")
		}
	}
	// Then a holds records that are due in an hour: a poll returned one
	// of them and the loop polled again without committing.
	produce(total, total+parts)
	for {
		polls, high, highPoll := hook.state()
		if high >= total/parts && polls > highPoll {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("worker a did not poll the new records (polls %d, highest offset %d)", polls, high)
		case <-time.After(5 * time.Millisecond):
		}
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
		// Nothing else was due: every later batch was committed for a rebalance.
		if !b.p.Rebalance {
			t.Fatalf("worker %s committed a batch not marked Rebalance: %+v", b.worker, b.p)
		}
	}
}

// pollHook counts polls (HookPollStart) and records the highest offset a
// poll returned, and which poll returned it.
type pollHook struct {
	mu       sync.Mutex
	polls    int
	high     int64
	highPoll int
}

func (h *pollHook) OnPollStart(context.Context) {
	h.mu.Lock()
	h.polls++
	h.mu.Unlock()
}

func (h *pollHook) OnFetchRecordUnbuffered(r *kgo.Record, polled bool) {
	if polled {
		h.mu.Lock()
		if r.Offset > h.high {
			h.high, h.highPoll = r.Offset, h.polls
		}
		h.mu.Unlock()
	}
}

func (h *pollHook) state() (polls int, high int64, highPoll int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.polls, h.high, h.highPoll
}

// TestGroupCommitsWhatIsAvailableAtOnce: a worker (MaxDelay an hour,
// batches of 150 records) that has read its partitions to their end
// commits its 400-record backlog at once, in two full batches and the
// rest, as Spark's interval trigger runs its first micro-batch at once;
// records that arrive after that last batch, which was not full, wait for
// the next tick (at most one batch that is not full per MaxDelay), so a
// later poll that returned them committed nothing. Before, every batch
// that was not full waited MaxDelay after its first record: 3 workers
// sharing a 60,000-record backlog (20,000 records each, a batch cap of
// 30,000) each waited the whole --trigger interval. Without the change
// (or with the tick counted from any commit, full ones included) the test
// fails at its hang bound.
func TestGroupCommitsWhatIsAvailableAtOnce(t *testing.T) {
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
	produce := func(from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, total)

	// A bound on a hang, not a measurement.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tb, err := table.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	hook := &pollHook{high: -1}
	batches := make(chan kafka.GroupProgress, 100)
	o := kafka.DefaultGroupOptions()
	o.Source.Brokers = c.ListenAddrs()
	o.Source.Topics = []string{"t"}
	o.Source.StartingOffsets = "earliest"
	o.Source.ExtraClientOpts = []kgo.Opt{kgo.WithHooks(hook)}
	o.Group = "g"
	o.Sink = sink.NewDeltaTable(tb, sink.Options{QueryID: "kafka-group-g"})
	o.MaxDelay = time.Hour
	o.MaxRecordsPerBatch = 150
	o.Progress = func(p kafka.GroupProgress) { batches <- p }
	g, err := kafka.NewGroup(o)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- g.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()

	// The backlog is committed once read: full batches, then the rest.
	committed, full := int64(0), 0
	for committed < total {
		select {
		case p := <-batches:
			if p.Version < 0 || p.Rebalance {
				t.Fatalf("batch %+v, want a committed batch", p)
			}
			committed += p.NumInputRecords
			if p.NumInputRecords == o.MaxRecordsPerBatch {
				full++
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d records committed: a drained batch waits for MaxDelay", committed, total)
		}
	}
	if committed != total || full != total/150 {
		t.Fatalf("%d records committed in %d full batches, want %d in %d", committed, full, total, total/150)
	}

	// Records produced now wait for the next tick: once a poll returned
	// one of them and the loop polled again (it decided not to
	// commit), nothing more was committed.
	produce(total, total+parts)
	for {
		polls, high, highPoll := hook.state()
		if high >= total/parts && polls > highPoll {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the worker did not poll the new records and then poll again (polls %d, highest offset %d)", polls, high)
		case <-time.After(5 * time.Millisecond):
		}
	}
	select {
	case p := <-batches:
		t.Fatalf("a batch of %d records was committed before the next tick (MaxDelay an hour): %+v", p.NumInputRecords, p)
	default:
	}
}
