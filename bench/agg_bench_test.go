package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/reader"
)

// childEnv makes this test binary run one side of a benchmark (see runChild)
// instead of its tests; init notices it before any test runs.
const childEnv = "LAKESINK_BENCH_CHILD"

func init() {
	what := os.Getenv(childEnv)
	if what == "" {
		return
	}
	out, err := runChild(what, os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, what+":", err)
		os.Exit(1)
	}
	fmt.Println(out)
	os.Exit(0)
}

// runChild is one measured process; it prints "count sum":
//
//   - "lakesink-agg": reader.Open of the table, Snapshot.Batches with
//     Columns ["distance"] (only that column is fetched and decoded, into
//     int64 slices), count and sum of the non-null values;
//     ReadOptions.Workers = GOMAXPROCS.
//   - "duckdb-agg": DuckDB (in-memory database, threads = GOMAXPROCS),
//     SELECT count(*), sum(distance) FROM read_parquet([the snapshot's
//     live data files]): the same files, no Delta log.
func runChild(what, arg string) (string, error) {
	ctx := context.Background()
	switch what {
	case "lakesink-agg":
		snap, err := reader.Open(ctx, arg)
		if err != nil {
			return "", err
		}
		defer snap.Close()
		var n, sum int64
		ro := reader.DefaultReadOptions()
		ro.Columns = []string{"distance"}
		for b, err := range snap.Batches(ctx, ro) {
			if err != nil {
				return "", err
			}
			n += int64(b.Len)
			d := &b.Columns[0] // distance: long, in Int64
			for i, x := range d.Int64 {
				if !d.IsNull(i) {
					sum += x
				}
			}
		}
		return fmt.Sprint(n, " ", sum), nil
	case "duckdb-agg":
		files := strings.Split(arg, "\n")
		db, err := sql.Open("duckdb", "")
		if err != nil {
			return "", err
		}
		defer db.Close()
		if _, err := db.Exec(fmt.Sprintf("SET threads TO %d", runtime.GOMAXPROCS(0))); err != nil {
			return "", err
		}
		quoted := make([]string, len(files))
		for i, f := range files {
			quoted[i] = "'" + strings.ReplaceAll(f, "'", "''") + "'"
		}
		var n, sum int64
		q := "SELECT count(*), coalesce(sum(distance), 0) FROM read_parquet([" + strings.Join(quoted, ",") + "])"
		if err := db.QueryRow(q).Scan(&n, &sum); err != nil {
			return "", err
		}
		return fmt.Sprint(n, " ", sum), nil
	}
	return "", fmt.Errorf("unknown child %q", what)
}

// BenchmarkAggregateVsDuckDB: count + sum(distance) over the 3M-row flights
// table that `lakesink ingest` writes from ../shared/data/flights-3m.parquet,
// read by lakesink's reader (whole process: open the snapshot, read the one
// column) against DuckDB reading the same data files, both as processes of
// this test binary with GOMAXPROCS threads, alternated A B A B
// (LAKESINK_BENCH_PAIRS pairs, default 3); medians of wall time, peak RSS
// and CPU, and the median of the pairwise speed ratios. The two answers
// must agree. Goal (issue 22): lakesink within 3x of DuckDB.
func BenchmarkAggregateVsDuckDB(b *testing.B) {
	src, err := corpus.Find(corpus.Data, "flights-3m.parquet")
	if err != nil {
		b.Skipf("skipped: %v", err)
	}
	work := b.TempDir()
	bin := lakesinkBin(b, work)
	srcDir := filepath.Join(work, "src")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Link(src, filepath.Join(srcDir, "flights-3m.parquet")); err != nil {
		data, err := os.ReadFile(src) // another file system: a copy
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(srcDir, "flights-3m.parquet"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tbl := filepath.Join(work, "t")
	ingest := exec.Command(bin, "ingest", "--source", srcDir, "--format", "parquet", "--trigger", "once", "--quiet",
		"--checkpoint", filepath.Join(work, "chk"), "--table", tbl)
	if out, err := ingest.CombinedOutput(); err != nil {
		b.Fatalf("ingest: %v\n%s", err, out)
	}
	snap, err := reader.Open(context.Background(), tbl)
	if err != nil {
		b.Fatal(err)
	}
	defer snap.Close()
	live, err := snap.Files(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	rowGroups := 0
	for _, f := range live {
		files = append(files, filepath.Join(tbl, filepath.FromSlash(f.Key)))
		pf, err := parquetio.OpenFile(context.Background(), snap.Store(), f.Key, f.Size)
		if err != nil {
			b.Fatal(err)
		}
		rowGroups += pf.NumRowGroups()
		pf.Close()
	}
	// Row groups are what both readers parallelise over.
	b.Logf("%d data files, %d row groups", len(files), rowGroups)
	var answers [2]string
	a := func(int) *exec.Cmd { return childCmd("lakesink-agg", tbl, &answers[0]) }
	base := func(int) *exec.Cmd { return childCmd("duckdb-agg", strings.Join(files, "\n"), &answers[1]) }
	benchproc.AB(b, fmt.Sprintf("count + sum(distance), 3M flights (%d file), lakesink reader vs DuckDB, both %d threads", len(files), runtime.GOMAXPROCS(0)),
		"DuckDB read_parquet of the same files", a, base)
	if answers[0] != answers[1] || answers[0] == "" {
		b.Fatalf("answers differ: lakesink %q, DuckDB %q", answers[0], answers[1])
	}
}

// lakesinkBin is $LAKESINK_BIN, else a build of ../cmd/lakesink.
func lakesinkBin(b *testing.B, dir string) string {
	if bin := os.Getenv("LAKESINK_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			b.Fatal(err)
		}
		return abs
	}
	bin := filepath.Join(dir, "lakesink")
	build := exec.Command("go", "build", "-o", bin, "../cmd/lakesink")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build lakesink: %v\n%s", err, out)
	}
	return bin
}

// childCmd re-executes this test binary as child what with arg; its stdout
// (the answer) goes to *answer.
func childCmd(what, arg string, answer *string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$", arg)
	cmd.Env = append(os.Environ(), childEnv+"="+what)
	cmd.Stdout = &answerWriter{answer}
	return cmd
}

type answerWriter struct{ s *string }

func (w *answerWriter) Write(p []byte) (int, error) {
	*w.s = strings.TrimSpace(string(p))
	return len(p), nil
}
