package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/source"
)

// Source reads Kafka topics; it implements source.Source.
type Source struct {
	opts     Options
	url      string
	pattern  *regexp.Regexp
	clOpts   []kgo.Opt
	cl       *kgo.Client
	adm      *kadm.Client
	log      *slog.Logger
	dir      storage.Store
	started  bool
	initial  Offsets // where the first batch starts (sources/0/0)
	planned  Offsets // the latest end offset planned or read; nil: none yet
	capEnd   Offsets // AvailableNow: the end offsets at PrepareAvailableNow
	hasCap   bool
	schema   *schema.StructType
	readWait time.Duration
}

var _ source.Source = (*Source)(nil)

// Files of the source's checkpoint directory (sources/0): "0" holds the
// initial offsets as Spark's KafkaSourceInitialOffsetWriter writes them (a
// zero byte, "v1\n", the offset JSON); plannedFile the latest end offset
// this source returned from LatestOffset, so that a restart plans after it
// (a name HDFSMetadataLog ignores: not a batch number).
const (
	initialFile = "0"
	plannedFile = "lakesink-kafka-planned.json"
)

// NewSource validates opts and returns a Source; it connects at Start.
func NewSource(opts Options) (*Source, error) {
	if opts.StartingOffsets == "" {
		opts.StartingOffsets = "latest"
	}
	if opts.GapTimeout == 0 {
		opts.GapTimeout = 10 * time.Second
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Source{opts: opts, log: opts.Logger, readWait: time.Second}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opts.TopicPattern != "" {
		s.pattern = regexp.MustCompile("^(?:" + opts.TopicPattern + ")$") // validated above
	}
	copts, _ := consumerOpts(opts.Consumer) // validated above
	s.clOpts = append([]kgo.Opt{kgo.SeedBrokers(opts.Brokers...)}, copts...)
	if opts.TLS != nil {
		s.clOpts = append(s.clOpts, kgo.DialTLSConfig(opts.TLS))
	}
	if opts.SASL != nil {
		s.clOpts = append(s.clOpts, kgo.SASL(opts.SASL))
	}
	s.clOpts = append(s.clOpts, opts.ExtraClientOpts...)
	s.url = SourceURL(opts)
	s.schema = rawSchema(opts.IncludeHeaders)
	if opts.ValueFormat == "json" {
		s.schema = opts.Schema
	}
	return s, nil
}

// SourceURL is the URL a Source with opts reports: kafka://<brokers>/<topics>
// with brokers and topics sorted, or ?pattern=<regexp> for a pattern.
func SourceURL(opts Options) string {
	brokers := slices.Sorted(slices.Values(opts.Brokers))
	u := "kafka://" + strings.Join(brokers, ",") + "/"
	if opts.TopicPattern != "" {
		return u + "?pattern=" + opts.TopicPattern
	}
	return u + strings.Join(slices.Sorted(slices.Values(opts.Topics)), ",")
}

// rawSchema is Spark's Kafka source schema (KafkaRecordToRowConverter).
func rawSchema(headers bool) *schema.StructType {
	s := &schema.StructType{Fields: []schema.StructField{
		{Name: "key", Type: schema.TypeBinary, Nullable: true},
		{Name: "value", Type: schema.TypeBinary, Nullable: true},
		{Name: "topic", Type: schema.TypeString, Nullable: true},
		{Name: "partition", Type: schema.TypeInteger, Nullable: true},
		{Name: "offset", Type: schema.TypeLong, Nullable: true},
		{Name: "timestamp", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "timestampType", Type: schema.TypeInteger, Nullable: true},
	}}
	if headers {
		s.Fields = append(s.Fields, schema.StructField{Name: "headers", Nullable: true, Type: &schema.ArrayType{
			ContainsNull: true,
			ElementType: &schema.StructType{Fields: []schema.StructField{
				{Name: "key", Type: schema.TypeString, Nullable: true},
				{Name: "value", Type: schema.TypeBinary, Nullable: true},
			}},
		}})
	}
	return s
}

// URL identifies the source (SourceURL).
func (s *Source) URL() string { return s.url }

// Schema is the schema of the batches.
func (s *Source) Schema() *schema.StructType { return s.schema }

// Close releases the Kafka client.
func (s *Source) Close() error {
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	return nil
}

// Start connects, then restores the initial offsets from dir (resolving and
// recording StartingOffsets on the first run) and the latest planned offset.
func (s *Source) Start(ctx context.Context, dir storage.Store) error {
	if s.cl == nil {
		// Metadata cached at most briefly: each trigger must see new
		// partitions and topics (kadm's listings use cached metadata).
		cl, err := kgo.NewClient(append(slices.Clone(s.clOpts), kgo.MetadataMinAge(100*time.Millisecond))...)
		if err != nil {
			return fmt.Errorf("client for %s: %w", s.url, err)
		}
		s.cl, s.adm = cl, kadm.NewClient(cl)
	}
	s.dir = dir
	init, err := s.readInitial(ctx)
	if errors.Is(err, storage.ErrNotFound) {
		if init, err = s.resolveStarting(ctx); err != nil {
			return err
		}
		err = dir.PutIfAbsent(ctx, initialFile, encodeInitial(init))
		if errors.Is(err, storage.ErrAlreadyExists) {
			init, err = s.readInitial(ctx)
		}
	}
	if err != nil {
		return fmt.Errorf("initial offsets in %s: %w", dir.URL(), err)
	}
	s.initial = init
	data, err := dir.Read(ctx, plannedFile)
	switch {
	case err == nil:
		p, perr := ParseOffsets(string(data))
		if perr != nil {
			return fmt.Errorf("parse %s/%s: %w", dir.URL(), plannedFile, perr)
		}
		s.planned = p
	case errors.Is(err, storage.ErrNotFound):
	default:
		return fmt.Errorf("read %s/%s: %w", dir.URL(), plannedFile, err)
	}
	s.started = true
	return nil
}

// encodeInitial is KafkaSourceInitialOffsetWriter.serialize: a zero byte
// (SPARK-19517), "v1\n", then the offset JSON.
func encodeInitial(o Offsets) []byte {
	return append([]byte("\x00v1\n"), o.String()...)
}

func decodeInitial(data []byte) (Offsets, error) {
	data = bytes.TrimPrefix(data, []byte{0})
	rest, ok := bytes.CutPrefix(data, []byte("v1\n"))
	if !ok {
		return nil, fmt.Errorf("%w: initial offsets file does not start with v1", ErrBadOffset)
	}
	return ParseOffsets(string(rest))
}

func (s *Source) readInitial(ctx context.Context) (Offsets, error) {
	data, err := s.dir.Read(ctx, initialFile)
	if err != nil {
		return nil, err
	}
	return decodeInitial(data)
}

// topics lists the topics the source reads that exist now.
func (s *Source) topics(ctx context.Context) ([]string, error) {
	if s.pattern == nil {
		return s.opts.Topics, nil
	}
	all, err := s.adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics of %s: %w", s.url, err)
	}
	var out []string
	for _, t := range all.Names() {
		if s.pattern.MatchString(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// offsetRange lists the earliest and the latest offsets of every partition
// of topics.
func (s *Source) offsetRange(ctx context.Context, topics []string) (earliest, latest Offsets, err error) {
	if earliest, err = s.listOffsets(ctx, topics, false); err != nil {
		return nil, nil, err
	}
	if latest, err = s.listOffsets(ctx, topics, true); err != nil {
		return nil, nil, err
	}
	return earliest, latest, nil
}

// listOffsets returns the start (earliest) or end (latest) offset of every
// partition of the source's topics; topics that do not exist are left out.
func (s *Source) listOffsets(ctx context.Context, topics []string, end bool) (Offsets, error) {
	out := make(Offsets)
	if len(topics) == 0 {
		return out, nil
	}
	var (
		listed kadm.ListedOffsets
		err    error
	)
	if end {
		listed, err = s.adm.ListEndOffsets(ctx, topics...)
	} else {
		listed, err = s.adm.ListStartOffsets(ctx, topics...)
	}
	if err != nil {
		return nil, fmt.Errorf("list offsets of %v: %w", topics, err)
	}
	for t, parts := range listed {
		for p, lo := range parts {
			if lo.Err != nil {
				if errors.Is(lo.Err, kerrUnknownTopic) {
					continue
				}
				return nil, fmt.Errorf("list offsets of %s-%d: %w", t, p, lo.Err)
			}
			out[TP{t, p}] = lo.Offset
		}
	}
	return out, nil
}

// resolveStarting turns StartingOffsets into offsets of every partition.
func (s *Source) resolveStarting(ctx context.Context) (Offsets, error) {
	topics, err := s.topics(ctx)
	if err != nil {
		return nil, err
	}
	earliest, latest, err := s.offsetRange(ctx, topics)
	if err != nil {
		return nil, err
	}
	switch s.opts.StartingOffsets {
	case "earliest":
		return earliest, nil
	case "latest":
		return latest, nil
	}
	spec, err := ParseOffsets(s.opts.StartingOffsets)
	if err != nil {
		return nil, err
	}
	out := make(Offsets)
	var missing []string
	for tp := range latest {
		off, ok := spec[tp]
		switch {
		case !ok:
			missing = append(missing, tp.String())
		case off == OffsetEarliest:
			out[tp] = earliest[tp]
		case off == OffsetLatest:
			out[tp] = latest[tp]
		default:
			out[tp] = off
		}
	}
	for tp := range spec {
		if _, ok := latest[tp]; !ok {
			missing = append(missing, tp.String()+" (not in the cluster)")
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		// KafkaOffsetReader.fetchSpecificOffsets: "If startingOffsets contains
		// specific offsets, you must specify all TopicPartitions."
		return nil, fmt.Errorf("%w: startingOffsets must name every partition of the topics exactly; mismatched: %s",
			ErrInvalidOptions, strings.Join(missing, ", "))
	}
	return out, nil
}

// PrepareAvailableNow fixes the end offsets this run reads up to.
func (s *Source) PrepareAvailableNow(ctx context.Context) error {
	if !s.started {
		return ErrNotStarted
	}
	topics, err := s.topics(ctx)
	if err != nil {
		return err
	}
	ends, err := s.listOffsets(ctx, topics, true)
	if err != nil {
		return err
	}
	s.capEnd, s.hasCap = ends, true
	return nil
}

// LatestOffset plans the next batch's end: the partitions' end offsets, capped
// by MaxOffsetsPerTrigger (rateLimit) after the latest planned offsets, and
// by PrepareAvailableNow's snapshot. It returns "" while nothing was ever
// planned and there is nothing past the initial offsets. The limit's MaxFiles
// does not apply to Kafka. (KafkaMicroBatchStream.latestOffset)
func (s *Source) LatestOffset(ctx context.Context, limit source.ReadLimit) (string, error) {
	if !s.started {
		return "", ErrNotStarted
	}
	var ends Offsets
	if s.hasCap {
		ends = s.capEnd
	} else {
		topics, err := s.topics(ctx)
		if err != nil {
			return "", err
		}
		if ends, err = s.listOffsets(ctx, topics, true); err != nil {
			return "", err
		}
	}
	from := s.planned
	if from == nil {
		from = s.initial
	}
	until := make(Offsets, len(ends))
	var newTPs []string
	for tp, end := range ends {
		f, ok := from[tp]
		if !ok {
			newTPs = append(newTPs, tp.Topic)
			until[tp] = end
			continue
		}
		if end < f {
			// The log ends before offsets already planned: the topic was
			// deleted and recreated, or the partition truncated.
			le := &DataLossError{Topic: tp.Topic, Partition: tp.Partition, From: end, Until: f,
				Reason: fmt.Sprintf("the log now ends at %d, before the planned offset %d", end, f)}
			if s.opts.FailOnDataLoss {
				return "", le
			}
			s.log.Warn("kafka: data loss, keeping the planned offset", "err", le.Error())
			end = f
		}
		until[tp] = end
	}
	fromNew := make(Offsets)
	if len(newTPs) > 0 {
		slices.Sort(newTPs)
		earliest, err := s.listOffsets(ctx, slices.Compact(newTPs), false)
		if err != nil {
			return "", err
		}
		for tp := range until {
			if _, ok := from[tp]; !ok {
				fromNew[tp] = earliest[tp]
			}
		}
	}
	next := rateLimit(s.opts.MaxOffsetsPerTrigger, from, fromNew, until)
	for tp, f := range from {
		if _, ok := next[tp]; !ok {
			next[tp] = f // a partition gone from the cluster keeps its offset
		}
	}
	if s.planned == nil && sameOffsets(next, s.initial) {
		return "", nil
	}
	if s.planned != nil && sameOffsets(next, s.planned) {
		return s.planned.String(), nil
	}
	out := next.String()
	// Recorded before it is returned: a restart must not plan below an
	// offset the driver may have written to offsets/N.
	if err := s.dir.Put(ctx, plannedFile, []byte(out)); err != nil {
		return "", fmt.Errorf("record planned offsets in %s: %w", s.dir.URL(), err)
	}
	s.planned = next
	return out, nil
}

func sameOffsets(a, b Offsets) bool {
	if len(a) != len(b) {
		return false
	}
	for tp, o := range a {
		if bo, ok := b[tp]; !ok || bo != o {
			return false
		}
	}
	return true
}

// Commit is a no-op: offsets live in the checkpoint.
func (s *Source) Commit(ctx context.Context, end string) error {
	_, err := ParseOffsets(end)
	return err
}
