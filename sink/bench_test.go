package sink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
)

// flightRow is the raw parquet-go baseline's row type: the same five columns.
type flightRow struct {
	Date        int64  `parquet:"date,timestamp(microsecond)"`
	Delay       int64  `parquet:"delay"`
	Distance    int64  `parquet:"distance"`
	Origin      string `parquet:"origin"`
	Destination string `parquet:"destination"`
}

var flightSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "date", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "delay", Type: schema.TypeLong, Nullable: true},
	{Name: "distance", Type: schema.TypeLong, Nullable: true},
	{Name: "origin", Type: schema.TypeString, Nullable: true},
	{Name: "destination", Type: schema.TypeString, Nullable: true},
}}

// loadFlights returns the 3M flight rows in chunks (one per row group of the
// source file; its date column, TIMESTAMP without UTC adjustment, is taken as
// UTC), or synthetic rows of the same shape when ../shared/data is absent
// (package corpus finds it).
func loadFlights(b *testing.B) (chunks [][][]any, source string) {
	ctx := context.Background()
	if dir, err := corpus.Find(corpus.Data, "flights-3m.parquet"); err == nil {
		st, err := storage.Open(ctx, filepath.Dir(dir))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		f, err := parquetio.OpenFile(ctx, st, "flights-3m.parquet", -1)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		for rows, err := range f.RowGroups(ctx, nil, parquetio.ReadOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range rows {
				if t, ok := r[0].(time.Time); ok {
					r[0] = t.UTC()
				}
			}
			chunks = append(chunks, rows)
		}
		return chunks, "flights-3m.parquet"
	}
	airports := []string{"SFO", "LAX", "JFK", "ORD", "ATL", "DEN", "SEA", "BOS", "MIA", "PHX"}
	base := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for c := 0; c < 11; c++ {
		rows := make([][]any, 0, 272_728)
		for i := 0; i < 272_728 && c*272_728+i < 3_000_000; i++ {
			n := c*272_728 + i
			rows = append(rows, []any{base.Add(time.Duration(n) * time.Minute), int64(n%300 - 30), int64(100 + n%2500), airports[n%10], airports[(n/10)%10]})
		}
		chunks = append(chunks, rows)
	}
	return chunks, "synthetic rows of the flights shape (../shared absent)"
}

// BenchmarkSinkIngestFlights3M writes the 3M flight rows, already in memory,
// through the Delta sink (one batch per source row group, snappy, to local
// disk: each batch's files fsynced and ONE commit) and, in the same run,
// through raw parquet-go GenericWriters of the same rows with the same
// compression (the rows converted to structs BEFORE the clock starts; one
// file per source row group, fsynced; no Delta log, no statistics, no
// validation). Same parallelism either side: the sink's writer splits each
// file's columns into GOMAXPROCS lanes, the baseline writes GOMAXPROCS files
// at once (errgroup). It prints rows/s of both, their ratio (goal: the sink
// >= 0.8x), and the CPU seconds (user+sys of the process, getrusage) each
// took. Whole-process figures (wall time, peak RSS) of the CLI's ingest are
// in tests' BenchmarkCLIIngestParquet.
func BenchmarkSinkIngestFlights3M(b *testing.B) {
	chunks, source := loadFlights(b)
	var total int64
	for _, c := range chunks {
		total += int64(len(c))
	}
	structs := make([][]flightRow, len(chunks))
	for ci, rows := range chunks {
		structs[ci] = make([]flightRow, len(rows))
		for i, r := range rows {
			structs[ci][i] = flightRow{Date: r[0].(time.Time).UnixMicro(), Delay: r[1].(int64), Distance: r[2].(int64), Origin: r[3].(string), Destination: r[4].(string)}
		}
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		// Baseline: raw parquet-go, GOMAXPROCS files at once.
		dir := b.TempDir()
		cpu0 := cpuTime()
		rawStart := time.Now()
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for ci, rows := range structs {
			g.Go(func() error {
				f, err := os.Create(fmt.Sprintf("%s/raw-%d.parquet", dir, ci))
				if err != nil {
					return err
				}
				defer f.Close()
				w := parquet.NewGenericWriter[flightRow](f, parquet.Compression(&parquet.Snappy))
				for lo := 0; lo < len(rows); lo += 4096 {
					if _, err := w.Write(rows[lo:min(lo+4096, len(rows))]); err != nil {
						return err
					}
				}
				if err := w.Close(); err != nil {
					return err
				}
				return f.Sync()
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		raw := time.Since(rawStart)
		rawCPU := cpuTime() - cpu0

		s, err := sink.NewDelta(ctx, "file://"+b.TempDir(), sink.Options{QueryID: "bench", Compression: "snappy"})
		if err != nil {
			b.Fatal(err)
		}
		cpu0 = cpuTime()
		start := time.Now()
		for ci, rows := range chunks {
			if _, err := s.AddBatch(ctx, int64(ci), &schema.Batch{Schema: flightSchema, Rows: rows}); err != nil {
				b.Fatal(err)
			}
		}
		lake := time.Since(start)
		lakeCPU := cpuTime() - cpu0
		s.Close()
		lakeRate := float64(total) / lake.Seconds()
		rawRate := float64(total) / raw.Seconds()
		b.ReportMetric(lakeRate, "rows/s")
		b.Logf("source: %s, %d rows", source, total)
		procs := runtime.GOMAXPROCS(0)
		fmt.Printf("BENCHROW\tsink ingest rows/s (3M flights in memory, snappy), %d lanes vs raw parquet-go %d files at once\t%.0f\t%.0f\t%.2fx\n", procs, procs, lakeRate, rawRate, lakeRate/rawRate)
		fmt.Printf("BENCHROW\tsink ingest CPU s (user+sys) for the same rows\t%.2f\t%.2f\t%.2f\n", lakeCPU.Seconds(), rawCPU.Seconds(), lakeCPU.Seconds()/rawCPU.Seconds())
	}
}

// cpuTime is the process's user+sys CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
