package reader

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// Benchmarks (make bench): a scan of a 3M-row flights table (the 20k-row
// sample of testdata/flights replicated 150 times, each replica shifted by
// one year, partitioned by origin) with a selective partition filter and
// with a stats-only filter, against a raw parquet-go read of every data file
// of the same table in the same run (decode every row, apply the same
// filter in Go: what a reader without Delta metadata must do); and the time
// to open a snapshot of a 100k-file table.
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

// rawScan reads every data file of the table with parquet-go's row reader
// and counts rows for which keep(row) holds.
func rawScan(b *testing.B, dir string, keep func(parquet.Row, *parquet.Schema) bool) int {
	b.Helper()
	var n int
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.Contains(p, "_delta_log") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return err
		}
		buf := make([]parquet.Row, 1024)
		for _, rg := range pf.RowGroups() {
			rows := rg.Rows()
			for {
				k, err := rows.ReadRows(buf)
				for _, r := range buf[:k] {
					if keep(r, pf.Schema()) {
						n++
					}
				}
				if err != nil {
					break
				}
			}
			rows.Close()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func BenchmarkScanFlights(b *testing.B) {
	dir, total := flightsTable(b)
	ctx := context.Background()
	lastYear := time.Date(2001+(total/20000)-1, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		where string
		keep  func(r parquet.Row, s *parquet.Schema) bool
	}{
		{"partition filter origin=SFO", "origin = 'SFO'", func(r parquet.Row, s *parquet.Schema) bool {
			// origin is not stored in the files (it is the partition
			// directory); a raw reader must decode every row anyway.
			return false
		}},
		{"stats-only filter date>=last year", fmt.Sprintf("date >= TIMESTAMP '%s'", lastYear.Format("2006-01-02 15:04:05")),
			func(r parquet.Row, s *parquet.Schema) bool {
				for _, v := range r {
					if v.Column() == 0 && !v.IsNull() {
						return v.Int64() >= lastYear.UnixMicro()
					}
				}
				return false
			}},
		{"full scan", "", func(parquet.Row, *parquet.Schema) bool { return true }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var ours, raw time.Duration
			var n int
			for b.Loop() {
				start := time.Now()
				snap, err := Open(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				n = 0
				for _, err := range snap.Rows(ctx, ReadOptions{Where: tc.where}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				snap.Close()
				ours += time.Since(start)
				start = time.Now()
				rawScan(b, dir, tc.keep)
				raw += time.Since(start)
			}
			iters := time.Duration(max(b.N, 1))
			ours, raw = ours/iters, raw/iters
			b.ReportMetric(float64(n), "rows")
			// The baseline reads every file on one goroutine, as a reader
			// without the Delta log must (the filter rows show what pruning
			// by partition and stats saves); lakesink reads Workers files
			// at once and builds Go values of every row it returns.
			fmt.Printf("BENCHROW\tscan %dk flights, %s (%d rows), lakesink %d workers vs 1 goroutine, time (lower is better)\t%v\t%v (raw parquet-go row read of every file)\t%.2f\n",
				total/1000, tc.name, n, DefaultReadOptions().Workers, ours.Round(time.Millisecond), raw.Round(time.Millisecond), float64(ours)/float64(raw))
		})
	}
}

// BenchmarkOpenSnapshot100kFiles opens a table whose log adds 100,000 files
// (10 commits of 10,000 add actions, no checkpoint), against the baseline of
// decoding the same JSON lines into generic maps.
func BenchmarkOpenSnapshot100kFiles(b *testing.B) {
	dir := b.TempDir()
	const commits, perCommit = 10, 10_000
	var logs []string
	sch := `{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}`
	for c := range commits {
		var sb strings.Builder
		if c == 0 {
			sb.WriteString(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n")
			sb.WriteString(`{"metaData":{"id":"bench","format":{"provider":"parquet","options":{}},"schemaString":"` + sch + `","partitionColumns":["p"],"configuration":{}}}` + "\n")
		}
		fmt.Fprintf(&sb, `{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}`+"\n", 1700000000000+c)
		for i := range perCommit {
			id := c*perCommit + i
			fmt.Fprintf(&sb, `{"add":{"path":"p=%d/part-%05d-0b5e1a2c-0000-4000-8000-%012d.c000.snappy.parquet","partitionValues":{"p":"%d"},"size":1024,"modificationTime":1700000000000,"dataChange":true,"stats":"{\"numRecords\":100,\"minValues\":{\"id\":%d},\"maxValues\":{\"id\":%d},\"nullCount\":{\"id\":0}}"}}`+"\n",
				id%100, id, id, id%100, id*100, id*100+99)
		}
		logs = append(logs, sb.String())
	}
	writeLog(b, dir, logs...)
	ctx := context.Background()
	var ours, raw time.Duration
	var files int
	for b.Loop() {
		start := time.Now()
		snap, err := Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		files = snap.Delta().NumFiles()
		snap.Close()
		ours += time.Since(start)
		start = time.Now()
		n := 0
		for c := range commits {
			data, err := os.ReadFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", c)))
			if err != nil {
				b.Fatal(err)
			}
			for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
		raw += time.Since(start)
	}
	if files != commits*perCommit {
		b.Fatalf("snapshot has %d files", files)
	}
	iters := time.Duration(max(b.N, 1))
	ours, raw = ours/iters, raw/iters
	fmt.Printf("BENCHROW\topen snapshot, 100k-file table (JSON log)\t%v\t%v (json decode of the log)\t%.2f\n",
		ours.Round(time.Millisecond), raw.Round(time.Millisecond), float64(ours)/float64(raw))
}
