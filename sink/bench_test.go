package sink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/internal/testutil/heaptest"
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

// BenchmarkSinkIngestFlights3M writes the 3M flight rows through the Delta
// sink (one batch per source row group, snappy, to local disk) and through a
// raw parquet-go GenericWriter of the same rows with the same compression,
// in the same run, and prints the ingest rates and their ratio (target: the
// sink at least 0.8x of raw parquet-go) and the sink's peak heap above the
// input rows held in memory (target under 512 MiB).
func BenchmarkSinkIngestFlights3M(b *testing.B) {
	chunks, source := loadFlights(b)
	var total int64
	for _, c := range chunks {
		total += int64(len(c))
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		// Baseline: raw parquet-go, structs converted from the same rows.
		dir := b.TempDir()
		rawStart := time.Now()
		for ci, rows := range chunks {
			f, err := os.Create(fmt.Sprintf("%s/raw-%d.parquet", dir, ci))
			if err != nil {
				b.Fatal(err)
			}
			w := parquet.NewGenericWriter[flightRow](f, parquet.Compression(&parquet.Snappy))
			buf := make([]flightRow, 0, 4096)
			for _, r := range rows {
				buf = append(buf, flightRow{Date: r[0].(time.Time).UnixMicro(), Delay: r[1].(int64), Distance: r[2].(int64), Origin: r[3].(string), Destination: r[4].(string)})
				if len(buf) == cap(buf) {
					if _, err := w.Write(buf); err != nil {
						b.Fatal(err)
					}
					buf = buf[:0]
				}
			}
			if _, err := w.Write(buf); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		raw := time.Since(rawStart)

		s, err := sink.NewDelta(ctx, "file://"+b.TempDir(), sink.Options{QueryID: "bench", Compression: "snappy"})
		if err != nil {
			b.Fatal(err)
		}
		var lake time.Duration
		peak := heaptest.Peak(func() {
			start := time.Now()
			for ci, rows := range chunks {
				if _, err := s.AddBatch(ctx, int64(ci), &schema.Batch{Schema: flightSchema, Rows: rows}); err != nil {
					b.Fatal(err)
				}
			}
			lake = time.Since(start)
		})
		s.Close()
		lakeRate := float64(total) / lake.Seconds()
		rawRate := float64(total) / raw.Seconds()
		b.ReportMetric(lakeRate, "rows/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.Logf("source: %s, %d rows", source, total)
		fmt.Printf("BENCHROW\tsink ingest rows/s (3M flights, snappy) vs raw parquet-go\t%.0f\t%.0f\t%.2fx\n", lakeRate, rawRate, lakeRate/rawRate)
		fmt.Printf("BENCHROW\tsink peak heap MiB above the input rows\t%.0f\t512 (target)\t%.2f\n", float64(peak)/(1<<20), float64(peak)/(1<<20)/512)
	}
}
