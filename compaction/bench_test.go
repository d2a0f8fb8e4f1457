package compaction

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

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
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
// (partitioned by origin) with ONE commit, in the local directory dir.
func benchTable(b *testing.B, dir string) (*table.Table, storage.Store, *txlog.Snapshot) {
	b.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, dir)
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

// The OPTIMIZE benchmarks' sides run as processes of this test binary
// (benchproc.Side), alternated by benchproc.AB; each prints the rows it
// copied.
func init() {
	benchproc.Register("optimize", func(args []string) error { // table dir
		ctx := context.Background()
		t, err := table.Open(ctx, args[0])
		if err != nil {
			return err
		}
		defer t.Close()
		snap, err := t.Snapshot(ctx)
		if err != nil {
			return err
		}
		plan, err := NewPlan(snap, PlanOptions{})
		if err != nil {
			return err
		}
		res, err := Execute(ctx, t, plan, ExecOptions{})
		if err != nil {
			return err
		}
		fmt.Println(res.NumRows)
		return nil
	})
	benchproc.Register("raw-rewrite", func(args []string) error { // table dir
		n, err := rawRewrite(args[0])
		fmt.Println(n)
		return err
	})
}

// rawRewrite is OPTIMIZE's baseline: the data files of the table at dir
// (walked from the directory, _delta_log excluded: the bench tables have
// one commit and no removes), grouped by directory (partition), each group's
// rows copied by parquet-go's row reader and writer (snappy, the input's
// schema) into one new file of the group's directory, fsynced; no Go values,
// no statistics, no commit. GOMAXPROCS groups at once, as Execute's default
// workers.
func rawRewrite(dir string) (int64, error) {
	groups := map[string][]string{}
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.Contains(p, "_delta_log") {
			return err
		}
		pd := filepath.Dir(p)
		if groups[pd] == nil {
			dirs = append(dirs, pd)
		}
		groups[pd] = append(groups[pd], p)
		return nil
	})
	if err != nil {
		return 0, err
	}
	var rows atomic.Int64
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, pd := range dirs {
		g.Go(func() error {
			n, err := rawRewriteGroup(filepath.Join(pd, "baseline.parquet"), groups[pd])
			rows.Add(n)
			return err
		})
	}
	err = g.Wait()
	return rows.Load(), err
}

func rawRewriteGroup(out string, files []string) (int64, error) {
	of, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer of.Close()
	var pw *parquet.Writer
	var rows int64
	buf := make([]parquet.Row, 1024)
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, err
		}
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			f.Close()
			return 0, err
		}
		if pw == nil {
			pw = parquet.NewWriter(of, pf.Schema(), parquet.Compression(&parquet.Snappy))
		}
		for _, rg := range pf.RowGroups() {
			rr := rg.Rows()
			for {
				n, err := rr.ReadRows(buf)
				if n > 0 {
					if _, werr := pw.WriteRows(buf[:n]); werr != nil {
						rr.Close()
						f.Close()
						return 0, werr
					}
					rows += int64(n)
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					rr.Close()
					f.Close()
					return 0, err
				}
			}
			rr.Close()
		}
		f.Close()
	}
	if err := pw.Close(); err != nil {
		return 0, err
	}
	return rows, of.Sync()
}

// abOptimize alternates OPTIMIZE of a copy of the table at src and the raw
// rewrite of another copy (benchproc.AB, whole processes) and checks both
// copied want rows.
func abOptimize(b *testing.B, src, figure string, want int64) {
	b.Helper()
	work := b.TempDir()
	var ours, raw string
	fresh := func(kind string, i int) string {
		d := filepath.Join(work, fmt.Sprintf("%s-%d", kind, i))
		corpus.CopyDir(b, src, d)
		return d
	}
	benchproc.AB(b, figure, "raw parquet-go row read + rewrite per partition, fsync",
		func(i int) *exec.Cmd {
			cmd := benchproc.Side("optimize", fresh("ls", i))
			cmd.Stdout = answer(&ours)
			return cmd
		},
		func(i int) *exec.Cmd {
			cmd := benchproc.Side("raw-rewrite", fresh("raw", i))
			cmd.Stdout = answer(&raw)
			return cmd
		})
	if w := strconv.FormatInt(want, 10); strings.TrimSpace(ours) != w || strings.TrimSpace(raw) != w {
		b.Fatalf("rows copied: OPTIMIZE %q, baseline %q, want %s", ours, raw, w)
	}
}

// answer is a writer keeping the last thing a side printed.
func answer(s *string) io.Writer { return answerWriter{s} }

type answerWriter struct{ s *string }

func (w answerWriter) Write(p []byte) (int, error) { *w.s = string(p); return len(p), nil }

// BenchmarkOptimizeFlights: OPTIMIZE (NewPlan + Execute: Execute's default
// GOMAXPROCS workers, one output per origin partition, the rows decoded to
// Go values and written with stats, ONE commit) of a 2,000-small-file
// flights-shaped table, opened from local disk, against rawRewrite of the
// same files (GOMAXPROCS partitions at once), each a whole process of this
// test binary on its own copy of the table, alternated: wall, peak RSS, CPU.
func BenchmarkOptimizeFlights(b *testing.B) {
	src := filepath.Join(b.TempDir(), "t")
	tb, _, snap := benchTable(b, src)
	b.SetBytes(snap.SizeInBytes())
	tb.Close()
	procs := runtime.GOMAXPROCS(0)
	for b.Loop() {
		abOptimize(b, src, fmt.Sprintf("OPTIMIZE 2,000 small files (%.1f MiB, 3 partitions), lakesink %d workers vs raw %d goroutines",
			float64(snap.SizeInBytes())/(1<<20), procs, procs), benchFiles*benchRowsPerFile)
	}
}
