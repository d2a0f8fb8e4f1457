package table_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

var benchAppendSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: true},
	{Name: "name", Type: schema.TypeString, Nullable: true},
}}

func benchAppendBatch(i int) *schema.Batch {
	return &schema.Batch{Schema: benchAppendSchema, Rows: [][]any{{int64(i), fmt.Sprintf("row %d", i)}}}
}

// buildAppendTable appends 1-row batches to the table at dir until it has
// versions versions (0..versions-1), without fsync (the build is not
// measured; the log is the same), and closes the table (its last automatic
// checkpoint written).
func buildAppendTable(t testing.TB, dir string, versions int, opts ...table.Option) {
	t.Helper()
	ctx := context.Background()
	op, err := storage.NewOpener(storage.Options{LocalSkipFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := op.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tb, err := table.OpenStore(st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for i := range versions {
		if _, err := tb.Write(ctx, benchAppendBatch(i), table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// durablePut is the floor of one durable file write with no Delta logic:
// a temp file, fsync, link (put-if-absent) or rename, fsync of the directory.
func durablePut(dir, name string, data []byte, link bool) error {
	f, err := os.CreateTemp(dir, ".floor-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	final := filepath.Join(dir, name)
	if link {
		err = os.Link(tmp, final)
	} else {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// fileSize is the size of the newest file matching pattern in dir.
func newestSize(b *testing.B, pattern string) int {
	b.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		b.Fatalf("no file matches %s", pattern)
	}
	var newest os.FileInfo
	for _, p := range m {
		fi, err := os.Stat(p)
		if err == nil && (newest == nil || fi.ModTime().After(newest.ModTime())) {
			newest = fi
		}
	}
	return int(newest.Size())
}

// median is the middle value of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// BenchmarkBlindAppendCommitRate is issue 22's commit-rate row: commits/s
// of a 1-row blind append (Table.Write, one Parquet data file, the commit,
// its .crc, a checkpoint every 10 versions, written after Write returns and
// waited for at the end of the timed commits) on local disk with fsync, on a
// table of 200, 1,000 and 10,000 versions, by 1 and by 4 writers (each its
// own Table, as separate processes would be), against the durable-writes
// floor: the same files (data file and .crc by temp + fsync + rename +
// directory fsync, the commit by temp + fsync + link + directory fsync, and
// after one commit in 10 a checkpoint and _last_checkpoint by temp + fsync +
// rename + directory fsync, sizes as lakesink wrote them) into a copy of
// the same table, with no Delta logic, by as many goroutines (lakesink
// leaves the .crc's directory entry to the next fsync of _delta_log,
// storage.PutOptional, which the floor does not). Each writer keeps the
// snapshot of its last commit and reads only the commits after it
// (txlog.Log.Update).
//
// A shared disk's fsync latency drifts, so the figures are paired: each of
// 9 rounds (5 left the median ratio of 4 writers at 10,000 versions
// anywhere in 1.1-2.5x from one run to the next on a loaded machine)
// copies the table built once (every round starts at the stated number of
// versions; the copy's files are hard links, corpus.LinkDir, so that
// removing the copies frees no inodes whose reuse would slow the
// benchmarks run after this one), opens the writers (their first write,
// which loads the log, is not timed), times 120 commits, and times the
// floor's 120 in the same round, the two in alternating order; before
// each timed phase the file system is flushed (syncfs(2)): the table is
// built and copied without fsync, and writing that back is neither side's
// cost. The row gives the median rates and the median of the rounds'
// floor/lakesink ratios. Only `make bench` runs it (the 10,000-version
// table takes a while to build).
func BenchmarkBlindAppendCommitRate(b *testing.B) {
	const (
		commits = 120
		rounds  = 9
	)
	for _, versions := range []int{200, 1_000, 10_000} {
		for _, writers := range []int{1, 4} {
			b.Run(fmt.Sprintf("versions=%d/writers=%d", versions, writers), func(b *testing.B) {
				ctx := context.Background()
				base := b.TempDir()
				buildAppendTable(b, base, versions)
				dataSize := newestSize(b, filepath.Join(base, "*.parquet"))
				commitSize := newestSize(b, filepath.Join(base, txlog.LogDir, "*.json"))
				crcSize := newestSize(b, filepath.Join(base, txlog.LogDir, "*.crc"))
				ckptSize := newestSize(b, filepath.Join(base, txlog.LogDir, "*.checkpoint.parquet"))
				lastSize := newestSize(b, filepath.Join(base, txlog.LogDir, "_last_checkpoint"))
				data, commit, crc := make([]byte, dataSize), make([]byte, commitSize), make([]byte, crcSize)
				ckpt, last := make([]byte, ckptSize), make([]byte, lastSize)

				// runOurs times commits blind appends by writers Tables on a
				// fresh copy of the table.
				runOurs := func() time.Duration {
					dir := b.TempDir()
					corpus.LinkDir(b, base, dir)
					tables := make([]*table.Table, writers)
					for w := range tables {
						tb, err := table.Open(ctx, dir)
						if err != nil {
							b.Fatal(err)
						}
						// Each writer's first write loads the log (not timed).
						if _, err := tb.Write(ctx, benchAppendBatch(-1), table.WriteOptions{}); err != nil {
							b.Fatal(err)
						}
						tables[w] = tb
					}
					defer func() {
						for _, tb := range tables {
							tb.Close()
						}
					}()
					// A checkpoint left running by the untimed writes is
					// not the timed commits' cost, nor is writing back the
					// copy.
					for _, tb := range tables {
						tb.Log().Wait()
					}
					if err := syncFS(dir); err != nil {
						b.Fatal(err)
					}
					var wg sync.WaitGroup
					errs := make([]error, writers)
					start := time.Now()
					// The label lets a -cpuprofile of this bench be cut to
					// the timed commits (go tool pprof -tagfocus phase=commits),
					// leaving out the table's build and the floor.
					pprof.Do(ctx, pprof.Labels("phase", "commits"), func(ctx context.Context) {
						for w, tb := range tables {
							wg.Go(func() {
								for i := range commits / writers {
									if _, err := tb.Write(ctx, benchAppendBatch(i), table.WriteOptions{}); err != nil {
										errs[w] = err
										return
									}
								}
							})
						}
						wg.Wait()
						// The checkpoints written after Write returned
						// are part of the commits' cost.
						for _, tb := range tables {
							tb.Log().Wait()
						}
					})
					d := time.Since(start)
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
					return d
				}
				runFloor := func() time.Duration {
					// The floor writes into a copy of the same table: its
					// directories hold as many entries as lakesink's do.
					fdir := b.TempDir()
					corpus.LinkDir(b, base, fdir)
					flog := filepath.Join(fdir, txlog.LogDir)
					// What the previous phase left dirty is not the floor's
					// cost either.
					if err := syncFS(fdir); err != nil {
						b.Fatal(err)
					}
					var wg sync.WaitGroup
					errs := make([]error, writers)
					start := time.Now()
					for w := range writers {
						wg.Go(func() {
							for i := range commits / writers {
								k := w*(commits/writers) + i // this commit's place among all writers'
								n := versions + 1_000_000 + k
								err := durablePut(fdir, fmt.Sprintf("part-%d.parquet", n), data, false)
								if err == nil {
									err = durablePut(flog, fmt.Sprintf("%020d.json", n), commit, true)
								}
								if err == nil {
									err = durablePut(flog, fmt.Sprintf("%020d.crc", n), crc, false)
								}
								// One commit in 10 is followed by its
								// checkpoint and _last_checkpoint, as
								// lakesink's (delta.checkpointInterval 10).
								if err == nil && k%10 == 9 {
									err = durablePut(flog, fmt.Sprintf("%020d.checkpoint.parquet", n), ckpt, false)
									if err == nil {
										err = durablePut(flog, "_last_checkpoint", last, false)
									}
								}
								if err != nil {
									errs[w] = err
									return
								}
							}
						})
					}
					wg.Wait()
					d := time.Since(start)
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
					return d
				}
				n := float64((commits / writers) * writers)
				var oursRates, floorRates, ratios []float64
				for b.Loop() {
					for r := range rounds {
						var ours, floor time.Duration
						if r%2 == 0 {
							ours, floor = runOurs(), runFloor()
						} else {
							floor, ours = runFloor(), runOurs()
						}
						oursRates = append(oursRates, n/ours.Seconds())
						floorRates = append(floorRates, n/floor.Seconds())
						ratios = append(ratios, ours.Seconds()/floor.Seconds())
					}
				}
				oursRate, floorRate, ratio := median(oursRates), median(floorRates), median(ratios)
				b.ReportMetric(oursRate, "commits/s")
				b.ReportMetric(ratio, "x-floor")
				fmt.Printf("BENCHROW\tblind append 1 row, %d versions, %d writer(s) (commits/s)\t%.0f\t%.0f (durable writes of the same files, no Delta logic)\t%.2fx\n",
					versions, writers, oursRate, floorRate, ratio)
			})
		}
	}
}
