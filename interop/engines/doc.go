// Package engines checks lakesink against the real engines: Apache Spark with
// Delta Lake (pyspark + delta-spark) and delta-rs (the deltalake Python
// binding), installed by scripts/install-engines.sh into a cache outside the
// repo. The tests write tables and file-sink directories with lakesink, have
// the engines read them (and write to them), and compare rows as multisets of
// normalised values (timestamps as UTC microseconds, decimals as plain strings
// with the column's scale, floats by their bit pattern with NaN equal to NaN),
// plus what the engines say about history, file counts, sizes and statistics.
//
// One Python process per test package (py/engine_server.py, started in
// TestMain) holds one Spark session (one JVM) and delta-rs; tests send it
// JSON requests on stdin and read JSON answers from stdout.
//
// Running: `make interop` installs the engines and runs these tests with
// LAKESINK_ENGINES=1. Without LAKESINK_ENGINES=1 (as in `make test`) every
// test skips at once, saying so. With it, the engines are found through
// LAKESINK_ENGINES_PYTHON and LAKESINK_DELTA_JARS
// (`eval "$(scripts/install-engines.sh --env)"`), else through
// `scripts/install-engines.sh --env` itself; a missing engine skips the tests
// naming it, and fails them under LAKESINK_REQUIRE_ENGINES=1 (CI).
// LAKESINK_INTEROP_REPORT=FILE rewrites the results table of FILE
// (docs/interop.md) from the run, LAKESINK_CORPUS_REPORT=FILE the
// generated-corpus section of FILE (reader/testdata/conformance.md).
//
// The generated corpus (corpus_test.go, py/corpus.py): the engines write
// tables with the features users meet today (deletion vectors, column
// mapping after renames and drops, V2 checkpoints (JSON and Parquet) and
// multi-part checkpoints, log compaction files, in-commit timestamps, CDF,
// clustering, row tracking, type widening, variant, ...) into a temporary
// folder, answer their own rows, DESCRIBE DETAIL and protocol, and
// lakesink's scan, reader and describe must agree.
// LAKESINK_CORPUS_CASES=a,b runs only those cases. TestGeneratedCorpusS3
// (corpus_s3_test.go) writes its delta-rs case on the local S3 server with
// S3 conditional-put commits.
//
// Why here, in the interop module, and not in the main module: the interop
// module is where lakesink is checked against implementations that share no
// code with it (arrow-go next door), its tests are run by `make test` only
// as `cd interop && go test ./...` where this package skips at once, and it
// may still use lakesink's internal packages (the internal rule is by import
// path, and this module's path is below github.com/lakesink/lakesink).
package engines
