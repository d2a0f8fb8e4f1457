package parquetio

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// discardStore accepts data files and throws them away.
type discardStore struct{ memStore }

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) Close() error                { return nil }
func (discardWriter) Abort() error                { return nil }

func (d *discardStore) NewWriter(context.Context, string) (storage.Writer, error) {
	return discardWriter{}, nil
}

type flightRow struct {
	Time     time.Time `parquet:"time,timestamp(microsecond)"`
	Delay    int64     `parquet:"delay"`
	Distance int64     `parquet:"distance"`
	Origin   string    `parquet:"origin"`
	Dest     string    `parquet:"destination"`
}

var airports = []string{"SFO", "LAX", "JFK", "ORD", "ATL", "DFW", "DEN", "SEA", "BOS", "MIA"}

func flightRows(n int) ([]flightRow, *schema.Batch) {
	structs := make([]flightRow, n)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range structs {
		structs[i] = flightRow{
			Time:     base.Add(time.Duration(i) * time.Second),
			Delay:    int64(i%120 - 20),
			Distance: int64(100 + i%3000),
			Origin:   airports[i%len(airports)],
			Dest:     airports[(i/7)%len(airports)],
		}
	}
	b, err := schema.FromStructs(structs)
	if err != nil {
		panic(err)
	}
	return structs, b
}

// BenchmarkWriteFlights compares WriteFiles with a raw parquet-go
// GenericWriter on the same 1M rows (snappy, one file).
func BenchmarkWriteFlights(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		structs, batch := flightRows(n)
		b.Run(fmt.Sprintf("lakesink/rows=%d", n), func(b *testing.B) {
			st := &discardStore{memStore: *newMemStore()}
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				files, err := WriteFiles(context.Background(), st, batch, WriteOptions{TargetFileSizeBytes: 1 << 40})
				if err != nil || len(files) != 1 {
					b.Fatal(err, len(files))
				}
			}
			reportCPU(b, c0, n)
		})
		b.Run(fmt.Sprintf("parquet-go/rows=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				w := parquet.NewGenericWriter[flightRow](io.Discard, parquet.Compression(&snappy.Codec{}))
				if _, err := w.Write(structs); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, c0, n)
		})
	}
}

// cpuTime is the process's user+system CPU time. The benchmark machine is
// shared, so wall-clock rows/s are noisy; CPU time per row is what the two
// writers are compared on.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, c0 time.Duration, rows int) {
	cpu := cpuTime() - c0
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	}
}

// BenchmarkReadFlights reads back 1M flights rows written by WriteFiles.
func BenchmarkReadFlights(b *testing.B) {
	const n = 1_000_000
	_, batch := flightRows(n)
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, batch, WriteOptions{TargetFileSizeBytes: 1 << 40, RowGroupSizeBytes: 32 << 20})
	if err != nil || len(files) != 1 {
		b.Fatal(err)
	}
	wf := files[0]
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		f, err := OpenFile(context.Background(), st, wf.Path, wf.Size)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for rows, err := range f.RowGroups(context.Background(), batch.Schema, ReadOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
			got += len(rows)
		}
		if got != n {
			b.Fatalf("%d rows", got)
		}
	}
	reportCPU(b, c0, n)
}
