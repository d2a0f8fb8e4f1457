package table_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// benchFlightRow is the raw parquet-go baseline's row: a synthetic id and
// the five flights columns.
type benchFlightRow struct {
	ID          int64  `parquet:"id"`
	Date        int64  `parquet:"date,timestamp(microsecond)"`
	Delay       int64  `parquet:"delay"`
	Distance    int64  `parquet:"distance"`
	Origin      string `parquet:"origin"`
	Destination string `parquet:"destination"`
}

var benchFlightSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: false},
	{Name: "date", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "delay", Type: schema.TypeLong, Nullable: true},
	{Name: "distance", Type: schema.TypeLong, Nullable: true},
	{Name: "origin", Type: schema.TypeString, Nullable: true},
	{Name: "destination", Type: schema.TypeString, Nullable: true},
}}

const (
	benchMergeRows    = 3_000_000
	benchMergeChanged = 30_000 // 1%
)

var benchAirports = []string{"SFO", "LAX", "JFK", "ORD", "ATL", "DEN", "SEA", "BOS", "MIA", "PHX"}

func benchFlight(n int64, delay int64) []any {
	base := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	return []any{n, base.Add(time.Duration(n) * time.Minute), delay, 100 + n%2500, benchAirports[n%10], benchAirports[(n/10)%10]}
}

// BenchmarkMergeUpsert1Percent upserts 30,000 changed keys (1%, a range of
// recent ids as a change feed touches them) into a 3M-row flights-shaped
// table with a synthetic id key, files rolled at 2 MiB, and compares the
// merge with a full rewrite of the table by raw parquet-go (every file read
// and written again with the changes applied), in the same run. It prints
// the files rewritten and the time ratio (goal: at most 10% of the files,
// at least 10x faster).
func BenchmarkMergeUpsert1Percent(b *testing.B) {
	ctx := context.Background()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		tb, err := table.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		const chunk = 250_000
		for from := int64(0); from < benchMergeRows; from += chunk {
			batch := &schema.Batch{Schema: benchFlightSchema}
			for n := from; n < from+chunk; n++ {
				batch.Rows = append(batch.Rows, benchFlight(n, n%300-30))
			}
			if _, err := tb.Write(ctx, batch, table.WriteOptions{Properties: map[string]string{"delta.targetFileSize": "2mb"}}); err != nil {
				b.Fatal(err)
			}
		}
		first := int64(benchMergeRows - 2*benchMergeChanged)
		changes := &schema.Batch{Schema: benchFlightSchema}
		for n := first; n < first+benchMergeChanged; n++ {
			changes.Rows = append(changes.Rows, benchFlight(n, 999))
		}
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var keys []string
		for _, a := range snap.Files() {
			k, _ := snap.FileKey(a.Path)
			keys = append(keys, k)
		}
		// Baseline: raw parquet-go rewrites every file with the changes.
		runtime.GC() // the table's build leaves garbage; neither side pays for it
		rawStart := time.Now()
		rawRows, err := rawRewrite(dir, keys, first, first+benchMergeChanged)
		raw := time.Since(rawStart)
		if err != nil {
			b.Fatal(err)
		}
		if rawRows != benchMergeRows {
			b.Fatalf("baseline rewrote %d rows", rawRows)
		}
		runtime.GC()
		b.StartTimer()
		start := time.Now()
		res, err := tb.Merge(ctx, changes, table.MergeOptions{Keys: []string{"id"}})
		lake := time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.NumUpdated != benchMergeChanged || res.NumInserted != 0 {
			b.Fatalf("result %+v", res)
		}
		frac := float64(res.NumFilesRemoved) / float64(res.NumFilesInTable)
		b.ReportMetric(frac, "files-rewritten-fraction")
		b.ReportMetric(raw.Seconds()/lake.Seconds(), "speedup")
		fmt.Printf("BENCHROW\tmerge: upsert 30,000 keys (1%%) into 3M rows, files rewritten (of %d)\t%d\t%d (full rewrite)\t%.3f\n",
			res.NumFilesInTable, res.NumFilesRemoved, res.NumFilesInTable, frac)
		fmt.Printf("BENCHROW\tmerge: upsert 30,000 keys (1%%) into 3M rows, seconds vs raw parquet-go full rewrite\t%.2f\t%.2f\t%.1fx faster\n",
			lake.Seconds(), raw.Seconds(), raw.Seconds()/lake.Seconds())
		tb.Close()
	}
}

// rawRewrite reads every file with parquet-go and writes it again with the
// rows whose id is in [lo, hi) changed, snappy, as a full-table rewrite.
func rawRewrite(dir string, keys []string, lo, hi int64) (int64, error) {
	var n int64
	for i, k := range keys {
		in, err := os.Open(filepath.Join(dir, filepath.FromSlash(k)))
		if err != nil {
			return n, err
		}
		r := parquet.NewGenericReader[benchFlightRow](in)
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("raw-%d.parquet", i)))
		if err != nil {
			in.Close()
			return n, err
		}
		w := parquet.NewGenericWriter[benchFlightRow](out, parquet.Compression(&parquet.Snappy))
		buf := make([]benchFlightRow, 4096)
		for {
			m, err := r.Read(buf)
			for j := range buf[:m] {
				if buf[j].ID >= lo && buf[j].ID < hi {
					buf[j].Delay = 999
				}
			}
			if _, werr := w.Write(buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
			if err == io.EOF {
				break
			}
			if err != nil {
				return n, err
			}
		}
		r.Close()
		in.Close()
		if err := w.Close(); err != nil {
			return n, err
		}
		if err := out.Sync(); err != nil {
			return n, err
		}
		out.Close()
	}
	return n, nil
}
