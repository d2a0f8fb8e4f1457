package table_test

import (
	"context"
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
	"github.com/lakesink/lakesink/internal/testutil/corpus"
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

// The merge benchmark's sides run as processes of this test binary
// (benchproc.Side), each on its own copy of the table:
//
//   - "merge": table.Open, then Merge of the 30,000 changed rows by id
//     (files pruned by the id stats, only the files holding a key read and
//     rewritten: one goroutine reads, the writer splits columns into
//     GOMAXPROCS lanes); prints "updated removed inTable".
//   - "raw-rewrite": every data file of the table (walked from the
//     directory) read and written again by parquet-go with the changed rows
//     applied, snappy, fsynced: what a table without file stats must do;
//     GOMAXPROCS files at once. Prints the rows rewritten.
func init() {
	benchproc.Register("merge", func(args []string) error {
		ctx := context.Background()
		tb, err := table.Open(ctx, args[0])
		if err != nil {
			return err
		}
		defer tb.Close()
		res, err := tb.Merge(ctx, benchChanges(), table.MergeOptions{Keys: []string{"id"}})
		if err != nil {
			return err
		}
		fmt.Println(res.NumUpdated, res.NumFilesRemoved, res.NumFilesInTable)
		return nil
	})
	benchproc.Register("raw-rewrite", func(args []string) error {
		first := int64(benchMergeRows - 2*benchMergeChanged)
		n, err := rawRewrite(args[0], first, first+benchMergeChanged)
		fmt.Println(n)
		return err
	})
}

// benchChanges is the change feed: 30,000 recent ids with a new delay.
func benchChanges() *schema.Batch {
	first := int64(benchMergeRows - 2*benchMergeChanged)
	changes := &schema.Batch{Schema: benchFlightSchema}
	for n := first; n < first+benchMergeChanged; n++ {
		changes.Rows = append(changes.Rows, benchFlight(n, 999))
	}
	return changes
}

// BenchmarkMergeUpsert1Percent upserts 30,000 changed keys (1%, a range of
// recent ids as a change feed touches them) into a 3M-row flights-shaped
// table with a synthetic id key, files rolled at 2 MiB: "merge" against
// "raw-rewrite" (see init), whole processes on their own copies of the
// table, alternated (benchproc.AB). It prints the files rewritten (goal: at
// most 10%) and wall, peak RSS and CPU of each side (goal: at least 10x
// faster).
func BenchmarkMergeUpsert1Percent(b *testing.B) {
	ctx := context.Background()
	src := filepath.Join(b.TempDir(), "t")
	tb, err := table.Open(ctx, src)
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
	tb.Close()
	work := b.TempDir()
	procs := runtime.GOMAXPROCS(0)
	for b.Loop() {
		var merged, raw string
		fresh := func(kind string, i int) string {
			d := filepath.Join(work, fmt.Sprintf("%s-%d", kind, i))
			corpus.CopyDir(b, src, d)
			return d
		}
		benchproc.AB(b, fmt.Sprintf("merge: upsert 30,000 keys (1%%) into 3M rows, lakesink 1 reader + %d write lanes vs raw %d files at once", procs, procs),
			"raw parquet-go full rewrite, fsync",
			func(i int) *exec.Cmd {
				cmd := benchproc.Side("merge", fresh("merge", i))
				cmd.Stdout = lastWrite{&merged}
				return cmd
			},
			func(i int) *exec.Cmd {
				cmd := benchproc.Side("raw-rewrite", fresh("raw", i))
				cmd.Stdout = lastWrite{&raw}
				return cmd
			})
		var updated, removed, inTable int
		if _, err := fmt.Sscan(merged, &updated, &removed, &inTable); err != nil || updated != benchMergeChanged {
			b.Fatalf("merge printed %q (%v), want %d rows updated", merged, err, benchMergeChanged)
		}
		if strings.TrimSpace(raw) != strconv.Itoa(benchMergeRows) {
			b.Fatalf("baseline rewrote %q rows, want %d", raw, benchMergeRows)
		}
		frac := float64(removed) / float64(inTable)
		b.ReportMetric(frac, "files-rewritten-fraction")
		fmt.Printf("BENCHROW\tmerge: upsert 30,000 keys (1%%) into 3M rows, files rewritten (of %d)\t%d\t%d (full rewrite)\t%.3f\n",
			inTable, removed, inTable, frac)
	}
}

// lastWrite keeps the last thing a side printed.
type lastWrite struct{ s *string }

func (w lastWrite) Write(p []byte) (int, error) { *w.s = string(p); return len(p), nil }

// rawRewrite reads every data file of the table at dir with parquet-go and
// writes it again with the rows whose id is in [lo, hi) changed, snappy,
// fsynced, as a full-table rewrite; GOMAXPROCS files at once.
func rawRewrite(dir string, lo, hi int64) (int64, error) {
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
	var total atomic.Int64
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, p := range files {
		g.Go(func() error {
			n, err := rawRewriteFile(p, filepath.Join(dir, fmt.Sprintf("raw-%d.parquet", i)), lo, hi)
			total.Add(n)
			return err
		})
	}
	err = g.Wait()
	return total.Load(), err
}

func rawRewriteFile(src, dst string, lo, hi int64) (int64, error) {
	var n int64
	in, err := os.Open(src)
	if err != nil {
		return n, err
	}
	defer in.Close()
	r := parquet.NewGenericReader[benchFlightRow](in)
	defer r.Close()
	out, err := os.Create(dst)
	if err != nil {
		return n, err
	}
	defer out.Close()
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
	if err := w.Close(); err != nil {
		return n, err
	}
	if err := out.Sync(); err != nil {
		return n, err
	}
	return n, nil
}
