package reader

import (
	"fmt"
	"runtime"
	"time"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

// Option configures Open.
type Option func(*openOptions)

type openOptions struct {
	version    int64 // -1: latest
	asOf       time.Time
	hasAsOf    bool
	store      storage.Store
	logOptions *txlog.Options
	legacyDel  bool
	skipCRC    bool
}

// AtVersion opens the snapshot of table version v (Delta time travel).
func AtVersion(v int64) Option { return func(o *openOptions) { o.version = v } }

// AsOf opens the snapshot of the latest commit at or before t; before the
// first commit it is txlog.ErrTimestampOutOfRange.
func AsOf(t time.Time) Option { return func(o *openOptions) { o.asOf, o.hasAsOf = t, true } }

// WithStore reads the table from store (its root is the table root)
// instead of opening the URL; the caller keeps ownership of the store.
func WithStore(store storage.Store) Option { return func(o *openOptions) { o.store = store } }

// WithLogOptions sets the transaction log options (read concurrency, ...);
// ReadOnly is set whatever lo says (a reader writes nothing).
func WithLogOptions(lo txlog.Options) Option { return func(o *openOptions) { o.logOptions = &lo } }

// SkipChecksumValidation reads the Delta log without checking the loaded
// version against its _delta_log/N.crc (txlog.Options.SkipChecksumValidation):
// by default a version whose .crc disagrees with its replayed state (a
// truncated or damaged commit) is a *txlog.CorruptLogError.
func SkipChecksumValidation() Option { return func(o *openOptions) { o.skipCRC = true } }

// WithLegacyFileSinkDeletes applies the legacy "delete" action of
// _spark_metadata logs, as Spark up to 3.0 did; by default it is ignored,
// as Spark 3.1 and later do.
func WithLegacyFileSinkDeletes() Option { return func(o *openOptions) { o.legacyDel = true } }

func (o *openOptions) validate() error {
	if o.version < -1 {
		return fmt.Errorf("%w: version %d is negative", ErrOption, o.version)
	}
	if o.version >= 0 && o.hasAsOf {
		return fmt.Errorf("%w: AtVersion and AsOf are exclusive", ErrOption)
	}
	return nil
}

// ReadOptions select what Rows returns.
type ReadOptions struct {
	// Columns are the top-level columns to return, by logical name (matched
	// case-insensitively when unambiguous), in this order. Empty: every
	// column of the schema.
	Columns []string
	// Where is a predicate in the expr language (e.g. "country = 'NL' AND
	// n > 3"). It prunes files by partition values and statistics and is
	// then applied to every row. Empty: no filter.
	Where string
	// Predicate is an already bound predicate (from Snapshot.Predicate);
	// used instead of Where when set.
	Predicate *expr.Predicate
	// Files, when non-nil, are the files read instead of the snapshot's live
	// files, in this order (still pruned by the predicate): e.g. the adds of
	// one commit from Snapshot.ReadCommit. They are read with the snapshot's
	// schema, partition columns and column mapping.
	Files []File
	// Limit stops after this many rows. 0: no limit.
	Limit int64
	// Workers is how many files are read at once. Default (0):
	// runtime.GOMAXPROCS(0). Rows are still emitted in snapshot file order.
	Workers int
}

// Validate lists every invalid field.
func (o ReadOptions) Validate() error {
	var errs []error
	if o.Limit < 0 {
		errs = append(errs, fmt.Errorf("%w: Limit %d is negative", ErrOption, o.Limit))
	}
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers %d is negative", ErrOption, o.Workers))
	}
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("%w; %w", errs[0], errs[1])
}

// DefaultReadOptions are every column, no filter, no limit, GOMAXPROCS
// workers.
func DefaultReadOptions() ReadOptions { return ReadOptions{Workers: runtime.GOMAXPROCS(0)} }

func (o ReadOptions) workers() int {
	if o.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Workers
}
