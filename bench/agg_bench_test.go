package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

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
//   - "lakesink-agg": reader.Open of the table, Rows with Columns
//     ["distance"] (only that column is fetched and decoded), count and
//     sum of the non-null values; ReadOptions.Workers = GOMAXPROCS.
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
		for rec, err := range snap.Rows(ctx, ro) {
			if err != nil {
				return "", err
			}
			n++
			if d, ok := rec.Values[0].(int64); ok {
				sum += d
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
	live, err := snap.Files(context.Background(), nil)
	snap.Close()
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	for _, f := range live {
		files = append(files, filepath.Join(tbl, filepath.FromSlash(f.Key)))
	}
	var answers [2]string
	a := func() *exec.Cmd { return childCmd("lakesink-agg", tbl, &answers[0]) }
	base := func() *exec.Cmd { return childCmd("duckdb-agg", strings.Join(files, "\n"), &answers[1]) }
	abRun(b, fmt.Sprintf("count + sum(distance), 3M flights (%d file), lakesink reader vs DuckDB, both %d threads", len(files), runtime.GOMAXPROCS(0)),
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

// procFigures is one finished process: wall time, CPU time, peak RSS.
type procFigures struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

func runProc(b *testing.B, cmd *exec.Cmd) procFigures {
	b.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage")
	}
	return procFigures{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: ru.Maxrss * 1024}
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// abRun alternates a (lakesink) and base, LAKESINK_BENCH_PAIRS times
// (default 3), and prints the BENCHROW lines of figure (as tests'
// cli_bench_test.go does): wall time with the median of the pairwise speed
// ratios base/lakesink, peak RSS, CPU.
func abRun(b *testing.B, figure, baseWhat string, a, base func() *exec.Cmd) {
	b.Helper()
	pairs := 3
	if v, err := strconv.Atoi(os.Getenv("LAKESINK_BENCH_PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	var aw, bw, ac, bc []time.Duration
	var ar, br []int64
	var ratios []float64
	for i := range pairs {
		fa, fb := runProc(b, a()), runProc(b, base())
		aw, bw = append(aw, fa.wall), append(bw, fb.wall)
		ac, bc = append(ac, fa.cpu), append(bc, fb.cpu)
		ar, br = append(ar, fa.maxRSS), append(br, fb.maxRSS)
		ratios = append(ratios, fb.wall.Seconds()/fa.wall.Seconds())
		b.Logf("%s pair %d: lakesink %v %.0f MiB, baseline %v %.0f MiB", figure, i, fa.wall.Round(time.Millisecond), float64(fa.maxRSS)/(1<<20),
			fb.wall.Round(time.Millisecond), float64(fb.maxRSS)/(1<<20))
	}
	var load string
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	fmt.Printf("BENCHROW\t%s, wall (s; speed ratio baseline/lakesink, %d pairs, load %s)\t%.2f\t%.2f (%s)\t%.2fx\n",
		figure, len(ratios), load, median(aw).Seconds(), median(bw).Seconds(), baseWhat, median(ratios))
	fmt.Printf("BENCHROW\t%s, peak RSS (MiB)\t%.0f\t%.0f\t%.2f\n",
		figure, float64(median(ar))/(1<<20), float64(median(br))/(1<<20), float64(median(ar))/float64(median(br)))
	fmt.Printf("BENCHROW\t%s, CPU (user+sys s)\t%.2f\t%.2f\t%.2f\n",
		figure, median(ac).Seconds(), median(bc).Seconds(), median(ac).Seconds()/median(bc).Seconds())
}
