package kafka

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidOptions: Options.Validate failed.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrBadOffset: an offset string is not Spark's Kafka offset JSON.
	ErrBadOffset = errors.New("invalid offset")
	// ErrDataLoss: records of a planned range are no longer in the log.
	// Wrapped by *DataLossError.
	ErrDataLoss = errors.New("data loss")
	// ErrNotStarted: a method was called before Start.
	ErrNotStarted = errors.New("source not started")
	// ErrBadRecord: a value does not decode against the schema (ValueFormat
	// json). Wrapped by *RecordError.
	ErrBadRecord = errors.New("record does not fit the schema")
)

// DataLossError reports records of a planned range that cannot be read:
// [From, Until) of Topic/Partition, and what the log holds instead.
type DataLossError struct {
	Topic     string // the topic
	Partition int32  // the partition
	From      int64  // first offset the batch needed
	Until     int64  // first offset it did not need
	Reason    string // what the broker reported
}

// Error implements error.
func (e *DataLossError) Error() string {
	return fmt.Sprintf("data loss in %s-%d offsets [%d, %d): %s (set failOnDataLoss=false to skip with a warning)",
		e.Topic, e.Partition, e.From, e.Until, e.Reason)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *DataLossError) Unwrap() error { return ErrDataLoss }

// RecordError names the Kafka record whose value does not fit the schema.
type RecordError struct {
	Topic     string // the record's topic
	Partition int32  // the record's partition
	Offset    int64  // the record's offset
	Field     string // the field at fault ("" for the whole record)
	Err       error  // the cause
}

// Error implements error.
func (e *RecordError) Error() string {
	msg := fmt.Sprintf("%s-%d offset %d", e.Topic, e.Partition, e.Offset)
	if e.Field != "" {
		msg += " field " + e.Field
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *RecordError) Unwrap() []error { return []error{ErrBadRecord, e.Err} }
