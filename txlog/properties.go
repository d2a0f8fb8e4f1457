package txlog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidProperty: a table property (metaData.configuration) that
// lakesink reads has a value it cannot parse.
var ErrInvalidProperty = errors.New("invalid table property")

// ParseByteSize parses a byte count as Delta's delta.targetFileSize and
// Spark's byte-string configs take it: a plain integer, or a number with a
// binary suffix b, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib, p/pb/pib (case-insensitive;
// Spark's JavaUtils.byteStringAs treats kb as 1024 bytes, as here). Errors
// wrap ErrInvalidProperty.
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

// ValidateProperties checks the values of the Delta table properties that
// lakesink reads (Delta's DeltaConfigs validate them when a table is created
// or altered, so a typo fails there instead of being ignored later):
// delta.checkpointInterval (an integer > 0), delta.logRetentionDuration and
// delta.deletedFileRetentionDuration (intervals, see ParseInterval),
// delta.targetFileSize (a byte size > 0, see ParseByteSize),
// delta.dataSkippingNumIndexedCols (an integer >= -1), and the booleans
// delta.appendOnly, delta.enableExpiredLogCleanup, delta.enableChangeDataFeed,
// delta.enableDeletionVectors, delta.enableInCommitTimestamps. Other keys are
// not checked. Every bad value is listed; errors wrap ErrInvalidProperty.
func ValidateProperties(config map[string]string) error {
	var errs []error
	bad := func(k, want string) {
		errs = append(errs, fmt.Errorf("%w: %s=%q: want %s", ErrInvalidProperty, k, config[k], want))
	}
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := strings.TrimSpace(config[k])
		switch k {
		case "delta.checkpointInterval":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
				bad(k, "an integer greater than 0")
			}
		case "delta.logRetentionDuration", "delta.deletedFileRetentionDuration":
			if d, err := ParseInterval(v); err != nil || d < 0 {
				bad(k, `an interval such as "interval 7 days"`)
			}
		case "delta.targetFileSize":
			if n, err := ParseByteSize(v); err != nil || n <= 0 {
				bad(k, `a byte size greater than 0 such as "134217728" or "128mb"`)
			}
		case "delta.dataSkippingNumIndexedCols":
			if n, err := strconv.Atoi(v); err != nil || n < -1 {
				bad(k, "an integer, -1 or more")
			}
		case "delta.appendOnly", "delta.enableExpiredLogCleanup", "delta.enableChangeDataFeed",
			"delta.enableDeletionVectors", "delta.enableInCommitTimestamps":
			if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
				bad(k, "true or false")
			}
		}
	}
	return errors.Join(errs...)
}
