// Package heaptest measures the peak Go heap of a piece of work, for the
// memory bounds that tests and benchmarks assert (resource bombs, the sink's
// and compaction's peak-heap figures).
package heaptest
