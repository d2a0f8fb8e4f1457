package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/lakesink/lakesink/metrics"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
)

// GroupOptions configure a Group: one worker of a consumer group (or of a
// static split) that appends a topic's records to a Delta table.
type GroupOptions struct {
	// Source holds the connection (Brokers, TLS, SASL, Consumer,
	// ExtraClientOpts), the Topics (TopicPattern is refused), the row
	// format (ValueFormat, Schema, IncludeHeaders, OnBadRecord, formats)
	// and StartingOffsets: where a partition the table has no txn for
	// starts ("earliest", "latest" or Spark's JSON object).
	Source Options
	// Group is the consumer group id, and the prefix of every txn appId:
	// <Group>-<topic>-<partition>. Required.
	Group string
	// Assign, when set, reads exactly these partitions (Spark's assign
	// option, {"topic":[0,1]}) with no group membership: a static split.
	// Group still names the appIds.
	Assign map[string][]int32
	// Sink is the Delta table (append mode) the records go to.
	Sink *sink.Delta
	// MaxRecordsPerBatch commits a batch once it holds this many records
	// (maxOffsetsPerTrigger, over all partitions of the worker). Default
	// 100,000.
	MaxRecordsPerBatch int64
	// MaxDelay is the longest a record waits before its batch commits (the
	// trigger interval): a batch commits MaxDelay after its first record;
	// earlier once the worker has read every owned partition to its end
	// offset and MaxDelay has passed since the worker's previous commit of
	// a batch that was not full (as Spark's interval trigger starts a
	// micro-batch of what is available at each tick, the first at once),
	// or when a rebalance is waiting for it (see Group). So a worker
	// commits at most one batch that is not full per MaxDelay (besides
	// those a rebalance waits for), and the end of a backlog read in full
	// batches does not wait. Default 1s.
	MaxDelay time.Duration
	// TargetBatchBytes commits a batch once its keys and values hold this
	// many bytes, so that many workers do not each write tiny files.
	// Default 128 MiB.
	TargetBatchBytes int64
	// AvailableNow stops Run once every partition the worker owns was
	// written up to the end offset it had when the worker got it.
	AvailableNow bool
	// MaxConsecutiveFailures: Run returns the error of a batch that failed
	// this many times in a row (storage or commit errors; each retry
	// backs off). Default 5.
	MaxConsecutiveFailures int
	// Metrics, when set, receives every batch (records, bytes, files,
	// durations, conflicts, retries) and the lag of each owned partition
	// (metrics.NewIngest on the caller's registry).
	Metrics *metrics.Ingest
	// Progress, when set, is called after each committed or abandoned
	// batch, from Run's goroutine.
	Progress func(GroupProgress)
	// Logger receives rebalance and retry messages. Default slog.Default().
	Logger *slog.Logger
}

// GroupProgress reports one batch of a Group.
type GroupProgress struct {
	// Version is the table version committed (-1 when abandoned or failed).
	Version int64 `json:"version"`
	// NumInputRecords read from Kafka into the batch; NumInputBytes their
	// keys and values.
	NumInputRecords int64 `json:"numInputRecords"`
	NumInputBytes   int64 `json:"numInputBytes"`
	// NumFiles and NumFileBytes of data files committed.
	NumFiles     int   `json:"numFiles"`
	NumFileBytes int64 `json:"numFileBytes"`
	NumBadRecord int   `json:"numBadRecords"` // records handed to OnBadRecord
	// Txns maps each appId of the commit to its version (last offset).
	Txns map[string]int64 `json:"txns"`
	// Abandoned: another writer had moved a partition's txn (a rebalance
	// raced the batch); nothing was committed and the worker resumes
	// after the table's versions.
	Abandoned bool `json:"abandoned,omitempty"`
	// Err is the error of a failed commit that will be retried.
	Err string `json:"error,omitempty"`
	// Rebalance: the batch was committed before it was due (full, or
	// MaxDelay after its first record) because a group rebalance was
	// waiting for it.
	Rebalance bool `json:"rebalance,omitempty"`
	// DurationMs of the whole batch (first record to commit); CommitMs of
	// the Delta write and commit alone.
	DurationMs int64 `json:"durationMs"`
	CommitMs   int64 `json:"commitMs"`
	// Lag per partition owned: the partition's end offset minus the next
	// offset to write (end - (txn version + 1)), as last seen.
	Lag map[string]int64 `json:"lag"`
}

// DefaultGroupOptions returns the defaults documented on each field.
func DefaultGroupOptions() GroupOptions {
	return GroupOptions{Source: DefaultOptions(), MaxRecordsPerBatch: 100_000, MaxDelay: time.Second,
		TargetBatchBytes: 128 << 20, MaxConsecutiveFailures: 5}
}

// Validate lists every problem with the options.
func (o GroupOptions) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...))
	}
	if o.Group == "" {
		bad("Group is required (the consumer group and the txn appId prefix)")
	}
	if o.Source.TopicPattern != "" {
		bad("TopicPattern is not supported with a group: give Topics")
	}
	if o.Sink == nil {
		bad("Sink is required")
	}
	if len(o.Assign) > 0 {
		for t, ps := range o.Assign {
			if !slices.Contains(o.Source.Topics, t) {
				bad("Assign names topic %q that is not in Topics", t)
			}
			if len(ps) == 0 {
				bad("Assign names no partition of topic %q", t)
			}
		}
	}
	if o.MaxRecordsPerBatch < 0 || o.MaxDelay < 0 || o.TargetBatchBytes < 0 || o.MaxConsecutiveFailures < 0 {
		bad("MaxRecordsPerBatch %d, MaxDelay %v, TargetBatchBytes %d, MaxConsecutiveFailures %d: none may be negative",
			o.MaxRecordsPerBatch, o.MaxDelay, o.TargetBatchBytes, o.MaxConsecutiveFailures)
	}
	if o.Source.StartingOffsets == "" {
		o.Source.StartingOffsets = "latest"
	}
	if err := o.Source.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Group is one worker of a Kafka-to-Delta ingest shared by many processes
// through Kafka's consumer-group protocol (franz-go's group consumer,
// cooperative-sticky balancing), as kafka-delta-ingest runs "multiple
// worker processes per stream".
//
// Exactly-once rests on the table, not on Kafka's committed offsets: each
// Delta commit carries, with the batch's files, one txn action per
// partition written, appId "<Group>-<topic>-<partition>" and version = the
// last offset written (kafka-delta-ingest's txn per partition). A worker
// that is assigned a partition reads that partition's txn version from the
// table and starts right after it (AdjustFetchOffsetsFn); each commit
// requires every partition's txn to still be the version its records
// follow (table.WriteOptions.Txns), so a worker whose partition moved to
// another worker in the middle of a batch (a rebalance, an expired
// session, a paused process) fails that commit with ErrTxnMismatch,
// abandons the batch and resumes every partition after the table's
// version. Offsets are committed to the group after each Delta commit,
// for monitoring only (kafka-consumer-groups shows the lag).
//
// Rebalances wait for the batch being built (BlockRebalanceOnPoll): a
// worker lets the group rebalance only between batches, so a revocation
// normally finds nothing pending. A worker told that a rebalance is waiting
// (OnPartitionsCallbackBlocked) commits the batch it holds at once instead
// of when it is due: otherwise every join or leave of a worker would stall
// the whole group for up to MaxDelay per rebalance (a cooperative
// rebalance has two), since every member must rejoin before any gets its
// partitions. The Spark-format checkpoint is not used.
//
// A Group is used by one goroutine (Run); Run owns the Kafka client.
type Group struct {
	opts GroupOptions
	src  *Source // decoding and client options
	log  *slog.Logger

	mu    sync.Mutex
	owned map[TP]*groupPart // partitions owned now
	seen  bool              // some assignment happened
	cl    *kgo.Client
	adm   *kadm.Client
	// rebalance: a rebalance waits for the batch being built (set by
	// onBlocked, cleared when the loop allows rebalancing); cancelPoll
	// cancels the loop's poll in progress (nil between polls).
	rebalance  bool
	cancelPoll context.CancelFunc
}

// groupPart is the state of one owned partition.
type groupPart struct {
	read int64 // the table's txn version the batch continues from (NoTxn)
	next int64 // the next offset to take (records below are dropped)
	end  int64 // end offset when assigned
	hw   int64 // high watermark last seen (-1: none)
	// expect, after a backward seek to a record we had read, is that
	// record's offset: records fetched before the seek (buffered past it)
	// are dropped until it arrives. -1: none.
	expect int64
	recs   []*kgo.Record
	bytes  int64
}

// lag is the end offset last seen minus the next offset to write (the txn
// version + 1; for a partition without txn, the next offset to read).
func (p *groupPart) lag() int64 {
	next := p.read + 1
	if p.read == sink.NoTxn {
		next = p.next
	}
	return max(0, p.hw-next)
}

// NewGroup validates opts; Run connects.
func NewGroup(opts GroupOptions) (*Group, error) {
	d := DefaultGroupOptions()
	if opts.MaxRecordsPerBatch == 0 {
		opts.MaxRecordsPerBatch = d.MaxRecordsPerBatch
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = d.MaxDelay
	}
	if opts.TargetBatchBytes == 0 {
		opts.TargetBatchBytes = d.TargetBatchBytes
	}
	if opts.MaxConsecutiveFailures == 0 {
		opts.MaxConsecutiveFailures = d.MaxConsecutiveFailures
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.Assign = maps.Clone(opts.Assign)
	src, err := NewSource(opts.Source)
	if err != nil {
		return nil, err
	}
	g := &Group{opts: opts, src: src, log: opts.Logger, owned: map[TP]*groupPart{}}
	if g.log == nil {
		g.log = slog.Default()
	}
	return g, nil
}

// AppID is the txn appId of a partition: <group>-<topic>-<partition>.
func AppID(group string, tp TP) string {
	return group + "-" + tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
}

// Schema is the schema of the rows written.
func (g *Group) Schema() *schema.StructType { return g.src.Schema() }

// Run consumes and commits until ctx is cancelled (it then returns
// ctx.Err() after leaving the group; the batch being built is dropped, its
// records are read again by whoever owns the partitions next), or, with
// AvailableNow, until every owned partition is written to its end. Errors:
// a batch failing MaxConsecutiveFailures times in a row (its last error),
// client errors.
func (g *Group) Run(ctx context.Context) error {
	opts := slices.Clone(g.src.clOpts)
	if len(g.opts.Assign) > 0 {
		start, err := g.assignStart(ctx)
		if err != nil {
			return err
		}
		opts = append(opts, kgo.ConsumePartitions(start))
	} else {
		opts = append(opts, kgo.ConsumerGroup(g.opts.Group), kgo.ConsumeTopics(g.opts.Source.Topics...),
			kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
			kgo.ConsumeResetOffset(g.resetOffset()),
			kgo.AdjustFetchOffsetsFn(g.onAssigned),
			kgo.OnPartitionsRevoked(g.onRevoked), kgo.OnPartitionsLost(g.onRevoked),
			kgo.OnPartitionsCallbackBlocked(g.onBlocked))
	}
	// The admin client (listing offsets in onAssigned) exists before the
	// group client: kgo joins the group as soon as the client is created,
	// so onAssigned may run before NewClient returns (it then found no
	// admin client and panicked).
	admCl, err := kgo.NewClient(g.src.clOpts...)
	if err != nil {
		return fmt.Errorf("group %s: admin client: %w", g.opts.Group, err)
	}
	defer admCl.Close()
	g.mu.Lock()
	g.adm = kadm.NewClient(admCl)
	g.mu.Unlock()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("group %s: client: %w", g.opts.Group, err)
	}
	g.mu.Lock()
	g.cl = cl
	g.mu.Unlock()
	defer func() {
		cl.AllowRebalance() // a blocked rebalance would hold up leaving the group
		cl.Close()
	}()
	if len(g.opts.Assign) > 0 {
		g.mu.Lock()
		g.seen = true
		g.mu.Unlock()
	}
	return g.loop(ctx, cl)
}

// resetOffset is where a partition without txn and without a commit
// starts (the group's committed offsets are ignored: onAssigned replaces
// them).
func (g *Group) resetOffset() kgo.Offset {
	if g.opts.Source.StartingOffsets == "earliest" {
		return kgo.NewOffset().AtStart()
	}
	return kgo.NewOffset().AtEnd()
}

// startFor resolves where a partition with no txn starts: StartingOffsets.
func (g *Group) startFor(ctx context.Context, adm *kadm.Client, tps []TP) (map[TP]int64, error) {
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	names := slices.Sorted(maps.Keys(topics))
	out := map[TP]int64{}
	if len(names) == 0 {
		return out, nil
	}
	var spec Offsets
	switch g.opts.Source.StartingOffsets {
	case "earliest", "latest":
	default:
		var err error
		if spec, err = ParseOffsets(g.opts.Source.StartingOffsets); err != nil {
			return nil, err
		}
	}
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %v: %w", names, err)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %v: %w", names, err)
	}
	for _, tp := range tps {
		s, _ := starts.Lookup(tp.Topic, tp.Partition)
		e, _ := ends.Lookup(tp.Topic, tp.Partition)
		if s.Err != nil || e.Err != nil {
			return nil, fmt.Errorf("list offsets of %s: %w", tp, errors.Join(s.Err, e.Err))
		}
		off := e.Offset
		switch v, ok := spec[tp]; {
		case g.opts.Source.StartingOffsets == "earliest", ok && v == OffsetEarliest:
			off = s.Offset
		case ok && v >= 0:
			off = v
		}
		out[tp] = off
	}
	return out, nil
}

// ends lists the end offsets of tps.
func ends(ctx context.Context, adm *kadm.Client, tps []TP) (map[TP]int64, error) {
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	names := slices.Sorted(maps.Keys(topics))
	out := map[TP]int64{}
	if len(names) == 0 {
		return out, nil
	}
	listed, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %v: %w", names, err)
	}
	for _, tp := range tps {
		e, _ := listed.Lookup(tp.Topic, tp.Partition)
		if e.Err != nil {
			return nil, fmt.Errorf("list end offsets of %s: %w", tp, e.Err)
		}
		out[tp] = e.Offset
	}
	return out, nil
}

// claim reads the table's txn versions of tps and returns the offset each
// starts at (after its txn version, else StartingOffsets), recording them
// as owned with their end offsets.
func (g *Group) claim(ctx context.Context, adm *kadm.Client, tps []TP) (map[TP]int64, error) {
	txns, _, err := g.opts.Sink.TxnVersions(ctx, g.opts.Group+"-")
	if err != nil {
		return nil, fmt.Errorf("group %s: read txn versions: %w", g.opts.Group, err)
	}
	var fresh []TP
	for _, tp := range tps {
		if _, ok := txns[AppID(g.opts.Group, tp)]; !ok {
			fresh = append(fresh, tp)
		}
	}
	starts, err := g.startFor(ctx, adm, fresh)
	if err != nil {
		return nil, err
	}
	endOff, err := ends(ctx, adm, tps)
	if err != nil {
		return nil, err
	}
	out := make(map[TP]int64, len(tps))
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, tp := range tps {
		p := &groupPart{read: sink.NoTxn, hw: -1, expect: -1}
		if v, ok := txns[AppID(g.opts.Group, tp)]; ok {
			p.read, p.next = v, v+1
		} else {
			p.next = starts[tp]
		}
		p.end = endOff[tp]
		g.owned[tp] = p
		out[tp] = p.next
	}
	g.seen = true
	return out, nil
}

// assignStart claims the Assign partitions for a static split.
func (g *Group) assignStart(ctx context.Context) (map[string]map[int32]kgo.Offset, error) {
	cl, err := kgo.NewClient(g.src.clOpts...)
	if err != nil {
		return nil, fmt.Errorf("create Kafka client: %w", err)
	}
	defer cl.Close()
	var tps []TP
	for t, ps := range g.opts.Assign {
		for _, p := range ps {
			tps = append(tps, TP{t, p})
		}
	}
	start, err := g.claim(ctx, kadm.NewClient(cl), tps)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]kgo.Offset{}
	for tp, off := range start {
		if out[tp.Topic] == nil {
			out[tp.Topic] = map[int32]kgo.Offset{}
		}
		out[tp.Topic][tp.Partition] = kgo.NewOffset().At(off)
	}
	return out, nil
}

// onAssigned is kgo.AdjustFetchOffsetsFn: newly assigned partitions start
// after the table's txn version, not at the group's committed offset.
func (g *Group) onAssigned(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	var tps []TP
	for t, ps := range offsets {
		for p := range ps {
			tps = append(tps, TP{t, p})
		}
	}
	g.mu.Lock()
	adm := g.adm
	g.mu.Unlock()
	start, err := g.claim(ctx, adm, tps)
	if err != nil {
		g.log.Error("kafka: group assignment: cannot read where the partitions start; they are not consumed until the next rebalance",
			"group", g.opts.Group, "err", err)
		return nil, err
	}
	out := map[string]map[int32]kgo.Offset{}
	for tp, off := range start {
		if out[tp.Topic] == nil {
			out[tp.Topic] = map[int32]kgo.Offset{}
		}
		out[tp.Topic][tp.Partition] = kgo.NewOffset().At(off).WithEpoch(-1)
	}
	g.log.Info("kafka: partitions assigned", "group", g.opts.Group, "partitions", fmt.Sprint(start))
	return out, nil
}

// onRevoked drops revoked or lost partitions with whatever they had pending
// (normally nothing: rebalances wait for the batch).
func (g *Group) onRevoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for t, ps := range revoked {
		for _, p := range ps {
			if gp := g.owned[TP{t, p}]; gp != nil && len(gp.recs) > 0 {
				g.log.Warn("kafka: partition revoked mid-batch; its records are abandoned", "partition", TP{t, p}.String(), "records", len(gp.recs))
			}
			delete(g.owned, TP{t, p})
			g.opts.Metrics.SetKafkaLag(t, p, -1)
		}
	}
}

// onBlocked is kgo.OnPartitionsCallbackBlocked: a rebalance waits for the
// batch being built. It makes the loop commit that batch now (and stop
// waiting in its poll) instead of when it is due.
func (g *Group) onBlocked(context.Context, *kgo.Client) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rebalance = true
	if g.cancelPoll != nil {
		g.cancelPoll()
	}
}

// rebalanceWaits reports whether a rebalance waits for the batch.
func (g *Group) rebalanceWaits() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rebalance
}

// allowRebalance lets a waiting rebalance go on (between batches).
func (g *Group) allowRebalance(cl *kgo.Client) {
	g.mu.Lock()
	g.rebalance = false
	g.mu.Unlock()
	cl.AllowRebalance()
}

func (g *Group) loop(ctx context.Context, cl *kgo.Client) error {
	var (
		first    time.Time // first record of the batch
		last     time.Time // end of the previous batch that was not full (committed or abandoned)
		n, bytes int64
		failures int
	)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n == 0 {
			g.allowRebalance(cl)
			if g.opts.AvailableNow && g.caughtUp() {
				return nil
			}
		}
		wait := g.opts.MaxDelay
		if n > 0 {
			deadline := first.Add(g.opts.MaxDelay)
			if tick := last.Add(g.opts.MaxDelay); time.Now().Before(tick) {
				deadline = tick // a drained batch is due then (tick <= deadline: last < first)
			}
			wait = time.Until(deadline)
		}
		if wait > 0 && !(n > 0 && g.rebalanceWaits()) {
			pctx, cancel := context.WithTimeout(ctx, wait)
			g.mu.Lock()
			g.cancelPoll = cancel
			g.mu.Unlock()
			fetches := cl.PollRecords(pctx, int(max(1, g.opts.MaxRecordsPerBatch-n)))
			g.mu.Lock()
			g.cancelPoll = nil
			g.mu.Unlock()
			cancel()
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, fe := range fetches.Errors() {
				if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
					continue
				}
				if errors.Is(fe.Err, kgo.ErrClientClosed) {
					return fe.Err
				}
				g.log.Warn("kafka: fetch error", "topic", fe.Topic, "partition", fe.Partition, "err", fe.Err)
			}
			g.mu.Lock()
			fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
				p := g.owned[TP{fp.Topic, fp.Partition}]
				if p == nil {
					return
				}
				p.hw = max(p.hw, fp.HighWatermark)
				for _, r := range fp.Records {
					if r.Offset < p.next {
						continue // before the table's txn: read again after a seek
					}
					if p.expect >= 0 {
						if r.Offset != p.expect {
							continue // fetched before the seek
						}
						p.expect = -1
					}
					if n == 0 {
						first = time.Now()
					}
					p.recs = append(p.recs, r)
					p.next = r.Offset + 1
					sz := int64(len(r.Key) + len(r.Value))
					p.bytes += sz
					n++
					bytes += sz
				}
			})
			g.mu.Unlock()
		}
		now := time.Now()
		due := n > 0 && (n >= g.opts.MaxRecordsPerBatch || bytes >= g.opts.TargetBatchBytes || !now.Before(first.Add(g.opts.MaxDelay)) ||
			!now.Before(last.Add(g.opts.MaxDelay)) && g.drained())
		early := n > 0 && !due && g.rebalanceWaits()
		if !due && !early && !(n > 0 && g.opts.AvailableNow && g.caughtUp()) {
			continue
		}
		if early {
			g.log.Debug("kafka: a rebalance waits for the batch: committing it now", "group", g.opts.Group, "records", n)
		}
		full := n >= g.opts.MaxRecordsPerBatch || bytes >= g.opts.TargetBatchBytes
		err := g.commit(ctx, cl, first, early)
		switch {
		case err == nil, errors.Is(err, sink.ErrTxnMismatch):
			failures = 0
			n, bytes = 0, 0
			if !full {
				last = time.Now()
			}
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			failures++
			if failures >= g.opts.MaxConsecutiveFailures {
				return err
			}
			backoff := min(time.Duration(1<<min(failures, 5))*100*time.Millisecond, 5*time.Second)
			g.log.Warn("kafka: batch failed; retrying", "group", g.opts.Group, "failures", failures, "backoff", backoff, "err", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
		}
	}
}

// drained reports whether the worker owns partitions and has read each to
// the newest end offset it knows (listed when the partition was assigned,
// or the high watermark of its last fetch). A partition whose last offsets
// are not records (transaction markers) never counts as drained: its
// batches wait for MaxDelay.
func (g *Group) drained() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.owned) == 0 {
		return false
	}
	for _, p := range g.owned {
		if p.next < max(p.end, p.hw) {
			return false
		}
	}
	return true
}

// caughtUp reports, for AvailableNow, whether an assignment was seen and
// every owned partition was taken up to its end offset at assignment.
func (g *Group) caughtUp() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.seen {
		return false
	}
	for _, p := range g.owned {
		if p.next < p.end {
			return false
		}
	}
	return true
}

// commit writes the pending records of every owned partition in one Delta
// commit with a txn per partition, then commits the offsets to the group.
// On ErrTxnMismatch it drops the batch and seeks every partition of the
// batch to the table's version.
func (g *Group) commit(ctx context.Context, cl *kgo.Client, first time.Time, rebalance bool) error {
	g.mu.Lock()
	var (
		recs  []*kgo.Record
		txns  []sink.Txn
		parts []TP
	)
	prog := GroupProgress{Version: -1, Txns: map[string]int64{}, Lag: map[string]int64{}, Rebalance: rebalance}
	for _, tp := range slices.SortedFunc(maps.Keys(g.owned), compareTP) {
		p := g.owned[tp]
		if len(p.recs) == 0 {
			continue
		}
		last := p.recs[len(p.recs)-1].Offset
		txns = append(txns, sink.Txn{AppID: AppID(g.opts.Group, tp), Version: last, Read: p.read})
		parts = append(parts, tp)
		recs = append(recs, p.recs...)
		prog.NumInputBytes += p.bytes
	}
	g.mu.Unlock()
	prog.NumInputRecords = int64(len(recs))
	if len(recs) == 0 {
		return nil
	}
	slices.SortFunc(recs, func(a, b *kgo.Record) int {
		if c := compareTP(TP{a.Topic, a.Partition}, TP{b.Topic, b.Partition}); c != 0 {
			return c
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	var batch *schema.Batch
	if g.opts.Source.ValueFormat == "json" {
		b, bad, err := g.src.decodeJSON(ctx, recs)
		if err != nil {
			return err
		}
		batch, prog.NumBadRecord = b, bad
	} else {
		rows := make([][]any, len(recs))
		for i, r := range recs {
			rows[i] = rawRow(r, g.opts.Source.IncludeHeaders)
		}
		batch = &schema.Batch{Schema: g.src.schema, Rows: rows}
	}
	started := time.Now()
	res, err := g.opts.Sink.AddTxnBatch(ctx, batch, txns, map[string]any{"kafkaGroup": g.opts.Group})
	prog.CommitMs = time.Since(started).Milliseconds()
	prog.DurationMs = time.Since(first).Milliseconds()
	switch {
	case errors.Is(err, sink.ErrTxnMismatch):
		g.log.Warn("kafka: another worker wrote a partition of this batch (rebalance); the batch is abandoned and its partitions resume after the table's versions",
			"group", g.opts.Group, "err", err)
		prog.Abandoned = true
		if rerr := g.resync(ctx, cl, parts); rerr != nil {
			return rerr
		}
		g.report(prog)
		return err
	case err != nil:
		prog.Err = err.Error()
		g.report(prog)
		return err
	}
	prog.Version, prog.NumFiles, prog.NumFileBytes = res.Version, res.NumFiles, res.NumBytes
	commits := map[string]map[int32]kgo.EpochOffset{}
	g.mu.Lock()
	for i, tp := range parts {
		prog.Txns[txns[i].AppID] = txns[i].Version
		p := g.owned[tp]
		if p == nil {
			continue // revoked while committing (static split: never)
		}
		p.read = txns[i].Version
		// Records polled while committing stay pending (none: polling is
		// this goroutine's), so drop exactly the committed ones.
		p.recs, p.bytes = nil, 0
		if commits[tp.Topic] == nil {
			commits[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		commits[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: p.read + 1}
	}
	for tp, p := range g.owned {
		if p.hw >= 0 {
			prog.Lag[tp.String()] = p.lag()
		}
	}
	g.mu.Unlock()
	if len(g.opts.Assign) == 0 {
		// For monitoring only: the table's txn decides where a partition
		// starts.
		cl.CommitOffsetsSync(ctx, commits, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				g.log.Debug("kafka: commit offsets to the group (monitoring only) failed", "group", g.opts.Group, "err", err)
			}
		})
	}
	g.report(prog)
	return nil
}

// resync drops the pending records of parts and seeks each to the table's
// txn version + 1.
func (g *Group) resync(ctx context.Context, cl *kgo.Client, parts []TP) error {
	txns, _, err := g.opts.Sink.TxnVersions(ctx, g.opts.Group+"-")
	if err != nil {
		return fmt.Errorf("group %s: read txn versions: %w", g.opts.Group, err)
	}
	seek := map[string]map[int32]kgo.EpochOffset{}
	g.mu.Lock()
	for _, tp := range parts {
		p := g.owned[tp]
		if p == nil {
			continue
		}
		v, ok := txns[AppID(g.opts.Group, tp)]
		if !ok || v == p.read {
			// This partition did not move (another of the batch did):
			// read its abandoned records again.
			if len(p.recs) == 0 {
				continue
			}
			p.next = p.recs[0].Offset
			p.expect = p.next
		} else {
			p.read, p.next = v, v+1
		}
		p.recs, p.bytes = nil, 0
		if seek[tp.Topic] == nil {
			seek[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		seek[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: p.next}
	}
	g.mu.Unlock()
	if len(seek) > 0 {
		cl.SetOffsets(seek)
	}
	return nil
}

func (g *Group) report(p GroupProgress) {
	if m := g.opts.Metrics; m != nil {
		b := metrics.Batch{Result: "committed", Records: p.NumInputRecords, Bytes: p.NumInputBytes, Files: p.NumFiles,
			FileBytes: p.NumFileBytes, BadRecords: p.NumBadRecord,
			Duration: time.Duration(p.DurationMs) * time.Millisecond, Commit: time.Duration(p.CommitMs) * time.Millisecond}
		switch {
		case p.Abandoned:
			b.Result, b.Conflict = "abandoned", true
		case p.Err != "":
			b.Result, b.Retry = "failed", true
		}
		m.ObserveBatch(b)
		g.mu.Lock()
		for tp, gp := range g.owned {
			if gp.hw >= 0 {
				m.SetKafkaLag(tp.Topic, tp.Partition, gp.lag())
			}
		}
		g.mu.Unlock()
	}
	if g.opts.Progress != nil {
		g.opts.Progress(p)
	}
}
