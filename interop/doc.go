// Package interop holds independent-reader interoperability tests: tables and
// output directories written by lakesink are read back with apache/arrow-go's
// Parquet reader (parquet/file + parquet/pqarrow), an implementation that
// shares no code with the parquet-go library lakesink writes with, and every
// Arrow type, Parquet logical type, value and log statistic is checked.
//
// It is a separate, test-only Go module so that the main module does not
// depend on arrow-go. Run it with `cd interop && go test ./...` (the root
// Makefile's test target does).
package interop
