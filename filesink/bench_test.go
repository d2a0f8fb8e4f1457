package filesink

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/storage"
)

// The compaction benchmark's sides run as processes of this test binary
// (benchproc.Side): "filesink-compact" compacts the log of the sink
// directory args[0] into 19.compact with Options.MaxInMemoryCompactBytes =
// args[1] and prints the entries written.
func init() {
	benchproc.Register("filesink-compact", func(args []string) error {
		maxInMem, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil {
			return err
		}
		ctx := context.Background()
		st, err := storage.Open(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		o := DefaultOptions()
		o.MaxInMemoryCompactBytes = maxInMem
		o.DeleteExpiredLog = false
		l, err := NewLog(st, o)
		if err != nil {
			return err
		}
		ls, err := l.list(ctx)
		if err != nil {
			return err
		}
		res, err := l.compact(ctx, ls, 19, 10, nil, false)
		if err != nil {
			return err
		}
		fmt.Println(res.EntriesWritten)
		return nil
	})
}

// buildBigLog writes, under the local directory dir, a file-sink log of
// 9.compact with n entries and empty batches 10..18.
func buildBigLog(b *testing.B, dir string, n int) {
	b.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w, err := st.NewWriter(ctx, batchFileKey(9, true))
	if err != nil {
		b.Fatal(err)
	}
	enc := newLogEncoder(w)
	mod := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < n; i++ {
		e := SinkFileStatus{Path: fmt.Sprintf("file:///data/out/date=2026-01-01/part-%05d-6f1c2f4e-8a47-4c7b-9c51-%012d-c000.snappy.parquet", i%200, i),
			Size: 1234567, ModificationTime: mod + int64(i), BlockReplication: 1, BlockSize: 33554432, Action: ActionAdd}
		if err := enc.add(&e); err != nil {
			b.Fatal(err)
		}
	}
	if err := enc.flush(); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for id := int64(10); id < 19; id++ {
		if err := st.PutIfAbsent(ctx, batchFileKey(id, false), []byte("v1")); err != nil {
			b.Fatal(err)
		}
	}
}

// linkTree hard-links (or copies) every file under src into dst: a fresh
// log per run, each compaction creating its own 19.compact.
func linkTree(b *testing.B, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if os.Link(p, filepath.Join(dst, rel)) == nil {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCompaction1M compacts a file-sink log of 1,000,000 entries (a
// 9.compact file plus nine empty batches, on local disk) into 19.compact,
// streamed (the default for a file this large: entries copied line by line
// behind a claim) against lakesink's in-memory compaction of the same log
// (every entry held, then one PutIfAbsent: what Spark's FileStreamSinkLog
// does), each a whole process of this test binary on its own hard-linked
// copy of the log, alternated (benchproc.AB): wall, peak RSS, CPU. Both run
// on one goroutine.
func BenchmarkCompaction1M(b *testing.B) {
	const n = 1_000_000
	if testing.Short() {
		b.Skip("1,000,000-entry compaction skipped in -short mode")
	}
	src := filepath.Join(b.TempDir(), "out")
	buildBigLog(b, src, n)
	work := b.TempDir()
	for b.Loop() {
		var streamed, inMem string
		side := func(kind string, maxInMem int64, answer *string) func(int) *exec.Cmd {
			return func(i int) *exec.Cmd {
				d := filepath.Join(work, fmt.Sprintf("%s-%d", kind, i))
				linkTree(b, src, d)
				cmd := benchproc.Side("filesink-compact", d, strconv.FormatInt(maxInMem, 10))
				cmd.Stdout = answerWriter{answer}
				return cmd
			}
		}
		benchproc.AB(b, "filesink log compaction, 1M entries, streamed vs in memory, both 1 goroutine",
			"lakesink's in-memory compaction, as Spark's",
			side("streamed", 0, &streamed), side("inmem", 1<<40, &inMem))
		if w := strconv.Itoa(n); strings.TrimSpace(streamed) != w || strings.TrimSpace(inMem) != w {
			b.Fatalf("entries written: streamed %q, in memory %q, want %s", streamed, inMem, w)
		}
	}
}

type answerWriter struct{ s *string }

func (w answerWriter) Write(p []byte) (int, error) { *w.s = string(p); return len(p), nil }
