package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
)

// BenchmarkProfileIngestParquet and BenchmarkProfileScan run `lakesink
// ingest --format parquet --trigger once` of ../shared/data/flights-3m.parquet
// and `lakesink scan` of the result in this process, for profiles:
//
//	go test ./cmd/lakesink -run '^$' -bench ProfileIngestParquet -benchtime 1x -cpuprofile cpu.out
//	go tool pprof -top cmd/lakesink.test cpu.out
//
// They print no BENCHROW: the whole-process figures are tests'
// BenchmarkCLIIngestParquet and BenchmarkCLIScanNDJSON.
func BenchmarkProfileIngestParquet(b *testing.B) {
	src := flights3MSource(b)
	for b.Loop() {
		ingestInProcess(b, src, b.TempDir())
	}
}

func BenchmarkProfileIngestParquetPartitioned(b *testing.B) {
	src := flights3MSource(b)
	for b.Loop() {
		ingestInProcess(b, src, b.TempDir(), "--partition-by", "origin")
	}
}

// BenchmarkProfileScan scans the table at $LAKESINK_PROFILE_TABLE when set
// (e.g. one made once with `bin/lakesink ingest`), else ingests one first
// (not timed).
func BenchmarkProfileScan(b *testing.B) {
	tbl := os.Getenv("LAKESINK_PROFILE_TABLE")
	if tbl == "" {
		src := flights3MSource(b)
		dir := b.TempDir()
		ingestInProcess(b, src, dir)
		tbl = filepath.Join(dir, "t")
	}
	b.ResetTimer()
	for b.Loop() {
		root := newRootCommand()
		root.SetArgs([]string{"scan", tbl})
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if err := root.ExecuteContext(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

func flights3MSource(b *testing.B) string {
	p := corpus.Dir(b, corpus.Data, "flights-3m.parquet")
	src := filepath.Join(b.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "flights-3m.parquet"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	return src
}

func ingestInProcess(b *testing.B, src, dir string, extra ...string) {
	root := newRootCommand()
	root.SetArgs(append([]string{"ingest", "--source", src, "--format", "parquet", "--trigger", "once", "--quiet",
		"--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t")}, extra...))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	if err := root.ExecuteContext(context.Background()); err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t", "_delta_log", "00000000000000000000.json")); err != nil {
		b.Fatalf("ingest wrote no commit: %v", err)
	}
}

// BenchmarkProfileIngestText runs `lakesink ingest --format
// $LAKESINK_PROFILE_FORMAT --schema $LAKESINK_PROFILE_SCHEMA --trigger once`
// of the directory $LAKESINK_PROFILE_SOURCE in this process, for profiles of
// the JSON and CSV decoders (e.g. the flights NDJSON and CSV that tests'
// BenchmarkCLIIngestText generates into ~/.cache/lakesink/bench, each linked
// alone into a directory); skipped when they are unset.
func BenchmarkProfileIngestText(b *testing.B) {
	src, format, sch := os.Getenv("LAKESINK_PROFILE_SOURCE"), os.Getenv("LAKESINK_PROFILE_FORMAT"), os.Getenv("LAKESINK_PROFILE_SCHEMA")
	if src == "" || format == "" || sch == "" {
		b.Skip("skipped: set LAKESINK_PROFILE_SOURCE, LAKESINK_PROFILE_FORMAT and LAKESINK_PROFILE_SCHEMA")
	}
	for b.Loop() {
		dir := b.TempDir()
		root := newRootCommand()
		root.SetArgs([]string{"ingest", "--source", src, "--format", format, "--schema", sch, "--trigger", "once", "--quiet",
			"--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t")})
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if err := root.ExecuteContext(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
