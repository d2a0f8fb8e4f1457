package txlog

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidProperty: a table property (metaData.configuration) that
// lakesink reads has a value it cannot parse. Every such error is a
// *PropertyError.
var ErrInvalidProperty = errors.New("invalid table property")

// Table property keys lakesink reads (PROTOCOL.md, "Table Properties";
// Delta's DeltaConfigs.scala builds each as "delta." + key). Keys are
// matched exactly, as DeltaConfig.fromMetaData looks them up: Delta stores
// them in this canonical spelling whatever case a user typed
// (DeltaConfigs.validateConfigurations).
const (
	PropAppendOnly                           = "delta.appendOnly"
	PropCheckpointInterval                   = "delta.checkpointInterval"
	PropCheckpointPolicy                     = "delta.checkpointPolicy"
	PropColumnMappingMode                    = "delta.columnMapping.mode"
	PropDataSkippingNumIndexedCols           = "delta.dataSkippingNumIndexedCols"
	PropDeletedFileRetentionDuration         = "delta.deletedFileRetentionDuration"
	PropEnableChangeDataFeed                 = "delta.enableChangeDataFeed"
	PropEnableDeletionVectors                = "delta.enableDeletionVectors"
	PropEnableExpiredLogCleanup              = "delta.enableExpiredLogCleanup"
	PropEnableInCommitTimestamps             = "delta.enableInCommitTimestamps"
	PropInCommitTimestampEnablementVersion   = "delta.inCommitTimestampEnablementVersion"
	PropInCommitTimestampEnablementTimestamp = "delta.inCommitTimestampEnablementTimestamp"
	PropLogRetentionDuration                 = "delta.logRetentionDuration"
	PropTargetFileSize                       = "delta.targetFileSize"
)

// Defaults of the table properties (DeltaConfigs.scala).
const (
	// DefaultCheckpointInterval is delta.checkpointInterval's default (10).
	DefaultCheckpointInterval = 10
	// DefaultDeletedFileRetention is delta.deletedFileRetentionDuration's
	// default, "interval 1 week": tombstones older than that are left out
	// of checkpoints and their files may be vacuumed (PROTOCOL.md, "Add
	// File and Remove File").
	DefaultDeletedFileRetention = 7 * 24 * time.Hour
	// DefaultLogRetention is delta.logRetentionDuration's default,
	// "interval 30 days".
	DefaultLogRetention = 30 * 24 * time.Hour
	// DefaultTargetFileSizeBytes is the data file size writers and OPTIMIZE
	// aim at when delta.targetFileSize is unset (128 MiB).
	DefaultTargetFileSizeBytes int64 = 128 << 20
	// DefaultDataSkippingNumIndexedCols is
	// delta.dataSkippingNumIndexedCols's default (32; -1 means every column).
	DefaultDataSkippingNumIndexedCols = 32
)

// Checkpoint policies (delta.checkpointPolicy, Delta's CheckpointPolicy).
const (
	CheckpointPolicyClassic = "classic"
	CheckpointPolicyV2      = "v2"
)

// Column mapping modes (delta.columnMapping.mode; PROTOCOL.md, "Column
// Mapping").
const (
	ColumnMappingNone = "none"
	ColumnMappingName = "name"
	ColumnMappingID   = "id"
)

// PropertyError is an invalid value of a table property: Key and Value as
// in metaData.configuration, Want what the key accepts, Version the table
// version whose metadata holds it (-1: not read from a snapshot, e.g. the
// properties of a table being created). errors.Is(err, ErrInvalidProperty)
// holds.
type PropertyError struct {
	Key, Value, Want string
	Version          int64
}

// Error names the key, the value, the version and what the key accepts.
func (e *PropertyError) Error() string {
	if e.Version >= 0 {
		return fmt.Sprintf("%s: %s=%q at version %d: want %s", ErrInvalidProperty, e.Key, e.Value, e.Version, e.Want)
	}
	return fmt.Sprintf("%s: %s=%q: want %s", ErrInvalidProperty, e.Key, e.Value, e.Want)
}

// Is makes errors.Is(err, ErrInvalidProperty) hold.
func (e *PropertyError) Is(target error) bool { return target == ErrInvalidProperty }

// TableProperties are the table properties lakesink acts on, parsed once
// from metaData.configuration with the rules of Delta's DeltaConfigs.scala
// (each DeltaConfig's fromString and validationFunction):
//   - booleans as Scala's String.toBoolean: "true" or "false" in any case,
//     nothing else (no trimming: " true" is invalid, as Spark refuses it);
//   - integers as Integer.parseInt (_.toInt): optional sign, decimal
//     digits, no spaces, 32 bits; delta.checkpointInterval must be > 0,
//     delta.dataSkippingNumIndexedCols >= -1;
//   - intervals as DeltaConfigs.parseCalendarInterval, see ParseInterval
//     (trimmed, case-insensitive, "interval" optional, no months or years,
//     not negative);
//   - delta.targetFileSize as a byte size, see ParseByteSize (> 0);
//   - delta.checkpointPolicy as CheckpointPolicy.fromName ("classic" or
//     "v2"); delta.columnMapping.mode as DeltaColumnMappingMode
//     (case-insensitive; a mode other than none, name and id is kept
//     lower-cased for readers to refuse as an unsupported feature).
//
// A property that is unset or invalid holds its default; the invalid ones
// are reported by Err and Validate, so that each operation fails on the
// properties it needs (as Delta's fromMetaData throws where a value is
// read) and nothing else. The zero value is not the defaults: use
// DefaultTableProperties or ParseTableProperties.
type TableProperties struct {
	// AppendOnly: delta.appendOnly (default false): no remove with
	// dataChange=true may be committed (PROTOCOL.md, "Append-only Tables").
	AppendOnly bool
	// CheckpointInterval: delta.checkpointInterval (default 10), the
	// versions between automatic checkpoints.
	CheckpointInterval int64
	// CheckpointPolicy: delta.checkpointPolicy, CheckpointPolicyClassic
	// (default) or CheckpointPolicyV2.
	CheckpointPolicy string
	// ColumnMappingMode: delta.columnMapping.mode lower-cased
	// (ColumnMappingNone by default).
	ColumnMappingMode string
	// DataSkippingNumIndexedCols: delta.dataSkippingNumIndexedCols (default
	// 32; -1 every column; 0 only numRecords).
	DataSkippingNumIndexedCols int
	// DeletedFileRetention: delta.deletedFileRetentionDuration (default
	// one week).
	DeletedFileRetention time.Duration
	// EnableChangeDataFeed: delta.enableChangeDataFeed (default false).
	EnableChangeDataFeed bool
	// EnableDeletionVectors: delta.enableDeletionVectors (default false).
	EnableDeletionVectors bool
	// EnableExpiredLogCleanup: delta.enableExpiredLogCleanup (default true).
	EnableExpiredLogCleanup bool
	// EnableInCommitTimestamps: delta.enableInCommitTimestamps (default
	// false); in force only with the inCommitTimestamp writer feature.
	EnableInCommitTimestamps bool
	// InCommitTimestampEnablementVersion: delta.inCommitTimestampEnablementVersion
	// (a Long), the first version with in-commit timestamps; -1 when unset.
	InCommitTimestampEnablementVersion int64
	// InCommitTimestampEnablementTimestamp: delta.inCommitTimestampEnablementTimestamp
	// (a Long, milliseconds since the Unix epoch), the in-commit timestamp of
	// that version; -1 when unset.
	InCommitTimestampEnablementTimestamp int64
	// LogRetention: delta.logRetentionDuration (default 30 days).
	LogRetention time.Duration
	// TargetFileSizeBytes: delta.targetFileSize (default 128 MiB).
	TargetFileSizeBytes int64

	invalid []*PropertyError // sorted by key
}

// DefaultTableProperties returns the properties of a table whose
// configuration sets none.
func DefaultTableProperties() TableProperties {
	return TableProperties{
		CheckpointInterval:                   DefaultCheckpointInterval,
		CheckpointPolicy:                     CheckpointPolicyClassic,
		ColumnMappingMode:                    ColumnMappingNone,
		DataSkippingNumIndexedCols:           DefaultDataSkippingNumIndexedCols,
		DeletedFileRetention:                 DefaultDeletedFileRetention,
		EnableExpiredLogCleanup:              true,
		InCommitTimestampEnablementVersion:   -1,
		InCommitTimestampEnablementTimestamp: -1,
		LogRetention:                         DefaultLogRetention,
		TargetFileSizeBytes:                  DefaultTargetFileSizeBytes,
	}
}

// propertyRule parses one key into p; want describes the accepted values.
type propertyRule struct {
	want  string
	parse func(p *TableProperties, v string) bool
}

func boolRule(field func(*TableProperties) *bool) propertyRule {
	return propertyRule{want: "true or false", parse: func(p *TableProperties, v string) bool {
		b, ok := parseScalaBool(v)
		if ok {
			*field(p) = b
		}
		return ok
	}}
}

func intervalRule(field func(*TableProperties) *time.Duration) propertyRule {
	return propertyRule{want: `an interval such as "interval 7 days" (no months or years)`, parse: func(p *TableProperties, v string) bool {
		d, err := ParseInterval(v)
		if err == nil {
			*field(p) = d
		}
		return err == nil
	}}
}

func longRule(field func(*TableProperties) *int64) propertyRule {
	return propertyRule{want: "an integer", parse: func(p *TableProperties, v string) bool {
		n, err := parseJavaInt(v, 64)
		if err == nil {
			*field(p) = n
		}
		return err == nil
	}}
}

// propertyRules is the one table of the properties lakesink reads.
var propertyRules = map[string]propertyRule{
	PropAppendOnly: boolRule(func(p *TableProperties) *bool { return &p.AppendOnly }),
	PropCheckpointInterval: {want: "an integer greater than 0", parse: func(p *TableProperties, v string) bool {
		n, err := parseJavaInt(v, 32)
		if err != nil || n <= 0 {
			return false
		}
		p.CheckpointInterval = n
		return true
	}},
	PropCheckpointPolicy: {want: `"classic" or "v2"`, parse: func(p *TableProperties, v string) bool {
		if v != CheckpointPolicyClassic && v != CheckpointPolicyV2 {
			return false
		}
		p.CheckpointPolicy = v
		return true
	}},
	PropColumnMappingMode: {want: "none, name or id", parse: func(p *TableProperties, v string) bool {
		p.ColumnMappingMode = strings.ToLower(v)
		if p.ColumnMappingMode == "" {
			p.ColumnMappingMode = ColumnMappingNone
		}
		return true
	}},
	PropDataSkippingNumIndexedCols: {want: "an integer, -1 or more", parse: func(p *TableProperties, v string) bool {
		n, err := parseJavaInt(v, 32)
		if err != nil || n < -1 {
			return false
		}
		p.DataSkippingNumIndexedCols = int(n)
		return true
	}},
	PropDeletedFileRetentionDuration:         intervalRule(func(p *TableProperties) *time.Duration { return &p.DeletedFileRetention }),
	PropEnableChangeDataFeed:                 boolRule(func(p *TableProperties) *bool { return &p.EnableChangeDataFeed }),
	PropEnableDeletionVectors:                boolRule(func(p *TableProperties) *bool { return &p.EnableDeletionVectors }),
	PropEnableExpiredLogCleanup:              boolRule(func(p *TableProperties) *bool { return &p.EnableExpiredLogCleanup }),
	PropEnableInCommitTimestamps:             boolRule(func(p *TableProperties) *bool { return &p.EnableInCommitTimestamps }),
	PropInCommitTimestampEnablementVersion:   longRule(func(p *TableProperties) *int64 { return &p.InCommitTimestampEnablementVersion }),
	PropInCommitTimestampEnablementTimestamp: longRule(func(p *TableProperties) *int64 { return &p.InCommitTimestampEnablementTimestamp }),
	PropLogRetentionDuration:                 intervalRule(func(p *TableProperties) *time.Duration { return &p.LogRetention }),
	PropTargetFileSize: {want: `a byte size greater than 0 such as "134217728" or "128mb"`, parse: func(p *TableProperties, v string) bool {
		n, err := ParseByteSize(v)
		if err != nil || n <= 0 {
			return false
		}
		p.TargetFileSizeBytes = n
		return true
	}},
}

// ParseTableProperties parses config (metaData.configuration) into
// TableProperties. Keys lakesink does not read are ignored. The error
// joins a *PropertyError for every invalid value, in key order; the
// returned properties hold the defaults for those keys and are usable.
func ParseTableProperties(config map[string]string) (TableProperties, error) {
	p := parseTableProperties(config, -1)
	return p, p.Validate()
}

func parseTableProperties(config map[string]string, version int64) TableProperties {
	p := DefaultTableProperties()
	for k, v := range config {
		rule, ok := propertyRules[k]
		if !ok {
			continue
		}
		if !rule.parse(&p, v) {
			p.invalid = append(p.invalid, &PropertyError{Key: k, Value: v, Want: rule.want, Version: version})
		}
	}
	slices.SortFunc(p.invalid, func(a, b *PropertyError) int { return strings.Compare(a.Key, b.Key) })
	return p
}

// Err returns the *PropertyError of each of keys whose value is invalid
// (joined), nil when they are all valid or unset. An operation calls it
// with the keys it reads.
func (p TableProperties) Err(keys ...string) error {
	var errs []error
	for _, e := range p.invalid {
		if slices.Contains(keys, e.Key) {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// Validate returns every invalid value as joined *PropertyErrors (nil:
// all valid).
func (p TableProperties) Validate() error {
	errs := make([]error, len(p.invalid))
	for i, e := range p.invalid {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// ValidateProperties checks the values of the table properties lakesink
// reads (see TableProperties; Delta's DeltaConfigs validate them when a
// table is created or altered, so a typo fails there instead of being
// ignored later). Other keys are not checked. Every bad value is listed;
// errors are *PropertyErrors wrapping ErrInvalidProperty.
func ValidateProperties(config map[string]string) error {
	_, err := ParseTableProperties(config)
	return err
}

// parseScalaBool is Scala's StringOps.toBoolean (DeltaConfigs' _.toBoolean):
// "true"/"false" case-insensitively, nothing else.
func parseScalaBool(v string) (bool, bool) {
	switch {
	case strings.EqualFold(v, "true"):
		return true, true
	case strings.EqualFold(v, "false"):
		return false, true
	}
	return false, false
}

// parseJavaInt is Integer.parseInt / Long.parseLong (DeltaConfigs'
// _.toInt, _.toLong): an optional sign and ASCII digits, nothing else.
func parseJavaInt(v string, bits int) (int64, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+")
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(v, 10, bits)
}

// ParseByteSize parses a byte count as Delta's delta.targetFileSize and
// Spark's byte-string configs take it: a plain integer, or a number with a
// binary suffix b, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib, p/pb/pib
// (case-insensitive, surrounding spaces ignored; Spark's
// JavaUtils.byteStringAs treats kb as 1024 bytes, as here). Errors wrap
// ErrInvalidProperty.
func ParseByteSize(s string) (int64, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(in) && in[i] >= '0' && in[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: byte size %q", ErrInvalidProperty, s)
	}
	n, err := strconv.ParseInt(in[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: byte size %q", ErrInvalidProperty, s)
	}
	var mult int64
	switch strings.TrimSpace(in[i:]) {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	case "t", "tb", "tib":
		mult = 1 << 40
	case "p", "pb", "pib":
		mult = 1 << 50
	default:
		return 0, fmt.Errorf("%w: byte size %q: unknown unit", ErrInvalidProperty, s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("%w: byte size %q overflows", ErrInvalidProperty, s)
	}
	return n * mult, nil
}

// ParseInterval parses a Delta interval property as
// DeltaConfigs.parseCalendarInterval does: the text trimmed and
// lower-cased, "interval " prefixed unless present, then Spark's
// IntervalUtils.stringToInterval: pairs of a signed number and a unit,
// week, day, hour, minute, second, millisecond, microsecond (singular or
// plural; a decimal number of seconds too, "1.5 seconds"). Months and
// years, and a negative total, are refused as
// DeltaConfigs.isValidIntervalConfigValue refuses them. Errors wrap
// ErrInvalidProperty.
func ParseInterval(s string) (time.Duration, error) {
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%w: interval %q: %s", ErrInvalidProperty, s, why)
	}
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return bad("want pairs of a number and a unit")
	}
	const maxMicros = math.MaxInt64 / int64(time.Microsecond)
	var total int64 // microseconds
	for i := 0; i < len(f); i += 2 {
		unit := strings.TrimSuffix(f[i+1], "s")
		var us int64
		switch unit {
		case "week":
			us = 7 * 24 * 3600e6
		case "day":
			us = 24 * 3600e6
		case "hour":
			us = 3600e6
		case "minute":
			us = 60e6
		case "second":
			us = 1e6
		case "millisecond":
			us = 1e3
		case "microsecond":
			us = 1
		case "month", "year":
			return bad("months and years are not accepted (use days, e.g. 365 days)")
		default:
			return bad("unknown unit " + f[i+1])
		}
		var part int64
		if unit == "second" && strings.Contains(f[i], ".") {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil || strings.ContainsAny(f[i], "eEnN") || math.Abs(x) > float64(maxMicros/us) {
				return bad("invalid number " + f[i])
			}
			part = int64(math.Round(x * 1e6))
		} else {
			n, err := parseJavaInt(f[i], 64)
			if err != nil {
				return bad("invalid number " + f[i])
			}
			if n > maxMicros/us || n < -maxMicros/us {
				return bad("too long")
			}
			part = n * us
		}
		total += part
		if total > maxMicros || total < -maxMicros {
			return bad("too long")
		}
	}
	if total < 0 {
		return bad("negative")
	}
	return time.Duration(total) * time.Microsecond, nil
}
