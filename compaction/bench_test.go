package compaction

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

const (
	benchFiles       = 2000
	benchRowsPerFile = 500
)

// benchTable writes a flights-shaped table of benchFiles small files
// (partitioned by origin) with ONE commit, in a local directory.
func benchTable(b *testing.B) (*table.Table, storage.Store, *txlog.Snapshot) {
	b.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	tb, err := table.OpenStore(st, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tb.Write(ctx, &schema.Batch{Schema: flightsSchema()}, table.WriteOptions{PartitionColumns: []string{"origin"}}); err != nil {
		b.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tx := tb.Log().Begin(snap)
	for i := range benchFiles {
		// one partition per file: every file is one origin
		rows := flightsRows(int64(i*benchRowsPerFile), benchRowsPerFile, []string{origins[i%len(origins)]})
		files, err := parquetio.WriteFiles(ctx, st, &schema.Batch{Schema: flightsSchema(), Rows: rows}, parquetio.WriteOptions{PartitionColumns: []string{"origin"}})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			tx.Add(txlog.Action{Add: &txlog.Add{Path: txlog.EncodePath(f.Path), PartitionValues: f.PartitionValues, Size: f.Size,
				ModificationTime: f.ModificationTime.UnixMilli(), DataChange: true, Stats: f.Stats}})
		}
	}
	if _, err := tx.Commit(ctx, "WRITE", nil, nil); err != nil {
		b.Fatal(err)
	}
	snap, err = tb.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return tb, st, snap
}

// heapSampler records the peak HeapInuse while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func startSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{stop: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > h.peak.Load() {
				h.peak.Store(ms.HeapInuse)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) done() float64 {
	close(h.stop)
	h.wg.Wait()
	return float64(h.peak.Load()) / (1 << 20)
}

// baselineRewrite is a raw parquet-go read+write of the same files: per
// partition, every input's rows copied into one snappy output file, no
// conversion to Go values, no statistics, no log. Partitions run in parallel
// with as many workers as Execute uses by default (GOMAXPROCS), so the ratio
// compares like with like.
func baselineRewrite(ctx context.Context, st storage.Store, snap *txlog.Snapshot) (int64, error) {
	byPart := map[string][]*txlog.Add{}
	var parts []string
	for _, a := range snap.Files() {
		p := parquetio.PartitionPath([]string{"origin"}, a.PartitionValues)
		if byPart[p] == nil {
			parts = append(parts, p)
		}
		byPart[p] = append(byPart[p], a)
	}
	var rows atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, part := range parts {
		g.Go(func() error {
			n, err := baselinePartition(gctx, st, snap, fmt.Sprintf("%s/baseline-%d.parquet", part, i), byPart[part])
			rows.Add(n)
			return err
		})
	}
	err := g.Wait()
	return rows.Load(), err
}

func baselinePartition(ctx context.Context, st storage.Store, snap *txlog.Snapshot, out string, files []*txlog.Add) (int64, error) {
	w, err := st.NewWriter(ctx, out)
	if err != nil {
		return 0, err
	}
	defer w.Abort()
	var pw *parquet.Writer
	var rows int64
	buf := make([]parquet.Row, 1024)
	for _, a := range files {
		key, err := snap.FileKey(a.Path)
		if err != nil {
			return 0, err
		}
		data, err := st.Read(ctx, key)
		if err != nil {
			return 0, err
		}
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return 0, err
		}
		if pw == nil {
			pw = parquet.NewWriter(w, f.Schema(), parquet.Compression(&parquet.Snappy))
		}
		for _, rg := range f.RowGroups() {
			rr := rg.Rows()
			for {
				n, err := rr.ReadRows(buf)
				if n > 0 {
					if _, werr := pw.WriteRows(buf[:n]); werr != nil {
						rr.Close()
						return 0, werr
					}
					rows += int64(n)
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					rr.Close()
					return 0, err
				}
			}
			rr.Close()
		}
	}
	if err := pw.Close(); err != nil {
		return 0, err
	}
	return rows, w.Close()
}

// BenchmarkOptimizeFlights compacts a 2,000-small-file flights-shaped table
// and compares its throughput with a raw parquet-go read+write of the same
// files in the same run. It prints BENCHROW lines for `make bench`.
func BenchmarkOptimizeFlights(b *testing.B) {
	ctx := context.Background()
	var lsDur, baseDur time.Duration
	var lsPeak, basePeak float64
	var bytesIn int64
	for b.Loop() {
		b.StopTimer()
		tb, st, snap := benchTable(b)
		bytesIn = snap.SizeInBytes()
		b.SetBytes(bytesIn)
		// The baseline runs before and after lakesink on the same files (the
		// compaction leaves its inputs in place until VACUUM); its faster run
		// counts, so the ratio is conservative under noisy neighbours.
		var bestBase time.Duration
		baseline := func() {
			h := startSampler()
			start := time.Now()
			rows, err := baselineRewrite(ctx, st, snap)
			d := time.Since(start)
			basePeak = max(basePeak, h.done())
			if err != nil {
				b.Fatal(err)
			}
			if rows != benchFiles*benchRowsPerFile {
				b.Fatalf("baseline copied %d rows", rows)
			}
			if bestBase == 0 || d < bestBase {
				bestBase = d
			}
		}
		baseline()
		b.StartTimer()
		h := startSampler()
		start := time.Now()
		plan, err := NewPlan(snap, PlanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := Execute(ctx, tb, plan, ExecOptions{})
		lsDur += time.Since(start)
		lsPeak = max(lsPeak, h.done())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		baseline()
		baseDur += bestBase
		b.StartTimer()
		if res.NumRemovedFiles != benchFiles || res.NumRows != benchFiles*benchRowsPerFile {
			b.Fatalf("result %+v", res)
		}
	}
	mb := float64(bytesIn) / (1 << 20) * float64(b.N)
	lsTP, baseTP := mb/lsDur.Seconds(), mb/baseDur.Seconds()
	b.ReportMetric(lsPeak, "peak-heap-MiB")
	b.ReportMetric(lsTP/baseTP, "ratio")
	// Baseline (baselineRewrite): raw parquet-go row read + rewrite of the
	// same files into one file per partition, as many partitions at once as
	// Execute's default workers (GOMAXPROCS); no Go values, no stats, no
	// commit. Peak heap is HeapInuse sampled every 5 ms in this process (a
	// library call: the process also holds the benchmark's table state).
	procs := runtime.GOMAXPROCS(0)
	b.Logf("BENCHROW\tOPTIMIZE 2,000 small files, throughput (MiB/s), %d workers vs raw parquet-go %d workers\t%.1f\t%.1f (raw read + rewrite)\t%.2f", procs, procs, lsTP, baseTP, lsTP/baseTP)
	b.Logf("BENCHROW\tOPTIMIZE 2,000 small files, peak heap in use (MiB)\t%.1f\t%.1f\t%.2f", lsPeak, basePeak, lsPeak/basePeak)
}
