package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/memtest"
	"github.com/lakesink/lakesink/storage"
)

func loadSpark(t *testing.T, dir string) storage.Store {
	t.Helper()
	return memtest.Load(t, filepath.Join("testdata", "spark", dir))
}

// Spark 2.1's checkpoint: metadata, and offsets with a plain-number (LongOffset)
// file source offset and no conf in the metadata line.
func TestSparkCheckpointVersion210(t *testing.T) {
	ctx := context.Background()
	cp, err := Open(ctx, loadSpark(t, "checkpoint-version-2.1.0"), Metadata{Source: "file:///in", SinkKind: "delta", Sink: "file:///t"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Created() {
		t.Error("Created() = true for an existing checkpoint")
	}
	if got, want := cp.QueryID(), "dddc5e7f-1e71-454c-8362-de184444fb5a"; got != want {
		t.Errorf("query id = %q, want %q", got, want)
	}
	ids, err := cp.OffsetBatchIDs(ctx)
	if err != nil || !reflect.DeepEqual(ids, []int64{0, 1}) {
		t.Fatalf("offset batch ids = %v, %v; want [0 1]", ids, err)
	}
	cases := []struct {
		batch     int64
		timestamp int64
		logOffset int64
	}{{0, 1489180207737, 0}, {1, 1489180209261, 2}}
	for _, c := range cases {
		seq, err := cp.ReadOffsets(ctx, c.batch)
		if err != nil {
			t.Fatal(err)
		}
		if seq.Metadata == nil || seq.Metadata.BatchTimestampMs != c.timestamp || seq.Metadata.BatchWatermarkMs != 0 {
			t.Errorf("batch %d metadata = %+v, want timestamp %d", c.batch, seq.Metadata, c.timestamp)
		}
		if len(seq.Offsets) != 1 {
			t.Fatalf("batch %d: %d offsets, want 1", c.batch, len(seq.Offsets))
		}
		off, err := ParseFileSourceOffset(seq.Offsets[0])
		if err != nil || off.LogOffset != c.logOffset {
			t.Errorf("batch %d offset = %+v, %v; want logOffset %d", c.batch, off, err, c.logOffset)
		}
	}
	latest, _, ok, err := cp.LatestOffsets(ctx)
	if err != nil || !ok || latest != 1 {
		t.Errorf("LatestOffsets = %d, %v, %v; want 1", latest, ok, err)
	}
	if _, _, ok, err := cp.LatestCommit(ctx); ok || err != nil {
		t.Errorf("LatestCommit on a checkpoint without commits: ok=%v err=%v", ok, err)
	}
}

// Spark 2.1's offset log with two sources: a file source ({"logOffset":345})
// and a Kafka source, kept verbatim.
func TestSparkOffsetLogVersion210(t *testing.T) {
	ctx := context.Background()
	store := loadSpark(t, "offset-log-version-2.1.0")
	data, err := store.Read(ctx, "0")
	if err != nil {
		t.Fatal(err)
	}
	seq, _, err := ParseOffsetSeq(data)
	if err != nil {
		t.Fatal(err)
	}
	want := OffsetSeq{
		Metadata: &OffsetSeqMetadata{BatchWatermarkMs: 0, BatchTimestampMs: 1480981499528},
		Offsets:  []string{`{"logOffset":345}`, `{"topic-0":{"0":1}}`},
	}
	if !reflect.DeepEqual(seq, want) {
		t.Errorf("got %+v / %q, want %+v / %q", seq.Metadata, seq.Offsets, want.Metadata, want.Offsets)
	}
	off, err := ParseFileSourceOffset(seq.Offsets[0])
	if err != nil || off.LogOffset != 345 {
		t.Errorf("file source offset = %+v, %v; want 345", off, err)
	}
	// Round trip: our serialization parses back to the same offsets.
	out, err := MarshalOffsetSeq(seq)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := ParseOffsetSeq(out)
	if err != nil || !reflect.DeepEqual(back.Offsets, seq.Offsets) || back.Metadata.BatchTimestampMs != 1480981499528 {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	if !strings.Contains(string(out), `"conf":{}`) {
		t.Errorf("written metadata line lacks conf: %s", out)
	}
}

func TestSparkCommitLogV1(t *testing.T) {
	ctx := context.Background()
	data, err := loadSpark(t, "testCommitLogV1").Read(ctx, "testCommitLog")
	if err != nil {
		t.Fatal(err)
	}
	cm, _, err := ParseCommit(data)
	if err != nil || cm.NextBatchWatermarkMs != 1 {
		t.Errorf("commit = %+v, %v; want nextBatchWatermarkMs 1", cm, err)
	}
	if got := string(MarshalCommit(CommitMetadata{})); got != "v1\n{\"nextBatchWatermarkMs\":0}" {
		t.Errorf("MarshalCommit = %q", got)
	}
}

// Spark 2.1's file source log with compact interval 3: 2.compact holds
// batches 0..2, then 3 and 4.
func TestSparkFileSourceLogVersion210(t *testing.T) {
	ctx := context.Background()
	log := NewFileSourceLog(loadSpark(t, "file-source-log-version-2.1.0"), DefaultCompactInterval)
	if iv, err := log.CompactInterval(ctx); err != nil || iv != 3 {
		t.Errorf("compact interval = %d, %v; want 3 (derived from 2.compact)", iv, err)
	}
	want := []FileEntry{
		{"/a/b/0", 1480730949000, 0}, {"/a/b/1", 1480730950000, 1}, {"/a/b/2", 1480730950000, 2},
		{"/a/b/3", 1480730950000, 3}, {"/a/b/4", 1480730951000, 4},
	}
	all, err := log.AllFiles(ctx)
	if err != nil || !reflect.DeepEqual(all, want) {
		t.Errorf("AllFiles = %v, %v\nwant %v", all, err, want)
	}
	got, err := log.Range(ctx, 0, 4)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Range(0,4) = %v, %v", got, err)
	}
	for id := int64(0); id <= 4; id++ {
		e, err := log.Get(ctx, id)
		if err != nil || len(e) != 1 || e[0] != want[id] {
			t.Errorf("Get(%d) = %v, %v; want %v", id, e, err, want[id])
		}
	}
	if latest, ok, err := log.LatestBatchID(ctx); err != nil || !ok || latest != 4 {
		t.Errorf("LatestBatchID = %d, %v, %v", latest, ok, err)
	}
	// The next compaction (batch 5) gathers everything.
	if err := log.Add(ctx, 5, []FileEntry{{"/a/b/5", 1480730952000, 5}}); err != nil {
		t.Fatal(err)
	}
	all, err = log.AllFiles(ctx)
	if err != nil || len(all) != 6 || all[5].Path != "/a/b/5" {
		t.Errorf("after compaction 5: %v, %v", all, err)
	}
}

func TestCompactionEveryTenBatches(t *testing.T) {
	ctx := context.Background()
	store := memtest.New(t)
	log := NewFileSourceLog(store, 0)
	for id := int64(0); id < 12; id++ {
		if err := log.Add(ctx, id, []FileEntry{{Path: "f" + string(rune('a'+id)), Timestamp: id, BatchID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	keys := strings.Join(memtest.Keys(t, store), " ")
	if !strings.Contains(keys, "9.compact") || strings.Contains(keys, "9 ") {
		t.Errorf("keys = %s; want 9.compact and no plain 9", keys)
	}
	all, err := log.AllFiles(ctx)
	if err != nil || len(all) != 12 {
		t.Fatalf("AllFiles = %d entries, %v", len(all), err)
	}
	e, err := log.Get(ctx, 9)
	if err != nil || len(e) != 1 || e[0].BatchID != 9 {
		t.Errorf("Get(9) = %v, %v", e, err)
	}
	// A fresh log over the same store derives its interval from 9.compact:
	// 10 with the default, and with default 3 the first divisor of 10 >= 3
	// (Spark's deriveCompactInterval), so 9.compact stays a compaction batch.
	if iv, _ := NewFileSourceLog(store, 0).CompactInterval(ctx); iv != 10 {
		t.Errorf("derived interval = %d, want 10", iv)
	}
	if iv, _ := NewFileSourceLog(store, 3).CompactInterval(ctx); iv != 5 {
		t.Errorf("derived interval (default 3) = %d, want 5", iv)
	}
	if err := log.Add(ctx, 11, nil); !errors.Is(err, ErrCheckpointInUse) {
		t.Errorf("second Add(11) = %v, want ErrCheckpointInUse", err)
	}
}

func TestDeriveCompactInterval(t *testing.T) {
	cases := []struct{ def, latest, want int }{
		{10, 2, 3}, {10, 9, 10}, {5, 11, 6}, {3, 11, 3}, {10, 19, 20}, {7, 12, 13},
	}
	for _, c := range cases {
		if got := deriveCompactInterval(c.def, c.latest); got != c.want {
			t.Errorf("deriveCompactInterval(%d, %d) = %d, want %d", c.def, c.latest, got, c.want)
		}
	}
}

func TestTrailingNewlineAccepted(t *testing.T) {
	for _, data := range []string{"v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":5}\n{\"logOffset\":3}", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":5}\n{\"logOffset\":3}\n", "v1\r\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":5}\r\n{\"logOffset\":3}\r\n"} {
		seq, _, err := ParseOffsetSeq([]byte(data))
		if err != nil || len(seq.Offsets) != 1 || seq.Offsets[0] != `{"logOffset":3}` || seq.Metadata.BatchTimestampMs != 5 {
			t.Errorf("ParseOffsetSeq(%q) = %+v, %v", data, seq, err)
		}
	}
	if cm, _, err := ParseCommit([]byte("v1\n{\"nextBatchWatermarkMs\":7}\n")); err != nil || cm.NextBatchWatermarkMs != 7 {
		t.Errorf("commit with newline: %+v %v", cm, err)
	}
	if _, err := ParseMetadata([]byte("{\"id\":\"x\"}\n")); err != nil {
		t.Errorf("metadata with newline: %v", err)
	}
}

func TestCorruptFiles(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, path, data, hint string
		read                   func(*Checkpoint) error
	}{
		{"empty offsets", "offsets/7", "", "delete offsets/7",
			func(c *Checkpoint) error { _, err := c.ReadOffsets(ctx, 7); return err }},
		{"offsets without metadata line", "offsets/7", "v1", "delete offsets/7",
			func(c *Checkpoint) error { _, err := c.ReadOffsets(ctx, 7); return err }},
		{"truncated offset line", "offsets/7", "v1\n{\"batchWatermarkMs\":0}\n{\"logOff", "delete offsets/7",
			func(c *Checkpoint) error { _, _, _, err := c.LatestOffsets(ctx); return err }},
		{"newer version", "offsets/7", "v9\n{}\n{\"logOffset\":1}", "offsets/7",
			func(c *Checkpoint) error { _, err := c.ReadOffsets(ctx, 7); return err }},
		{"empty commit", "commits/3", "", "delete commits/3",
			func(c *Checkpoint) error { _, err := c.ReadCommit(ctx, 3); return err }},
		{"truncated commit", "commits/3", "v1\n{\"nextBatch", "delete commits/3",
			func(c *Checkpoint) error { _, _, _, err := c.LatestCommit(ctx); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := memtest.New(t)
			cp, err := Open(ctx, store, Metadata{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Put(ctx, c.path, []byte(c.data)); err != nil {
				t.Fatal(err)
			}
			err = c.read(cp)
			var ce *CorruptFileError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Path != c.path {
				t.Fatalf("err = %v, want *CorruptFileError for %s", err, c.path)
			}
			if !strings.Contains(err.Error(), c.hint) {
				t.Errorf("err %q lacks %q", err, c.hint)
			}
		})
	}
	t.Run("empty metadata", func(t *testing.T) {
		store := memtest.New(t)
		_ = store.Put(ctx, "metadata", nil)
		if _, err := Open(ctx, store, Metadata{}, false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("empty source log", func(t *testing.T) {
		store := memtest.New(t)
		_ = store.Put(ctx, "0", nil)
		_, err := NewFileSourceLog(store, 0).Get(ctx, 0)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "0") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestOpenMetadata(t *testing.T) {
	ctx := context.Background()
	store := memtest.New(t)
	want := Metadata{Source: "file:///in", SinkKind: "delta", Sink: "file:///table"}
	cp, err := Open(ctx, store, want, false)
	if err != nil || !cp.Created() || cp.QueryID() == "" {
		t.Fatalf("Open fresh: %v created=%v", err, cp != nil && cp.Created())
	}
	data, _ := store.Read(ctx, "metadata")
	if !strings.HasPrefix(string(data), `{"id":"`+cp.QueryID()+`"`) {
		t.Errorf("metadata = %s", data)
	}
	again, err := Open(ctx, store, want, false)
	if err != nil || again.Created() || again.QueryID() != cp.QueryID() {
		t.Fatalf("reopen: %v, id %q vs %q", err, again.QueryID(), cp.QueryID())
	}
	cases := []struct {
		name  string
		m     Metadata
		field string
	}{
		{"other source", Metadata{Source: "file:///other", SinkKind: "delta", Sink: "file:///table"}, "source"},
		{"other sink kind", Metadata{Source: "file:///in", SinkKind: "filesink", Sink: "file:///table"}, "sinkKind"},
		{"other sink", Metadata{Source: "file:///in", SinkKind: "delta", Sink: "file:///t2"}, "sink"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(ctx, store, c.m, false)
			var me *MismatchError
			if !errors.As(err, &me) || !errors.Is(err, ErrMismatch) || me.Field != c.field {
				t.Fatalf("err = %v, want mismatch on %s", err, c.field)
			}
		})
	}
	// allowReset keeps the id and records the new source.
	reset, err := Open(ctx, store, cases[0].m, true)
	if err != nil || reset.QueryID() != cp.QueryID() || reset.Metadata().Source != "file:///other" {
		t.Fatalf("reset: %v %+v", err, reset)
	}
	if _, err := Open(ctx, store, cases[0].m, false); err != nil {
		t.Errorf("after reset the new source is the recorded one: %v", err)
	}
}

func TestPutIfAbsentOneDriver(t *testing.T) {
	ctx := context.Background()
	store := memtest.New(t)
	cp, _ := Open(ctx, store, Metadata{}, false)
	seq := OffsetSeq{Metadata: &OffsetSeqMetadata{BatchTimestampMs: 1}, Offsets: []string{FileSourceOffset{LogOffset: 0}.String()}}
	if err := cp.WriteOffsets(ctx, 0, seq); err != nil {
		t.Fatal(err)
	}
	err := cp.WriteOffsets(ctx, 0, seq)
	if !errors.Is(err, ErrCheckpointInUse) || !errors.Is(err, storage.ErrAlreadyExists) || !strings.Contains(err.Error(), "offsets/0") {
		t.Errorf("second WriteOffsets = %v", err)
	}
	if err := cp.WriteCommit(ctx, 0, CommitMetadata{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.WriteCommit(ctx, 0, CommitMetadata{}); !errors.Is(err, ErrCheckpointInUse) {
		t.Errorf("second WriteCommit = %v", err)
	}
	data, _ := store.Read(ctx, "offsets/0")
	if string(data) != "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{}}\n{\"logOffset\":0}" {
		t.Errorf("offsets/0 = %q", data)
	}
	// Spark's ".0.crc" and temp files are not batches; 10 sorts after 9.
	for _, p := range []string{"offsets/.0.crc", "offsets/9", "offsets/10", "offsets/tmp-1"} {
		_ = store.Put(ctx, p, data)
	}
	if ids, _ := cp.OffsetBatchIDs(ctx); !reflect.DeepEqual(ids, []int64{0, 9, 10}) {
		t.Errorf("ids = %v", ids)
	}
	if err := cp.Purge(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if ids, _ := cp.OffsetBatchIDs(ctx); !reflect.DeepEqual(ids, []int64{10}) {
		t.Errorf("after purge ids = %v", ids)
	}
}

func TestSourceLogDeletesExpiredFiles(t *testing.T) {
	ctx := context.Background()
	store := memtest.New(t)
	log := NewFileSourceLog(store, 10)
	log.MinBatchesToRetain = 15
	for id := int64(0); id < 40; id++ {
		if err := log.Add(ctx, id, []FileEntry{{Path: fmt.Sprintf("f%d", id), Timestamp: id, BatchID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	// At 39.compact: keep from batch 25 on, i.e. from the compaction before
	// it (19.compact); everything older goes.
	keys := memtest.Keys(t, store)
	if slices.Contains(keys, "18") || slices.Contains(keys, "9.compact") || !slices.Contains(keys, "19.compact") || !slices.Contains(keys, "20") {
		t.Errorf("keys after cleanup = %v", keys)
	}
	for _, id := range []int64{0, 5, 18, 19, 25, 39} {
		e, err := log.Get(ctx, id)
		if err != nil || len(e) != 1 || e[0].Path != fmt.Sprintf("f%d", id) {
			t.Errorf("Get(%d) after cleanup = %v, %v", id, e, err)
		}
	}
	all, err := log.AllFiles(ctx)
	if err != nil || len(all) != 40 {
		t.Errorf("AllFiles = %d entries, %v", len(all), err)
	}
}
