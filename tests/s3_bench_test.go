package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
)

// s3BenchFigures runs the same sink workload against the table at url:
// commits small batches one after another (commit latency) and then writes
// big batches (ingest throughput).
type s3BenchFigures struct {
	commitLatency time.Duration // mean per small-batch AddBatch
	rowsPerSec    float64
	mibPerSec     float64 // Parquet bytes written per second
}

// runSinkBench runs the workload of s3BenchFigures against the table at url.
func runSinkBench(ctx context.Context, url string, commits, bigBatches, bigRows int) (s3BenchFigures, error) {
	var f s3BenchFigures
	opts := sink.DefaultOptions()
	opts.QueryID = "bench"
	d, err := sink.NewDelta(ctx, url, opts)
	if err != nil {
		return f, err
	}
	defer d.Close()
	// Batch 0 creates the table; it is not timed.
	if _, err := d.AddBatch(ctx, 0, writerBatch("bench", 0, 1)); err != nil {
		return f, err
	}
	next := int64(1)
	start := time.Now()
	for range commits {
		if _, err := d.AddBatch(ctx, next, writerBatch("bench", next, 1)); err != nil {
			return f, err
		}
		next++
	}
	f.commitLatency = time.Since(start) / time.Duration(commits)

	batches := make([]*schema.Batch, bigBatches)
	for i := range batches {
		batches[i] = writerBatch("bench", next+int64(i), bigRows)
	}
	var bytes, rows int64
	start = time.Now()
	for _, batch := range batches {
		res, err := d.AddBatch(ctx, next, batch)
		if err != nil {
			return f, err
		}
		bytes += res.NumBytes
		rows += res.NumRows
		next++
	}
	el := time.Since(start).Seconds()
	f.rowsPerSec = float64(rows) / el
	f.mibPerSec = float64(bytes) / (1 << 20) / el
	return f, nil
}

const s3BenchCommits, s3BenchBigBatches, s3BenchBigRows = 40, 4, 250_000

// The S3 benchmark's side: "sink-workload" runs runSinkBench against the
// table at args[0] (an s3:// URL of the local server, whose credentials
// and endpoint the parent set in the environment, or a local directory)
// and prints "commit-latency-ns rows/s MiB/s".
func init() {
	benchproc.Register("sink-workload", func(args []string) error {
		f, err := runSinkBench(context.Background(), args[0], s3BenchCommits, s3BenchBigBatches, s3BenchBigRows)
		fmt.Println(int64(f.commitLatency), f.rowsPerSec, f.mibPerSec)
		return err
	})
}

// BenchmarkS3VsLocalDisk prints commit latency and ingest throughput of the
// Delta sink on the local S3 server (versitygw) next to the same run on
// local disk, as BENCHROW lines for `make bench`: each run is a process of
// this test binary ("sink-workload"), S3 and local disk alternated,
// LAKESINK_BENCH_PAIRS pairs (default 3), medians; the figures are timed
// inside each process (commit latency: the mean of 40 one-row AddBatch
// calls; throughput: 4 batches of 250,000 rows), both one sink on one
// goroutine with the writer's lanes. Note: the local store fsyncs each
// commit and its directory; versitygw's posix backend does not fsync, so on
// one machine "S3" can come out faster than local disk. The figure shows
// the cost of the S3 protocol path (HTTP, SigV4, multipart), not of a
// remote network.
func BenchmarkS3VsLocalDisk(b *testing.B) {
	srv := s3test.Start(b)
	work := b.TempDir()
	for i := range b.N {
		var lat [2][]time.Duration
		var rps, mps [2][]float64
		run := func(side int, url string) {
			var out string
			cmd := benchproc.Side("sink-workload", url)
			cmd.Stdout = &lastLine{&out}
			benchproc.Run(b, cmd)
			var ns int64
			var r, m float64
			if _, err := fmt.Sscan(out, &ns, &r, &m); err != nil {
				b.Fatalf("sink-workload %s printed %q: %v", url, out, err)
			}
			lat[side], rps[side], mps[side] = append(lat[side], time.Duration(ns)), append(rps[side], r), append(mps[side], m)
		}
		for p := range benchproc.Pairs() {
			run(0, srv.URL(fmt.Sprintf("bench/%d-%d", i, p)))
			run(1, filepath.Join(work, fmt.Sprintf("table-%d-%d", i, p)))
		}
		if i > 0 {
			continue
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		s3Lat, localLat := benchproc.Median(lat[0]), benchproc.Median(lat[1])
		s3R, localR := benchproc.Median(rps[0]), benchproc.Median(rps[1])
		s3M, localM := benchproc.Median(mps[0]), benchproc.Median(mps[1])
		fmt.Printf("BENCHROW\tsink commit latency, 1-row batch (ms), local S3 vs local disk, %d pairs of processes\t%.1f\t%.1f\t%.2fx\n",
			len(lat[0]), ms(s3Lat), ms(localLat), ms(s3Lat)/ms(localLat))
		fmt.Printf("BENCHROW\tsink ingest rows/s, %d-row batches, local S3 vs local disk\t%.0f\t%.0f\t%.2fx\n",
			s3BenchBigRows, s3R, localR, s3R/localR)
		fmt.Printf("BENCHROW\tsink ingest MiB/s (Parquet written), local S3 vs local disk\t%.1f\t%.1f\t%.2fx\n",
			s3M, localM, s3M/localM)
	}
}

// lastLine keeps what a side printed.
type lastLine struct{ s *string }

func (w *lastLine) Write(p []byte) (int, error) { *w.s += string(p); return len(p), nil }
