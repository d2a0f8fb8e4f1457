package kafka

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// Spark's special offsets in a startingOffsets JSON object
// (KafkaOffsetRangeLimit.EARLIEST / LATEST).
const (
	OffsetEarliest int64 = -2
	OffsetLatest   int64 = -1
)

// TP is a topic partition.
type TP struct {
	Topic     string // the topic
	Partition int32  // the partition
}

// String is <topic>-<partition>, the suffix of the partition's txn appId.
func (tp TP) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

func compareTP(a, b TP) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

// Offsets maps each partition to an offset: for a batch end, the first offset
// not yet taken (exclusive).
type Offsets map[TP]int64

// ParseOffsets parses Spark's Kafka offset JSON (JsonUtils.partitionOffsets):
// {"topic":{"0":23,"1":-1}}. Partition numbers must be non-negative integers;
// offsets may be -2 (earliest) or -1 (latest) only in startingOffsets, which
// the caller checks.
func ParseOffsets(s string) (Offsets, error) {
	var m map[string]map[string]int64
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("%w: %q: want {\"topicA\":{\"0\":23,\"1\":-1}}: %w", ErrBadOffset, s, err)
	}
	out := make(Offsets)
	for topic, parts := range m {
		if topic == "" {
			return nil, fmt.Errorf("%w: %q: empty topic name", ErrBadOffset, s)
		}
		for p, off := range parts {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil || n < 0 || strconv.Itoa(int(n)) != p {
				return nil, fmt.Errorf("%w: %q: partition %q of topic %s is not a partition number", ErrBadOffset, s, p, topic)
			}
			if off < OffsetEarliest {
				return nil, fmt.Errorf("%w: %q: offset %d of %s-%s", ErrBadOffset, s, off, topic, p)
			}
			out[TP{topic, int32(n)}] = off
		}
	}
	return out, nil
}

// String renders the offsets as Spark's JSON. encoding/json sorts the keys,
// so equal offsets always render to the same text (the driver compares
// offset strings to detect "no new data").
func (o Offsets) String() string {
	m := make(map[string]map[string]int64)
	for tp, off := range o {
		if m[tp.Topic] == nil {
			m[tp.Topic] = make(map[string]int64)
		}
		m[tp.Topic][strconv.Itoa(int(tp.Partition))] = off
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}" // unreachable: strings and int64s always encode
	}
	return string(b)
}

// Clone returns a copy.
func (o Offsets) Clone() Offsets { return maps.Clone(o) }

// Partitions returns the partitions sorted by topic, then partition.
func (o Offsets) Partitions() []TP {
	return slices.SortedFunc(maps.Keys(o), compareTP)
}

// rateLimit caps the batch (from, until] at limit offsets in all, split across
// partitions in proportion to their backlog; a partition's share is rounded
// down, except that a share below one is rounded up so small partitions are
// not starved (KafkaMicroBatchStream.rateLimit). Partitions missing from
// from start at fromNew (new partitions: their earliest offset). limit <= 0
// returns until.
func rateLimit(limit int64, from, fromNew, until Offsets) Offsets {
	if limit <= 0 {
		return until
	}
	sizes := make(map[TP]int64)
	var total float64
	for tp, end := range until {
		begin, ok := from[tp]
		if !ok {
			begin, ok = fromNew[tp]
		}
		if ok && end-begin > 0 {
			sizes[tp] = end - begin
			total += float64(end - begin)
		}
	}
	if total < 1 {
		return until
	}
	out := make(Offsets, len(until))
	for tp, end := range until {
		size, ok := sizes[tp]
		if !ok {
			out[tp] = end
			continue
		}
		begin, ok := from[tp]
		if !ok {
			begin = fromNew[tp]
		}
		prorate := float64(limit) * (float64(size) / total)
		var n int64
		if prorate < 1 {
			n = int64(math.Ceil(prorate))
		} else {
			n = int64(prorate)
		}
		off := begin + n
		if n > (1<<63-1)-begin {
			off = 1<<63 - 1
		}
		out[tp] = min(end, off)
	}
	return out
}
