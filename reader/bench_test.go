package reader

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// Benchmarks (make bench): a scan of a 3M-row flights table (the 20k-row
// sample of testdata/flights replicated 150 times, each replica shifted by
// one year, partitioned by origin) with a selective partition filter, with a
// stats-only filter and with none, against a raw parquet-go read of every
// data file of the same table in the same run (decode every row, apply the
// same filter in Go: what a reader without Delta metadata must do), with the
// same number of goroutines. Each side is a whole process (benchproc.AB), the
// two alternated. (Opening a 100k-file snapshot is txlog's
// BenchmarkSnapshotOpen.)
//
// LAKESINK_BENCH_FLIGHT_ROWS overrides the row count (default 3,000,000).

type flight struct {
	date        time.Time
	delay       int64
	distance    int64
	origin      string
	destination string
}

func loadFlights(tb testing.TB) []flight {
	tb.Helper()
	files, _ := filepath.Glob("../testdata/flights/flights-*.json")
	if len(files) == 0 {
		tb.Skip("testdata/flights is absent")
	}
	var out []flight
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r struct {
				Date        string `json:"date"`
				Delay       int64  `json:"delay"`
				Distance    int64  `json:"distance"`
				Origin      string `json:"origin"`
				Destination string `json:"destination"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				tb.Fatal(err)
			}
			d, err := time.Parse("2006/01/02 15:04", r.Date)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, flight{d, r.Delay, r.Distance, r.Origin, r.Destination})
		}
		f.Close()
	}
	return out
}

// flightsTable builds the benchmark table in a temporary directory that is
// removed when b ends.
func flightsTable(b *testing.B) (string, int) {
	var flightsOnce struct {
		dir  string
		rows int
		err  error
	}
	b.Cleanup(func() {
		if flightsOnce.dir != "" {
			os.RemoveAll(flightsOnce.dir)
		}
	})
	func() {
		want := 3_000_000
		if v := os.Getenv("LAKESINK_BENCH_FLIGHT_ROWS"); v != "" {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				want = n
			}
		}
		sample := loadFlights(b)
		dir, err := os.MkdirTemp("", "lakesink-flights-")
		if err != nil {
			flightsOnce.err = err
			return
		}
		flightsOnce.dir = dir
		schemaJSON, err := os.ReadFile("../testdata/flights-schema.json")
		if err != nil {
			flightsOnce.err = err
			return
		}
		sch, err := schema.ParseSchema(schemaJSON)
		if err != nil {
			flightsOnce.err = err
			return
		}
		ctx := context.Background()
		tb, err := table.Open(ctx, dir)
		if err != nil {
			flightsOnce.err = err
			return
		}
		defer tb.Close()
		const replicasPerCommit = 10
		replica := 0
		for flightsOnce.rows < want {
			batch := &schema.Batch{Schema: sch}
			for r := 0; r < replicasPerCommit && flightsOnce.rows < want; r++ {
				for _, f := range sample {
					if flightsOnce.rows >= want {
						break
					}
					batch.Rows = append(batch.Rows, []any{f.date.AddDate(replica, 0, 0), f.delay, f.distance, f.origin, f.destination})
					flightsOnce.rows++
				}
				replica++
			}
			if _, err := tb.Write(ctx, batch, table.WriteOptions{PartitionColumns: []string{"origin"}}); err != nil {
				flightsOnce.err = err
				return
			}
		}
	}()
	if flightsOnce.err != nil {
		b.Fatal(flightsOnce.err)
	}
	return flightsOnce.dir, flightsOnce.rows
}

// The benchmarks' two sides run as processes of this test binary
// (benchproc.Side), one at a time, alternated; each prints its answer (a row
// or file count) for the parent to compare.
func init() {
	benchproc.Register("reader-scan", func(args []string) error { // dir, where
		ctx := context.Background()
		snap, err := Open(ctx, args[0])
		if err != nil {
			return err
		}
		defer snap.Close()
		n := 0
		for _, err := range snap.Rows(ctx, ReadOptions{Where: args[1]}) {
			if err != nil {
				return err
			}
			n++
		}
		fmt.Println(n)
		return nil
	})
	benchproc.Register("raw-scan", func(args []string) error { // dir, case, date bound (µs)
		bound, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return err
		}
		keep := rawFilters(bound)[args[1]]
		if keep == nil {
			return fmt.Errorf("no raw filter %q", args[1])
		}
		n, err := rawScan(args[0], keep)
		fmt.Println(n)
		return err
	})
}

// rawFilters are the raw scan's filters by case name, bound being the
// stats-only case's date bound in microseconds.
func rawFilters(bound int64) map[string]func(parquet.Row) bool {
	return map[string]func(parquet.Row) bool{
		// origin is not stored in the files (it is the partition
		// directory); a raw reader must decode every row anyway.
		"partition": func(parquet.Row) bool { return false },
		"stats": func(r parquet.Row) bool {
			for _, v := range r {
				if v.Column() == 0 && !v.IsNull() {
					return v.Int64() >= bound
				}
			}
			return false
		},
		"full": func(parquet.Row) bool { return true },
	}
}

// rawScan reads every data file of the table with parquet-go's row reader,
// GOMAXPROCS files at once (the reader's default Workers), and counts rows
// for which keep(row) holds.
func rawScan(dir string, keep func(parquet.Row) bool) (int64, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	var n atomic.Int64
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, p := range files {
		g.Go(func() error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return err
			}
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				return err
			}
			buf := make([]parquet.Row, 1024)
			var k int64
			for _, rg := range pf.RowGroups() {
				rows := rg.Rows()
				for {
					m, err := rows.ReadRows(buf)
					for _, r := range buf[:m] {
						if keep(r) {
							k++
						}
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						rows.Close()
						return err
					}
				}
				rows.Close()
			}
			n.Add(k)
			return nil
		})
	}
	err = g.Wait()
	return n.Load(), err
}

// answerOf makes cmd keep what it prints in *answer (cleared first: each
// pair's process answers afresh).
func answerOf(cmd *exec.Cmd, answer *string) *exec.Cmd {
	*answer = ""
	cmd.Stdout = answerWriter{answer}
	return cmd
}

type answerWriter struct{ s *string }

func (w answerWriter) Write(p []byte) (int, error) {
	*w.s += string(p)
	return len(p), nil
}

// BenchmarkScanFlights: for each filter, lakesink (reader.Open of the table
// and Rows with the filter as ReadOptions.Where: partition pruning, stats
// skipping, a Go value of every column of every row returned; Workers =
// GOMAXPROCS files at once) against a raw parquet-go row read of every data
// file of the same table (walked from the directory, no Delta log), the same
// filter applied in Go, GOMAXPROCS files at once. Each side is a whole
// process of this test binary, alternated (benchproc.AB): wall time and
// peak RSS of the process. The filter rows show what pruning by partition
// and stats saves; the full scan shows the cost of lakesink's rows.
func BenchmarkScanFlights(b *testing.B) {
	dir, total := flightsTable(b)
	lastYear := time.Date(2001+(total/20000)-1, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name, raw, where string
	}{
		{"partition filter origin=SFO", "partition", "origin = 'SFO'"},
		{"stats-only filter date>=last year", "stats", fmt.Sprintf("date >= TIMESTAMP '%s'", lastYear.Format("2006-01-02 15:04:05"))},
		{"full scan", "full", ""},
	}
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var ours, raw string
			for b.Loop() {
				benchproc.AB(b, fmt.Sprintf("scan %dk flights, %s, lakesink %d workers vs raw %d goroutines", total/1000, tc.name, procs, procs),
					"raw parquet-go row read of every file, filter in Go",
					func(int) *exec.Cmd { return answerOf(benchproc.Side("reader-scan", dir, tc.where), &ours) },
					func(int) *exec.Cmd {
						return answerOf(benchproc.Side("raw-scan", dir, tc.raw, strconv.FormatInt(lastYear.UnixMicro(), 10)), &raw)
					})
			}
			n, _ := strconv.Atoi(strings.TrimSpace(ours))
			b.ReportMetric(float64(n), "rows")
			if tc.raw != "partition" && ours != raw {
				b.Fatalf("rows: lakesink %q, raw %q", ours, raw)
			}
			if n == 0 {
				b.Fatal("lakesink returned no rows")
			}
		})
	}
}
