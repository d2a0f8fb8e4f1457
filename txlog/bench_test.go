package txlog

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// BenchmarkSnapshotLoad loads the latest snapshot of a 10,000-commit log
// whose newest checkpoint is 9 commits behind.
func BenchmarkSnapshotLoad10kCommits(b *testing.B) {
	ctx := context.Background()
	st := newMemStore()
	buildLog(b, st, 10_000)
	l := newTestLog(b, st, Options{})
	s, err := l.SnapshotAt(ctx, 9990)
	if err != nil {
		b.Fatal(err)
	}
	lc, err := l.Checkpoint(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(*lc.SizeInBytes)
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpoint writes and reads back checkpoints of tables with
// 10k and 100k live files.
func BenchmarkCheckpoint(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		ctx := context.Background()
		st := newMemStore()
		p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
		md := Metadata{ID: "big", Format: Format{Provider: "parquet"}, SchemaString: testSchema, PartitionColumns: []string{"p"}}
		acts := []Action{{Protocol: &p}, {MetaData: &md}}
		for i := range n {
			pv := fmt.Sprint(i % 100)
			acts = append(acts, Action{Add: &Add{Path: fmt.Sprintf("p=%s/part-%08d-0a1b2c3d.snappy.parquet", pv, i), Size: int64(i),
				ModificationTime: time.Now().UnixMilli(), DataChange: true, PartitionValues: map[string]*string{"p": &pv},
				Stats: `{"numRecords":1000,"minValues":{"id":1},"maxValues":{"id":1000},"nullCount":{"id":0}}`}})
		}
		data, err := EncodeCommit(acts)
		if err != nil {
			b.Fatal(err)
		}
		st.put(CommitPath(0), string(data))
		l := newTestLog(b, st, Options{})
		snap, err := l.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("write/files=%d", n), func(b *testing.B) {
			for b.Loop() {
				lc, err := l.Checkpoint(ctx, snap)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(*lc.SizeInBytes)
			}
		})
		b.Run(fmt.Sprintf("read/files=%d", n), func(b *testing.B) {
			for b.Loop() {
				s, err := l.Snapshot(ctx)
				if err != nil || s.NumFiles() != n {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseCommit decodes a commit of 1,000 add actions.
func BenchmarkParseCommit(b *testing.B) {
	var acts []Action
	for i := range 1000 {
		acts = append(acts, Action{Add: &Add{Path: fmt.Sprintf("part-%08d.parquet", i), Size: 1000, DataChange: true,
			PartitionValues: map[string]*string{}, Stats: `{"numRecords":1000,"minValues":{"id":1},"maxValues":{"id":1000},"nullCount":{"id":0}}`}})
	}
	data, _ := EncodeCommit(acts)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseCommit(data, "x", 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitLocalDisk commits one add per iteration to a table on
// local disk (durable puts: fsync of the file and the directory), with
// and without the version checksum file written after each commit, to
// show what the .crc costs a commit (issue 22). The snapshot each commit
// reads is the one the previous commit's transaction would rebuild; its
// load is not timed.
func BenchmarkCommitLocalDisk(b *testing.B) {
	for _, crc := range []bool{false, true} {
		b.Run(fmt.Sprintf("crc=%v", crc), func(b *testing.B) {
			ctx := context.Background()
			st, err := storage.Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			l := newTestLog(b, st, Options{DisableChecksumFile: !crc, DisableAutoCheckpoint: true})
			s := createTable(b, l)
			i := 0
			for b.Loop() {
				tx := l.Begin(s)
				tx.Add(addAction(fmt.Sprintf("f%d", i), true))
				v, err := tx.Commit(ctx, "WRITE", nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				i++
				b.StopTimer()
				if s, err = l.SnapshotAt(ctx, v); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/commit")
		})
	}
}

// BenchmarkLongLineSmallReads splits a 32 MiB commit line arriving in 4 KiB
// reads (TestBombLongLineSmallReads checks the cost is linear by counting
// bytes; this gives the throughput: ~0.2 s per line on a 2-core machine,
// against ~6 s with the quadratic bufio.Scanner used before).
func BenchmarkLongLineSmallReads(b *testing.B) {
	input := append(bytes.Repeat([]byte("x"), 32<<20), '\n')
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		err := DecodeCommitLines(chunkReader{bytes.NewReader(input), 4096}, "p", 1, 0, func(int, []byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}
