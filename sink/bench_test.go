package sink_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/testutil/benchproc"
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
func loadFlights() (chunks [][][]any, source string, err error) {
	ctx := context.Background()
	if dir, err := corpus.Find(corpus.Data, "flights-3m.parquet"); err == nil {
		st, err := storage.Open(ctx, filepath.Dir(dir))
		if err != nil {
			return nil, "", err
		}
		defer st.Close()
		f, err := parquetio.OpenFile(ctx, st, "flights-3m.parquet", -1)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		for rows, err := range f.RowGroups(ctx, nil, parquetio.ReadOptions{}) {
			if err != nil {
				return nil, "", err
			}
			for _, r := range rows {
				if t, ok := r[0].(time.Time); ok {
					r[0] = t.UTC()
				}
			}
			chunks = append(chunks, rows)
		}
		return chunks, "flights-3m.parquet", nil
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
	return chunks, "synthetic rows of the flights shape (../shared absent)", nil
}

// The ingest benchmark's sides run as processes of this test binary
// (benchproc.Side). Each loads the 3M flight rows into memory as [][]any
// (setup, untimed), then times its work with benchproc.Work, and prints the
// rows it wrote:
//
//   - "sink-ingest": the Delta sink (sink.NewDelta on local disk, snappy)
//     takes one batch per source row group: each batch's files written with
//     stats (the writer splits a file's columns into GOMAXPROCS lanes),
//     fsynced, and ONE commit per batch.
//   - "raw-ingest": raw parquet-go from the same rows: each source row group
//     converted to structs 4,096 rows at a time and written with a
//     GenericWriter (snappy) to its own file, fsynced; GOMAXPROCS files at
//     once (errgroup); no Delta log, no statistics, no validation.
func init() {
	benchproc.Register("sink-ingest", func(args []string) error {
		chunks, _, err := loadFlights()
		if err != nil {
			return err
		}
		var n int64
		err = benchproc.Work(func() error {
			ctx := context.Background()
			s, err := sink.NewDelta(ctx, "file://"+args[0], sink.Options{QueryID: "bench", Compression: "snappy"})
			if err != nil {
				return err
			}
			for ci, rows := range chunks {
				if _, err := s.AddBatch(ctx, int64(ci), &schema.Batch{Schema: flightSchema, Rows: rows}); err != nil {
					s.Close()
					return err
				}
				n += int64(len(rows))
			}
			return s.Close()
		})
		fmt.Println(n)
		return err
	})
	benchproc.Register("raw-ingest", func(args []string) error {
		chunks, _, err := loadFlights()
		if err != nil {
			return err
		}
		var n atomic.Int64
		err = benchproc.Work(func() error {
			var g errgroup.Group
			g.SetLimit(runtime.GOMAXPROCS(0))
			for ci, rows := range chunks {
				g.Go(func() error {
					f, err := os.Create(filepath.Join(args[0], fmt.Sprintf("raw-%d.parquet", ci)))
					if err != nil {
						return err
					}
					defer f.Close()
					w := parquet.NewGenericWriter[flightRow](f, parquet.Compression(&parquet.Snappy))
					buf := make([]flightRow, 0, 4096)
					for lo := 0; lo < len(rows); lo += cap(buf) {
						buf = buf[:0]
						for _, r := range rows[lo:min(lo+cap(buf), len(rows))] {
							buf = append(buf, flightRow{Date: r[0].(time.Time).UnixMicro(), Delay: r[1].(int64), Distance: r[2].(int64), Origin: r[3].(string), Destination: r[4].(string)})
						}
						if _, err := w.Write(buf); err != nil {
							return err
						}
					}
					if err := w.Close(); err != nil {
						return err
					}
					n.Add(int64(len(rows)))
					return f.Sync()
				})
			}
			return g.Wait()
		})
		fmt.Println(n.Load())
		return err
	})
}

// BenchmarkSinkIngestFlights3M: "sink-ingest" against "raw-ingest" (see
// init), whole processes alternated (benchproc.AB); the wall and CPU rows
// are those of the work (the rows already in memory in each process), the
// RSS row the whole process's (the rows in memory included, the same input
// either side). Goal (issue 22): the sink >= 0.8x. Whole-process figures of
// the CLI's ingest from a Parquet file are in tests'
// BenchmarkCLIIngestParquet.
func BenchmarkSinkIngestFlights3M(b *testing.B) {
	_, source, err := loadFlights()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("source: %s", source)
	work := b.TempDir()
	procs := runtime.GOMAXPROCS(0)
	for b.Loop() {
		var ours, raw string
		out := func(kind string, i int) string {
			d := filepath.Join(work, fmt.Sprintf("%s-%d", kind, i))
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			return d
		}
		benchproc.AB(b, fmt.Sprintf("sink ingest 3M flights already in memory, snappy, %d lanes vs raw parquet-go %d files at once", procs, procs),
			"raw parquet-go GenericWriter, fsync",
			func(i int) *exec.Cmd {
				cmd := benchproc.Side("sink-ingest", out("sink", i))
				cmd.Stdout = answerWriter{&ours}
				return cmd
			},
			func(i int) *exec.Cmd {
				cmd := benchproc.Side("raw-ingest", out("raw", i))
				cmd.Stdout = answerWriter{&raw}
				return cmd
			})
		if strings.TrimSpace(ours) != strings.TrimSpace(raw) || strings.TrimSpace(ours) == "0" {
			b.Fatalf("rows written: sink %q, raw %q", ours, raw)
		}
	}
}

type answerWriter struct{ s *string }

func (w answerWriter) Write(p []byte) (int, error) { *w.s = string(p); return len(p), nil }
