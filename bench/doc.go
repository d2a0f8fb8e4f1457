// Package bench holds the whole-process benchmarks of lakesink against
// engines linked through cgo, in a Go module of its own (bench/go.mod) so
// that the lakesink module keeps no cgo dependency: DuckDB (duckdb-go, its
// static library from the Go module proxy) reading the same Parquet data
// files as lakesink's reader. `make bench` runs them after the main module's
// benchmarks, with LAKESINK_BIN set to the CLI it built; they print BENCHROW
// lines for internal/benchtable. The first build links DuckDB (about 2
// minutes on a loaded 2-core machine; cached afterwards).
package bench
