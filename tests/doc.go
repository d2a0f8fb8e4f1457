// Package tests holds end-to-end tests that run the lakesink binary as users
// do: the kill -9 ingest test (exactly once across crashes), CLI round trips.
// They build ./cmd/lakesink once per test binary.
package tests
