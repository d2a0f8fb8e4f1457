package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/stream/source"
)

// Options configure a Source. Names follow Spark's Kafka source options.
type Options struct {
	// Brokers are the bootstrap servers (kafka.bootstrap.servers). Required.
	Brokers []string
	// Topics to read (subscribe); exactly one of Topics and TopicPattern.
	Topics []string
	// TopicPattern is a regular expression over whole topic names
	// (subscribePattern); topics created later are picked up.
	TopicPattern string
	// StartingOffsets of a new query: "earliest", "latest" (default) or a
	// JSON object {"topic":{"0":23,"1":-2}} where -2 is earliest and -1
	// latest, naming every partition of the topics (as Spark requires).
	// Partitions created after the query started are read from offset 0.
	StartingOffsets string
	// MaxOffsetsPerTrigger caps the records of one batch across all
	// partitions; 0 = no cap.
	MaxOffsetsPerTrigger int64
	// FailOnDataLoss fails a batch whose records were deleted before they
	// were read; false skips them with a warning. Default true.
	FailOnDataLoss bool
	// IncludeHeaders adds the headers column (includeHeaders).
	IncludeHeaders bool
	// ValueFormat: "" keeps Spark's raw Kafka schema; "json" decodes each
	// value against Schema.
	ValueFormat string
	// Schema of the JSON values (ValueFormat json).
	Schema *schema.StructType
	// SkipTombstones drops records with a null value (ValueFormat json),
	// Kafka's tombstones: a change feed such as Debezium's writes one after
	// each delete event (tombstones.on.delete, default true) so that log
	// compaction may drop the key; it carries no change. Default false: a
	// null value is a bad record (*RecordError).
	SkipTombstones bool
	// TimestampFormat, DateFormat: as source.Options, for JSON values.
	TimestampFormat, DateFormat string
	// SchemaEvolution: as source.Options, for JSON values: by default a value
	// with a field Schema lacks is a bad record (source.ErrUnknownField);
	// with source.SchemaEvolutionAddNewColumns each batch's values widen
	// Schema (source.EvolveSchema) and the batch, and every later one, carries
	// the merged schema; source.SchemaEvolutionNone ignores such fields.
	SchemaEvolution source.SchemaEvolutionMode
	// OnBadRecord receives values that do not fit Schema (ValueFormat json);
	// the record is dropped. BadRecord.File is "kafka://<topic>/<partition>",
	// BadRecord.Line the record's offset, Raw its value. nil: the first bad
	// record fails the batch with a *RecordError.
	OnBadRecord func(source.BadRecord) error
	// Consumer holds Kafka consumer properties, with or without Spark's
	// "kafka." prefix; those franz-go has an equivalent for are applied
	// (see consumerOpts), others are refused by Validate.
	Consumer map[string]string
	// TLS enables TLS to the brokers (nil: plaintext).
	TLS *tls.Config
	// SASL authenticates to the brokers (nil: none).
	SASL sasl.Mechanism
	// ExtraClientOpts are appended to every franz-go client the source makes.
	ExtraClientOpts []kgo.Opt
	// GapTimeout: a partition whose last offsets of a range are missing from
	// the log (transaction markers, compaction) is considered read to the
	// end once no record arrived for this long while the high watermark is
	// past the range. Default 10s.
	GapTimeout time.Duration
	// Logger receives warnings (data loss skipped). Default slog.Default().
	Logger *slog.Logger
}

// DefaultOptions returns Spark's defaults: startingOffsets latest,
// failOnDataLoss true.
func DefaultOptions() Options {
	return Options{StartingOffsets: "latest", FailOnDataLoss: true, GapTimeout: 10 * time.Second}
}

// Validate lists every problem with the options.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...))
	}
	if len(o.Brokers) == 0 {
		bad("no bootstrap servers")
	}
	if (len(o.Topics) == 0) == (o.TopicPattern == "") {
		bad("give exactly one of Topics and TopicPattern")
	}
	for _, t := range o.Topics {
		if t == "" {
			bad("empty topic name")
		}
	}
	if o.TopicPattern != "" {
		if _, err := regexp.Compile(o.TopicPattern); err != nil {
			bad("TopicPattern: %v", err)
		}
	}
	switch o.StartingOffsets {
	case "", "earliest", "latest":
	default:
		if _, err := ParseOffsets(o.StartingOffsets); err != nil {
			bad("StartingOffsets: %v", err)
		}
	}
	if o.MaxOffsetsPerTrigger < 0 {
		bad("MaxOffsetsPerTrigger %d < 0", o.MaxOffsetsPerTrigger)
	}
	switch o.ValueFormat {
	case "":
	case "json":
		if o.Schema == nil {
			bad("ValueFormat json needs a Schema")
		}
		if _, err := source.ParseSchemaEvolutionMode(string(o.SchemaEvolution)); err != nil {
			bad("SchemaEvolution: %v", err)
		}
	default:
		bad("ValueFormat %q (want \"\" or json)", o.ValueFormat)
	}
	if o.GapTimeout < 0 {
		bad("GapTimeout %v < 0", o.GapTimeout)
	}
	if _, err := consumerOpts(o.Consumer); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOptions, err))
	}
	return errors.Join(errs...)
}

// forbidden are consumer properties Spark's Kafka source refuses because the
// source manages them itself (KafkaSourceProvider.validateGeneralOptions).
var forbidden = []string{"group.id", "auto.offset.reset", "key.deserializer", "value.deserializer",
	"enable.auto.commit", "interceptor.classes"}

// consumerOpts maps Kafka consumer properties to franz-go options.
func consumerOpts(props map[string]string) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	var errs []error
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		v := props[k]
		name := strings.TrimPrefix(k, "kafka.")
		num := func() (int64, bool) {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				errs = append(errs, fmt.Errorf("consumer property %s=%q: want a non-negative integer", k, v))
				return 0, false
			}
			return n, true
		}
		ms := func() (time.Duration, bool) {
			n, ok := num()
			return time.Duration(n) * time.Millisecond, ok
		}
		switch name {
		case "bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.jaas.config",
			"ssl.truststore.location", "ssl.keystore.location":
			// Set through Options.Brokers, TLS and SASL (the CLI's flags).
			errs = append(errs, fmt.Errorf("consumer property %s: use the source's broker/TLS/SASL settings instead", k))
		case "client.id":
			opts = append(opts, kgo.ClientID(v))
		case "client.rack":
			opts = append(opts, kgo.Rack(v))
		case "fetch.max.bytes":
			if n, ok := num(); ok {
				opts = append(opts, kgo.FetchMaxBytes(int32(min(n, 1<<31-1))))
			}
		case "max.partition.fetch.bytes":
			if n, ok := num(); ok {
				opts = append(opts, kgo.FetchMaxPartitionBytes(int32(min(n, 1<<31-1))))
			}
		case "fetch.min.bytes":
			if n, ok := num(); ok {
				opts = append(opts, kgo.FetchMinBytes(int32(min(n, 1<<31-1))))
			}
		case "fetch.max.wait.ms":
			if d, ok := ms(); ok {
				opts = append(opts, kgo.FetchMaxWait(d))
			}
		case "request.timeout.ms":
			if d, ok := ms(); ok {
				opts = append(opts, kgo.RequestTimeoutOverhead(d))
			}
		case "metadata.max.age.ms":
			if d, ok := ms(); ok {
				opts = append(opts, kgo.MetadataMaxAge(d))
			}
		case "socket.connection.setup.timeout.ms":
			if d, ok := ms(); ok {
				opts = append(opts, kgo.DialTimeout(d))
			}
		case "session.timeout.ms":
			// Consumer-group mode only (Group); a direct consumer ignores it.
			if d, ok := ms(); ok {
				opts = append(opts, kgo.SessionTimeout(d))
			}
		case "heartbeat.interval.ms":
			if d, ok := ms(); ok {
				opts = append(opts, kgo.HeartbeatInterval(d))
			}
		case "max.poll.interval.ms":
			// The Java consumer's rebalance timeout.
			if d, ok := ms(); ok {
				opts = append(opts, kgo.RebalanceTimeout(d))
			}
		case "isolation.level":
			switch v {
			case "read_committed":
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			case "read_uncommitted":
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
			default:
				errs = append(errs, fmt.Errorf("consumer property %s=%q: want read_committed or read_uncommitted", k, v))
			}
		default:
			if slices.Contains(forbidden, name) {
				errs = append(errs, fmt.Errorf("consumer property %s is not supported: the source manages it (offsets live in the checkpoint)", k))
			} else {
				errs = append(errs, fmt.Errorf("consumer property %s has no franz-go equivalent here (supported: client.id, client.rack, fetch.max.bytes, max.partition.fetch.bytes, fetch.min.bytes, fetch.max.wait.ms, request.timeout.ms, metadata.max.age.ms, socket.connection.setup.timeout.ms, isolation.level, and for consumer groups session.timeout.ms, heartbeat.interval.ms, max.poll.interval.ms)", k))
			}
		}
	}
	return opts, errors.Join(errs...)
}
