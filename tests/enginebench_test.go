package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// Issue 22, "Against delta-rs": whole processes of lakesink against delta-rs
// (deltalake) and Spark, from the virtualenv of scripts/install-engines.sh
// ($LAKESINK_ENGINES_PYTHON, set by `eval "$(scripts/install-engines.sh
// --env)"`; run by `make bench-engines`, which sets LAKESINK_BENCH_ENGINES=1),
// alternated A B A B with benchproc.AB: interop/engines/py/bench.py is
// the engines' side, one process per run (interpreter and, for Spark, JVM
// start included, as a user runs them). Without the engines every row says
// "skipped: engines absent". The ratio is the engine's wall time over
// lakesink's: above 1 lakesink is faster.

// lakesinkAppendsEnv makes this test binary run lakesinkAppends (one
// process doing N one-row appends with the table library) instead of its
// tests, as baselineEnv does for the raw baselines; with
// lakesinkAppendsNoSyncEnv set too, the table's store skips fsync
// (storage.Options.LocalSkipFsync), as delta-rs's local store does.
const (
	lakesinkAppendsEnv       = "LAKESINK_BENCH_APPENDS"
	lakesinkAppendsNoSyncEnv = "LAKESINK_BENCH_APPENDS_NOSYNC"
)

func init() {
	n := os.Getenv(lakesinkAppendsEnv)
	if n == "" {
		return
	}
	if err := lakesinkAppends(n, os.Args[len(os.Args)-1], os.Getenv(lakesinkAppendsNoSyncEnv) != ""); err != nil {
		fmt.Fprintln(os.Stderr, "appends:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// lakesinkAppends commits n blind appends of one row (id BIGINT, v STRING)
// each to the table at url (new or not) with table.Write, as the delta-rs
// side commits n write_deltalake appends; noSync skips every fsync.
func lakesinkAppends(n, url string, noSync bool) error {
	count, err := strconv.Atoi(n)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := os.MkdirAll(url, 0o755); err != nil {
		return err
	}
	op, err := storage.NewOpener(storage.Options{LocalSkipFsync: noSync})
	if err != nil {
		return err
	}
	st, err := op.Open(ctx, url)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := table.OpenStore(st)
	if err != nil {
		return err
	}
	defer t.Close()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true}, {Name: "v", Type: schema.TypeString, Nullable: true}}}
	for i := range count {
		b := &schema.Batch{Schema: sch, Rows: [][]any{{int64(i), "v" + strconv.Itoa(i)}}}
		if _, err := t.Write(ctx, b, table.WriteOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// appendsCmd is a process doing n lakesinkAppends to the table at t.
func appendsCmd(n int, t string, noSync bool) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$", t)
	cmd.Env = append(os.Environ(), lakesinkAppendsEnv+"="+strconv.Itoa(n))
	if noSync {
		cmd.Env = append(cmd.Env, lakesinkAppendsNoSyncEnv+"=1")
	}
	return cmd
}

// describeTable is the part of lakesink describe --json the checks read.
type describeTable struct {
	Version    int64  `json:"version"`
	NumFiles   int    `json:"numFiles"`
	NumRecords *int64 `json:"numRecords"`
}

// describe runs lakesink describe --json on the table at t (untimed).
func describe(b *testing.B, t string) describeTable {
	b.Helper()
	out, err := exec.Command(lakesinkBin, "describe", "--json", t).Output()
	var d describeTable
	if err == nil {
		err = json.Unmarshal(out, &d)
	}
	if err != nil {
		b.Fatalf("describe %s: %v %s", t, err, out)
	}
	return d
}

// engineBenchPython is the engines' interpreter and bench.py, or skips
// the benchmark with the rows it would have printed.
func engineBenchPython(b *testing.B, figures ...string) (py, script string) {
	b.Helper()
	py = os.Getenv("LAKESINK_ENGINES_PYTHON")
	why := ""
	switch {
	case py == "":
		why = "skipped: engines absent (LAKESINK_ENGINES_PYTHON unset: make bench-engines)"
	case os.Getenv("LAKESINK_BENCH_ENGINES") == "":
		// About 25 minutes on a 2-core machine: not part of make bench.
		why = "skipped: run by make bench-engines (LAKESINK_BENCH_ENGINES=1)"
	}
	if why != "" {
		for _, f := range figures {
			fmt.Printf("BENCHROW\t%s\t%s\t-\t-\n", f, why)
		}
		b.Skip(why)
	}
	script, err := filepath.Abs("../interop/engines/py/bench.py")
	if err != nil {
		b.Fatal(err)
	}
	return py, script
}

// BenchmarkAgainstDeltaRS, the rows of issue 22 "Against delta-rs":
//
//   - the 3M flights from flights-3m.parquet into a new table (lakesink
//     ingest --format parquet --trigger once vs write_deltalake of the Arrow
//     table pyarrow reads from the same file);
//   - N one-row appends (LAKESINK_BENCH_APPENDS_N, default 1,000; the table
//     library vs write_deltalake mode="append", one process each). Not like
//     for like on durability: lakesink fsyncs each append's data file,
//     commit and version checksum, and the directory entries of the data
//     file and the commit (5 fsyncs: the checksum's rename is not synced,
//     storage.PutOptional; 4 more per checkpoint, every 10 commits as Delta Spark's
//     default delta.checkpointInterval, for it and _last_checkpoint);
//     delta-rs 1.6 none (its local store, object_store's LocalFileSystem,
//     writes a staging file and renames or hard-links it; it checkpoints
//     every 100 commits; strace -c -f counted no fsync, fdatasync or
//     sync_file_range in 101 appends). So a second row runs the same
//     lakesink appends with no fsync (storage.Options.LocalSkipFsync:
//     atomic, not power-failure durable, as delta-rs's): the commit logic
//     alone;
//   - opening a table of M one-row commits (LAKESINK_BENCH_OPEN_COMMITS,
//     default 10,000; checkpoint at the last multiple of 10, as lakesink
//     writes it) (lakesink describe vs DeltaTable(), version and file list);
//   - compacting a table of K one-row files in K commits
//     (LAKESINK_BENCH_COMPACT_FILES, default 2,000; lakesink compact vs
//     optimize.compact(), each on a fresh copy);
//   - the 20 flights NDJSON files of testdata/flights into a Delta table
//     (lakesink ingest vs Spark Structured Streaming, trigger availableNow,
//     given the same schema; JVM start, stop and exit included: bench.py
//     waits for the JVM, so its CPU time and peak RSS are in the driver's
//     rusage).
//
// The M- and K-commit tables are built once, untimed, by the faster writer
// (lakesink's table library without fsync; the log is the same), the
// K-commit one a copy of the first K commits of the other. Goals (issue
// 22): >= 1.0x of delta-rs on each, >= 3x of Spark on the streaming ingest.
func BenchmarkAgainstDeltaRS(b *testing.B) {
	n := envInt("LAKESINK_BENCH_APPENDS_N", 1000)
	openN := envInt("LAKESINK_BENCH_OPEN_COMMITS", 10000)
	compactN := envInt("LAKESINK_BENCH_COMPACT_FILES", 2000)
	figs := []string{
		"3M flights into a new table, lakesink ingest vs delta-rs write_deltalake",
		fmt.Sprintf("%d one-row appends, lakesink table.Write (5 fsyncs each) vs delta-rs write_deltalake (no fsync)", n),
		fmt.Sprintf("%d one-row appends, neither fsyncs: lakesink table.Write (LocalSkipFsync) vs delta-rs write_deltalake", n),
		fmt.Sprintf("open the %d-commit table, lakesink describe vs delta-rs DeltaTable()", openN),
		fmt.Sprintf("compact %d one-row files, lakesink compact vs delta-rs optimize.compact()", compactN),
		"20 flights NDJSON files, lakesink ingest vs Spark Structured Streaming (JVM start and exit included)",
	}
	py, script := engineBenchPython(b, figs...)
	pyCmd := func(args ...string) *exec.Cmd {
		return exec.Command(py, append([]string{script}, args...)...)
	}
	work := b.TempDir()
	dir := func(kind string, i int) string { return filepath.Join(work, fmt.Sprintf("%s-%d", kind, i)) }

	b.Run("write3m", func(b *testing.B) {
		src, file := flights3M(b)
		benchproc.AB(b, figs[0], "delta-rs write_deltalake(pyarrow.parquet.read_table)",
			func(i int) *exec.Cmd { return ingestCmd(src, dir("ls3m", i)) },
			func(i int) *exec.Cmd { return pyCmd("write3m", file, filepath.Join(dir("rs3m", i), "t")) })
	})

	appends := func(b *testing.B, fig, kind string, noSync bool) {
		benchproc.AB(b, fig, "delta-rs write_deltalake mode=append",
			func(i int) *exec.Cmd { return appendsCmd(n, filepath.Join(dir(kind, i), "t"), noSync) },
			func(i int) *exec.Cmd { return pyCmd("appends", strconv.Itoa(n), filepath.Join(dir("rs"+kind, i), "t")) })
		if d := describe(b, filepath.Join(dir(kind, 0), "t")); d.Version != int64(n-1) || d.NumFiles != n {
			b.Fatalf("lakesink's appends: version %d with %d files, want %d with %d", d.Version, d.NumFiles, n-1, n)
		}
	}
	b.Run("appends", func(b *testing.B) { appends(b, figs[1], "lsapp", false) })
	b.Run("appends-nosync", func(b *testing.B) { appends(b, figs[2], "lsappnosync", true) })

	// The shared tables: compactN commits, copied, then up to openN.
	built := filepath.Join(work, "built", "t")
	compactSrc := filepath.Join(work, "compact-src", "t")
	build := func(b *testing.B) {
		if _, err := os.Stat(built); err == nil {
			return
		}
		run := func(count int) {
			if out, err := appendsCmd(count, built, true).CombinedOutput(); err != nil {
				b.Fatalf("building the %d-commit table: %v\n%s", openN, err, out)
			}
		}
		run(min(compactN, openN))
		corpus.CopyDir(b, built, compactSrc)
		if openN > compactN {
			run(openN - compactN)
		}
	}
	b.Run("open", func(b *testing.B) {
		build(b)
		if d := describe(b, built); d.Version != int64(openN-1) || d.NumFiles != openN {
			b.Fatalf("built table: version %d with %d files, want %d with %d", d.Version, d.NumFiles, openN-1, openN)
		}
		benchproc.AB(b, figs[3], "delta-rs DeltaTable(path), version and file list",
			func(int) *exec.Cmd { return exec.Command(lakesinkBin, "describe", "--json", built) },
			func(int) *exec.Cmd { return pyCmd("open", built) })
	})

	b.Run("compact", func(b *testing.B) {
		build(b)
		if compactN > openN {
			b.Skipf("LAKESINK_BENCH_COMPACT_FILES %d > LAKESINK_BENCH_OPEN_COMMITS %d", compactN, openN)
		}
		benchproc.AB(b, figs[4], "delta-rs optimize.compact()",
			func(i int) *exec.Cmd {
				t := filepath.Join(dir("lscompact", i), "t")
				corpus.CopyDir(b, compactSrc, t)
				return exec.Command(lakesinkBin, "compact", t, "-q")
			},
			func(i int) *exec.Cmd {
				t := filepath.Join(dir("rscompact", i), "t")
				corpus.CopyDir(b, compactSrc, t)
				return pyCmd("compact", t)
			})
		// Both compacted the K files into one (checked untimed).
		for _, kind := range []string{"lscompact", "rscompact"} {
			d := describe(b, filepath.Join(dir(kind, 0), "t"))
			if d.NumFiles != 1 || d.NumRecords == nil || *d.NumRecords != int64(compactN) {
				b.Fatalf("%s: %d files, %v records after compaction, want 1 file of %d", kind, d.NumFiles, d.NumRecords, compactN)
			}
		}
	})

	b.Run("stream", func(b *testing.B) {
		files, err := filepath.Glob("../testdata/flights/flights-*.json")
		if err != nil || len(files) != 20 {
			b.Fatalf("testdata/flights: %d files (%v), want 20", len(files), err)
		}
		src := filepath.Join(work, "flights-src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, filepath.Base(f)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		schemaFile, err := filepath.Abs("../testdata/flights-schema.json")
		if err != nil {
			b.Fatal(err)
		}
		// bench.py's answer: where the Spark run's wall time went.
		outs := make([]*strings.Builder, benchproc.Pairs())
		benchproc.AB(b, figs[5], "Spark 4.2 + Delta 4.4 readStream.json -> writeStream delta, availableNow, stop, JVM exit",
			func(i int) *exec.Cmd {
				d := dir("lsstream", i)
				return exec.Command(lakesinkBin, "ingest", "--source", src, "--schema", schemaFile, "--timestamp-format", "2006/01/02 15:04",
					"--trigger", "once", "--checkpoint", filepath.Join(d, "chk"), "--table", filepath.Join(d, "t"), "-q")
			},
			func(i int) *exec.Cmd {
				d := dir("sparkstream", i)
				cmd := pyCmd("stream", src, schemaFile, filepath.Join(d, "t"), filepath.Join(d, "chk"))
				outs[i] = &strings.Builder{}
				cmd.Stdout = outs[i]
				return cmd
			})
		for i, o := range outs {
			b.Logf("Spark run %d: %s", i, strings.TrimSpace(o.String()))
		}
		// Both wrote the same 20,000 rows (date a timestamp in both):
		// lakesink scan of each table, sorted, untimed.
		var scans [2][]string
		for k, d := range []string{dir("lsstream", 0), dir("sparkstream", 0)} {
			out, err := exec.Command(lakesinkBin, "scan", filepath.Join(d, "t")).Output()
			if err != nil {
				b.Fatalf("scan %s: %v", d, err)
			}
			scans[k] = strings.Split(strings.TrimSpace(string(out)), "\n")
			slices.Sort(scans[k])
		}
		if len(scans[0]) != 20000 || !slices.Equal(scans[0], scans[1]) {
			b.Fatalf("lakesink's table has %d rows, Spark's %d, or their rows differ", len(scans[0]), len(scans[1]))
		}
	})
}
