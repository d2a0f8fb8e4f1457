package stream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
)

// localEnv is an input directory and a checkpoint directory on local disk.
type localEnv struct {
	in, cp storage.Store
	sink   *fakeSink
	files  int
}

func newLocalEnv(t *testing.T, files int) *localEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	inDir := filepath.Join(dir, "in")
	if err := os.MkdirAll(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1700000000, 0)
	for i := 0; i < files; i++ {
		p := filepath.Join(inDir, fmt.Sprintf("f%03d.json", i))
		data := fmt.Sprintf("{\"file\":\"f%03d.json\",\"n\":1}\n{\"file\":\"f%03d.json\",\"n\":2}\n", i, i)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	in, err := storage.Open(ctx, inDir)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := storage.Open(ctx, filepath.Join(dir, "chk"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cp.Close() })
	return &localEnv{in: in, cp: cp, sink: newFakeSink(), files: files}
}

func (e *localEnv) options(t *testing.T, cp storage.Store) Options {
	t.Helper()
	src, err := source.NewFileSource(e.in, source.Options{Format: source.FormatJSON, Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.CheckpointStore, o.Source, o.Sink, o.MaxFilesPerTrigger = cp, src, e.sink, 2
	o.SinkKind, o.SinkURL = "fake", "mem://table"
	return o
}

func (e *localEnv) checkExactlyOnce(t *testing.T) {
	t.Helper()
	(&env{sink: e.sink, files: e.files}).checkExactlyOnce(t)
}

// TestCrashAtEveryCheckpointWrite kills the driver at each named crash
// point of its checkpoint (stream-metadata, stream-sources, stream-offsets,
// stream-commits: the set must be exactly these), at every occurrence,
// before the write and after it (performed, its answer lost, the process
// dead); then restarts it on the real store and checks that the sink holds
// every row exactly once and that no batch is lost.
func TestCrashAtEveryCheckpointWrite(t *testing.T) {
	e := newLocalEnv(t, 5)
	rec, err := faultstore.New(e.cp, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, e.options(t, rec)); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(t)
	points := rec.Points()
	if err := faultstore.CheckPoints(points, faultstore.PointStreamMetadata, faultstore.PointStreamSources,
		faultstore.PointStreamOffsets, faultstore.PointStreamCommits); err != nil {
		t.Fatal(err)
	}
	if len(points) < 10 { // metadata, and sources, offsets, commits of 3 batches
		t.Fatalf("only %d writes for 3 batches: %v", len(points), points)
	}
	for _, c := range faultstore.Crashes(points) {
		t.Run(c.String(), func(t *testing.T) {
			e := newLocalEnv(t, 5)
			fs, err := faultstore.New(e.cp, faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Arm(fs); err != nil {
				t.Fatal(err)
			}
			_, err = run(t, e.options(t, fs))
			if !fs.Crashed() {
				t.Fatalf("the crash point was not reached (err %v)", err)
			}
			if err == nil && !(c.Mode == faultstore.FailAfter && c.Point == points[len(points)-1]) {
				t.Fatalf("a crashed run reported success")
			}
			ps, err := run(t, e.options(t, e.cp))
			if err != nil {
				t.Fatalf("restart: %v", err)
			}
			for i, p := range ps {
				if p.Recovered && i != 0 {
					t.Errorf("batch %d marked recovered but not first", p.BatchID)
				}
			}
			e.checkExactlyOnce(t)
		})
	}
}

// TestLostAnswerOnCheckpointPut: a put-if-absent whose answer is lost (the
// file landed) is resolved by reading it back, so the run goes on.
func TestLostAnswerOnCheckpointPut(t *testing.T) {
	for _, p := range []string{"offsets/1", "commits/1", "sources/0/1"} {
		t.Run(p, func(t *testing.T) {
			e := newLocalEnv(t, 4)
			fs, _ := faultstore.New(e.cp, faultstore.DefaultOptions())
			if err := fs.Add(faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Path: p, Mode: faultstore.FailAfter}); err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, e.options(t, fs)); err != nil {
				t.Fatalf("lost answer not resolved: %v", err)
			}
			e.checkExactlyOnce(t)
		})
	}
}

var memRoots atomic.Int64

// memRootURL names a fresh in-memory store for the output and checkpoint
// of one run (no fsync: the crash loops stay fast).
func memRootURL() string { return fmt.Sprintf("mem://stream-crash-%d", memRoots.Add(1)) }

// sinkEnv is a query from the local input directory into a real sink: a
// Delta table or a Spark file-sink directory. The checkpoint ("chk") and
// the output ("out") are two directories of one store, so one fault store
// sees the durable steps of both, in the order the driver performs them.
type sinkEnv struct {
	*localEnv
	root storage.Store
	kind string // "delta", "filesink" or "filesink-streamed" (compaction files streamed behind a claim)
}

func newSinkEnv(t *testing.T, kind string, files int) *sinkEnv {
	t.Helper()
	e := newLocalEnv(t, files)
	root, err := storage.Open(context.Background(), memRootURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &sinkEnv{localEnv: e, root: root, kind: kind}
}

// fileSinkOptions: a compaction every 2 batches and expired log files
// deleted at once, so that three batches take every durable step of the
// file sink; for "filesink-streamed" compaction files are streamed behind
// a claim.
func fileSinkOptions(kind string) filesink.Options {
	o := filesink.DefaultOptions()
	if kind == "filesink-streamed" {
		o.MaxInMemoryCompactBytes = 0
	}
	o.QueryID = "q"
	o.CompactInterval = 2
	o.MinBatchesToRetain = 1
	o.CleanupDelay = 0
	return o
}

// options runs the query over st (the root store, or a fault store over it).
func (e *sinkEnv) options(t *testing.T, st storage.Store) Options {
	t.Helper()
	o := e.localEnv.options(t, st.Sub("chk"))
	o.SinkKind, o.SinkURL = e.kind, "out"
	o.MinBatchesToRetain = 1 // purge offsets/commits files: stream-log-delete
	switch e.kind {
	case "delta":
		tb, err := table.OpenStore(st.Sub("out"))
		if err != nil {
			t.Fatal(err)
		}
		o.Sink = sink.NewDeltaTable(tb, sink.Options{QueryID: "q"})
	case "filesink", "filesink-streamed":
		fsk, err := filesink.New(context.Background(), st.Sub("out"), fileSinkOptions(e.kind))
		if err != nil {
			t.Fatal(err)
		}
		o.Sink = fsk
	}
	return o
}

// files lists the live data files of the output: through the Delta log, or
// through _spark_metadata.
func (e *sinkEnv) files(t *testing.T) (storage.Store, []string) {
	t.Helper()
	ctx := context.Background()
	out := e.root.Sub("out")
	var keys []string
	switch e.kind {
	case "delta":
		tb, err := table.OpenStore(out)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatalf("table unreadable: %v", err)
		}
		for _, a := range snap.Files() {
			key, err := snap.FileKey(a.Path)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, key)
		}
	case "filesink", "filesink-streamed":
		ls, err := filesink.ListFiles(ctx, out, fileSinkOptions(e.kind))
		if err != nil {
			t.Fatalf("file sink unreadable: %v", err)
		}
		for _, f := range ls.Files {
			keys = append(keys, f.Key)
		}
	}
	return out, keys
}

// checkExactlyOnce reads the output and checks it holds every row of every
// input file once.
func (e *sinkEnv) checkExactlyOnce(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	out, keys := e.files(t)
	count := map[string]int{}
	rows := 0
	for _, key := range keys {
		fi, err := out.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquetio.OpenFile(ctx, out, key, fi.Size)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := f.ReadAll(ctx, sch, parquetio.ReadOptions{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			count[fmt.Sprintf("%v/%v", r[0], r[1])]++
			rows++
		}
	}
	if rows != 2*e.localEnv.files {
		t.Errorf("output has %d rows, want %d", rows, 2*e.localEnv.files)
	}
	for k, c := range count {
		if c != 1 {
			t.Errorf("row %s written %d times", k, c)
		}
	}
}

// TestCrashPointsIntoSink kills a query that streams into a real Delta
// table, or a real file-sink directory, at each named crash point of the
// whole pipeline (the checkpoint's and the sink's; the set must be exactly
// the expected one), at every occurrence, before and after the step; a
// restarted query then leaves every input row in the output exactly once.
func TestCrashPointsIntoSink(t *testing.T) {
	stream := []string{faultstore.PointStreamMetadata, faultstore.PointStreamSources, faultstore.PointStreamOffsets,
		faultstore.PointStreamCommits, faultstore.PointStreamLogDelete}
	for _, tc := range []struct {
		kind   string
		points []string
	}{
		{"delta", append(slices.Clone(stream), faultstore.PointDataFile, faultstore.PointCommit, faultstore.PointChecksum)},
		{"filesink", append(slices.Clone(stream), faultstore.PointDataFile, faultstore.PointSparkBatch,
			faultstore.PointSparkCompact, faultstore.PointSparkDelete)},
		{"filesink-streamed", append(slices.Clone(stream), faultstore.PointDataFile, faultstore.PointSparkBatch,
			faultstore.PointSparkClaim, faultstore.PointSparkCompact, faultstore.PointSparkDelete)},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			e := newSinkEnv(t, tc.kind, 5)
			rec, err := faultstore.New(e.root, faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, e.options(t, rec)); err != nil {
				t.Fatal(err)
			}
			e.checkExactlyOnce(t)
			points := rec.Points()
			if err := faultstore.CheckPoints(points, tc.points...); err != nil {
				t.Fatal(err)
			}
			for _, c := range faultstore.Crashes(points) {
				t.Run(c.String(), func(t *testing.T) {
					e := newSinkEnv(t, tc.kind, 5)
					fs, err := faultstore.New(e.root, faultstore.DefaultOptions())
					if err != nil {
						t.Fatal(err)
					}
					if err := c.Arm(fs); err != nil {
						t.Fatal(err)
					}
					_, err = run(t, e.options(t, fs))
					if !fs.Crashed() {
						t.Fatalf("the crash point was not reached (err %v)", err)
					}
					if err == nil && !(c.Mode == faultstore.FailAfter && c.Point == points[len(points)-1]) {
						t.Fatalf("a crashed run reported success")
					}
					if _, err := run(t, e.options(t, e.root)); err != nil {
						t.Fatalf("restart: %v", err)
					}
					e.checkExactlyOnce(t)
				})
			}
		})
	}
}

var kafkaSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "p", Type: schema.TypeLong, Nullable: true},
	{Name: "i", Type: schema.TypeLong, Nullable: true},
}}

// TestCrashPointsKafkaIntoDelta kills a query that streams a Kafka topic
// (an in-process kfake cluster, 3 partitions of 20 records, at most 25 records a
// batch) into a Delta table at each named crash point of the pipeline —
// the Kafka source's own files in sources/0 (its initial offsets and its
// planned end offset) among them — before and after each step; a restarted
// query then leaves every record in the table exactly once.
func TestCrashPointsKafkaIntoDelta(t *testing.T) {
	ctx := context.Background()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range 20 {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: []byte(fmt.Sprintf(`{"p": %d, "i": %d}`, p, i))})
		}
	}
	err = cl.ProduceSync(ctx, recs...).FirstErr()
	cl.Close()
	if err != nil {
		t.Fatal(err)
	}
	newRoot := func(t *testing.T) storage.Store {
		root, err := storage.Open(ctx, memRootURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		return root
	}
	options := func(t *testing.T, st storage.Store) Options {
		ko := kafka.DefaultOptions()
		ko.Brokers, ko.Topics, ko.StartingOffsets = c.ListenAddrs(), []string{"t"}, "earliest"
		ko.MaxOffsetsPerTrigger, ko.ValueFormat, ko.Schema = 25, "json", kafkaSchema
		src, err := kafka.NewSource(ko)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		tb, err := table.OpenStore(st.Sub("out"))
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.CheckpointStore, o.Source, o.Sink = st.Sub("chk"), src, sink.NewDeltaTable(tb, sink.Options{QueryID: "q"})
		o.SinkKind, o.SinkURL, o.MinBatchesToRetain = "delta", "out", 1
		return o
	}
	check := func(t *testing.T, root storage.Store) {
		t.Helper()
		out := root.Sub("out")
		tb, err := table.OpenStore(out)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatalf("table unreadable: %v", err)
		}
		count := map[string]int{}
		rows := 0
		for _, a := range snap.Files() {
			key, err := snap.FileKey(a.Path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parquetio.OpenFile(ctx, out, key, a.Size)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := f.ReadAll(ctx, kafkaSchema, parquetio.ReadOptions{})
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				count[fmt.Sprintf("%v/%v", r[0], r[1])]++
				rows++
			}
		}
		if rows != 60 || len(count) != 60 {
			t.Fatalf("table has %d rows, %d distinct; want 60 records once", rows, len(count))
		}
	}
	root := newRoot(t)
	rec, err := faultstore.New(root, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, options(t, rec)); err != nil {
		t.Fatal(err)
	}
	check(t, root)
	points := rec.Points()
	if err := faultstore.CheckPoints(points, faultstore.PointStreamMetadata, faultstore.PointStreamSources, faultstore.PointStreamOffsets,
		faultstore.PointStreamCommits, faultstore.PointStreamLogDelete, faultstore.PointDataFile, faultstore.PointCommit,
		faultstore.PointChecksum); err != nil {
		t.Fatal(err)
	}
	for _, cr := range faultstore.Crashes(points) {
		t.Run(cr.String(), func(t *testing.T) {
			root := newRoot(t)
			fs, err := faultstore.New(root, faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := cr.Arm(fs); err != nil {
				t.Fatal(err)
			}
			_, err = run(t, options(t, fs))
			if !fs.Crashed() {
				t.Fatalf("the crash point was not reached (err %v)", err)
			}
			if err == nil && !(cr.Mode == faultstore.FailAfter && cr.Point == points[len(points)-1]) {
				t.Fatalf("a crashed run reported success")
			}
			if _, err := run(t, options(t, root)); err != nil {
				t.Fatalf("restart: %v", err)
			}
			check(t, root)
		})
	}
}
