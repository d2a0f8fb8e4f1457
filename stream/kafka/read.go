package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/stream/source"
)

var kerrUnknownTopic = kerr.UnknownTopicOrPartition

// offsetRange is [from, until) of one partition.
type offsetRange struct {
	tp          TP
	from, until int64
}

// ranges computes the ranges of the batch (start, end]: a partition missing
// from start is new and starts at offset 0 (KafkaMicroBatchStream
// planInputPartitions reads new partitions from the beginning).
func ranges(from, until Offsets) ([]offsetRange, []*DataLossError) {
	var out []offsetRange
	var lost []*DataLossError
	for _, tp := range until.Partitions() {
		u := until[tp]
		f, ok := from[tp]
		if !ok {
			f = 0
		}
		if u < f {
			lost = append(lost, &DataLossError{Topic: tp.Topic, Partition: tp.Partition, From: u, Until: f,
				Reason: fmt.Sprintf("the end offset %d is before the start offset %d", u, f)})
			continue
		}
		if u > f {
			out = append(out, offsetRange{tp, f, u})
		}
	}
	return out, lost
}

// GetBatch reads the records with start <= offset < end of every partition
// (start "" is the initial offsets), sorted by topic, partition and offset.
func (s *Source) GetBatch(ctx context.Context, start, end string) (*schema.Batch, source.BatchStats, error) {
	var stats source.BatchStats
	if !s.started {
		return nil, stats, ErrNotStarted
	}
	from := s.initial
	if start != "" {
		var err error
		if from, err = ParseOffsets(start); err != nil {
			return nil, stats, err
		}
	}
	until, err := ParseOffsets(end)
	if err != nil {
		return nil, stats, err
	}
	if s.planned == nil || !sameOffsets(s.planned, until) {
		merged := until.Clone()
		for tp, o := range s.planned {
			merged[tp] = max(merged[tp], o)
		}
		s.planned = merged
	}
	rs, lost := ranges(from, until)
	if err := s.dataLoss(lost); err != nil {
		return nil, stats, err
	}
	if rs, err = s.checkAvailable(ctx, rs); err != nil {
		return nil, stats, err
	}
	recs, err := s.read(ctx, rs)
	if err != nil {
		return nil, stats, err
	}
	for _, r := range recs {
		stats.NumBytes += int64(len(r.Key) + len(r.Value))
	}
	if s.opts.ValueFormat == "json" {
		b, bad, err := s.decodeJSON(ctx, recs)
		stats.NumBadRecords = bad
		return b, stats, err
	}
	rows := make([][]any, len(recs))
	for i, r := range recs {
		rows[i] = rawRow(r, s.opts.IncludeHeaders)
	}
	return &schema.Batch{Schema: s.schema, Rows: rows}, stats, nil
}

func rawRow(r *kgo.Record, headers bool) []any {
	var key, value any
	if r.Key != nil {
		key = r.Key
	}
	if r.Value != nil {
		value = r.Value
	}
	var ts any
	tt := any(int32(r.Attrs.TimestampType()))
	if r.Attrs.TimestampType() >= 0 {
		ts = r.Timestamp.UTC()
	} else {
		tt = nil
	}
	row := []any{key, value, r.Topic, r.Partition, r.Offset, ts, tt}
	if headers {
		var hs []any
		if len(r.Headers) > 0 {
			hs = make([]any, len(r.Headers))
			for i, h := range r.Headers {
				var v any
				if h.Value != nil {
					v = h.Value
				}
				hs[i] = []any{h.Key, v}
			}
			row = append(row, hs)
		} else {
			row = append(row, []any{})
		}
	}
	return row
}

// dataLoss fails with the first loss, or logs them all when FailOnDataLoss is
// off (KafkaMicroBatchStream.reportDataLoss).
func (s *Source) dataLoss(lost []*DataLossError) error {
	if len(lost) == 0 {
		return nil
	}
	if s.opts.FailOnDataLoss {
		return lost[0]
	}
	for _, l := range lost {
		s.log.Warn("kafka: data loss, skipping", "topic", l.Topic, "partition", l.Partition,
			"from", l.From, "until", l.Until, "reason", l.Reason)
	}
	return nil
}

// checkAvailable checks that each range is still in the log: a start before
// the partition's earliest offset lost records to retention; an end after the
// log's end lost the records of a recreated topic.
func (s *Source) checkAvailable(ctx context.Context, rs []offsetRange) ([]offsetRange, error) {
	if len(rs) == 0 {
		return rs, nil
	}
	var topics []string
	for _, r := range rs {
		topics = append(topics, r.tp.Topic)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	earliest, latest, err := s.offsetRange(ctx, topics)
	if err != nil {
		return nil, err
	}
	var out []offsetRange
	var lost []*DataLossError
	for _, r := range rs {
		e, ok := earliest[r.tp]
		l := latest[r.tp]
		switch {
		case !ok:
			lost = append(lost, &DataLossError{Topic: r.tp.Topic, Partition: r.tp.Partition, From: r.from, Until: r.until,
				Reason: "the partition no longer exists"})
			continue
		case e > r.from:
			cut := min(e, r.until)
			lost = append(lost, &DataLossError{Topic: r.tp.Topic, Partition: r.tp.Partition, From: r.from, Until: cut,
				Reason: fmt.Sprintf("the log now starts at offset %d (records deleted by retention)", e)})
			r.from = cut
		}
		if l < r.until {
			lost = append(lost, &DataLossError{Topic: r.tp.Topic, Partition: r.tp.Partition, From: max(l, r.from), Until: r.until,
				Reason: fmt.Sprintf("the log now ends at offset %d (topic recreated or truncated)", l)})
			r.until = max(l, r.from)
		}
		if r.until > r.from {
			out = append(out, r)
		}
	}
	if err := s.dataLoss(lost); err != nil {
		return nil, err
	}
	return out, nil
}

// read consumes the ranges with a direct consumer (no group) assigned at
// explicit offsets, and returns the records sorted by partition and offset.
func (s *Source) read(ctx context.Context, rs []offsetRange) ([]*kgo.Record, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	assign := make(map[string]map[int32]kgo.Offset)
	type progress struct {
		r        offsetRange
		next     int64 // next offset wanted
		hw       int64
		lastSeen time.Time
		done     bool
	}
	prog := make(map[TP]*progress, len(rs))
	now := time.Now()
	for _, r := range rs {
		if assign[r.tp.Topic] == nil {
			assign[r.tp.Topic] = make(map[int32]kgo.Offset)
		}
		assign[r.tp.Topic][r.tp.Partition] = kgo.NewOffset().At(r.from)
		prog[r.tp] = &progress{r: r, next: r.from, hw: -1, lastSeen: now}
	}
	opts := append(slices.Clone(s.clOpts), kgo.ConsumePartitions(assign),
		// An offset out of range while reading (retention raced the check):
		// jump to the end, which the post-read check reports as data loss.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("consumer for %s: %w", s.url, err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	remaining := len(rs)
	for remaining > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, s.readWait)
		fetches := cl.PollFetches(pctx)
		cancel()
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
				continue
			}
			return nil, fmt.Errorf("fetch %s-%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		now := time.Now()
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			p := prog[TP{fp.Topic, fp.Partition}]
			if p == nil || p.done {
				return
			}
			p.hw = max(p.hw, fp.HighWatermark)
			for _, r := range fp.Records {
				if r.Offset < p.next || r.Offset >= p.r.until {
					continue
				}
				recs = append(recs, r)
				p.next = r.Offset + 1
				p.lastSeen = now
			}
			if p.next >= p.r.until {
				p.done = true
				remaining--
				cl.PauseFetchPartitions(map[string][]int32{fp.Topic: {fp.Partition}})
			}
		})
		for _, p := range prog {
			// The last offsets of the range hold no records (transaction
			// markers, compaction): done once the log is past the range and
			// nothing arrived for GapTimeout.
			if !p.done && p.hw >= p.r.until && now.Sub(p.lastSeen) >= s.opts.GapTimeout {
				p.done = true
				remaining--
			}
		}
	}
	// Retention may have deleted records while they were read: the range's
	// first record missing and the log starting after it is data loss.
	var firstSeen = make(map[TP]int64)
	for _, r := range recs {
		tp := TP{r.Topic, r.Partition}
		if _, ok := firstSeen[tp]; !ok {
			firstSeen[tp] = r.Offset
		}
	}
	var suspect []offsetRange
	for _, r := range rs {
		if f, ok := firstSeen[r.tp]; !ok || f > r.from {
			suspect = append(suspect, r)
		}
	}
	if len(suspect) > 0 {
		if _, err := s.checkAvailable(ctx, suspect); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(recs, func(a, b *kgo.Record) int {
		if c := compareTP(TP{a.Topic, a.Partition}, TP{b.Topic, b.Partition}); c != 0 {
			return c
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	return recs, nil
}
