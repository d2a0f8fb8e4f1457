package filesink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
)

func TestLegacyDeleteAtCompaction(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		legacy bool
		want   []string // paths of 15.compact
	}{
		// Spark 3.1+ keeps every line, the delete line included.
		{"spark-3.1+", false, []string{"/a/b/0", "/a/b/1", "/a/b/2", "/a/b/3", "/a/b/4", "/a/b/5", "/a/b/6", "/a/b/7", "/a/b/8", "/a/b/0", "/a/b/9", "/a/b/10", "/a/b/15"}},
		// Spark up to 3.0 drops the deleted path and the delete line.
		{"legacy", true, []string{"/a/b/1", "/a/b/2", "/a/b/3", "/a/b/4", "/a/b/5", "/a/b/6", "/a/b/7", "/a/b/8", "/a/b/9", "/a/b/10", "/a/b/15"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemStore(t, "file:///a/b", nil)
			loadSparkLog(t, m)
			o := DefaultOptions()
			o.LegacyDeleteAction = tc.legacy
			l, _ := NewLog(m, o)
			for b := int64(10); b <= 15; b++ {
				var es []SinkFileStatus
				if b == 10 || b == 15 {
					es = append(es, entry(fmt.Sprintf("/a/b/%d", b), time.Unix(1, 0)))
				}
				if err := l.Add(ctx, b, es); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.ReadBatch(ctx, 15)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(paths(got), tc.want) {
				t.Fatalf("15.compact = %v, want %v", paths(got), tc.want)
			}
		})
	}
}

func TestRetentionOnRead(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.Retention = RetentionOf(time.Hour)
	l, _ := NewLog(m, o)
	if err := l.Add(ctx, 0, []SinkFileStatus{
		entry("file:///out/old", clock.Now().Add(-2*time.Hour)),
		entry("file:///out/edge", clock.Now().Add(-time.Hour)),
		entry("file:///out/new", clock.Now()),
	}); err != nil {
		t.Fatal(err)
	}
	all, err := l.AllFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"file:///out/edge", "file:///out/new"}; !slices.Equal(paths(all), want) {
		t.Fatalf("AllFiles with retention = %v, want %v", paths(all), want)
	}
	var streamed []string
	for e, err := range l.Entries(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, e.Path)
	}
	if !slices.Equal(streamed, paths(all)) {
		t.Fatalf("Entries = %v, AllFiles = %v", streamed, paths(all))
	}
	// Stopping the iteration early is fine.
	for range l.Entries(ctx) {
		break
	}
}

func TestOrphansAgeAndLog(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.Format = FormatJSON
	o.Compression = ""
	s, err := New(ctx, m, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddBatch(ctx, 0, rows(0, 3, nil)); err != nil {
		t.Fatal(err)
	}
	// The logged file gets old too, but it is named by the log.
	clock.Advance(72 * time.Hour)
	m.putAt("part-00000-crashed-c000.json", []byte("{}\n"), clock.Now().Add(-48*time.Hour))
	m.putAt("k=1/part-00001-crashed-c000.json", []byte("{}\n"), clock.Now().Add(-25*time.Hour))
	m.putAt("part-00002-inflight-c000.json", []byte("{}\n"), clock.Now().Add(-time.Minute))
	m.putAt("_SUCCESS", nil, clock.Now().Add(-48*time.Hour))
	m.putAt(".hidden", nil, clock.Now().Add(-48*time.Hour))
	orphans, err := Orphans(ctx, m, 24*time.Hour, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fi := range orphans {
		got = append(got, fi.Path)
	}
	if want := []string{"k=1/part-00001-crashed-c000.json", "part-00000-crashed-c000.json"}; !slices.Equal(got, want) {
		t.Fatalf("orphans = %v, want %v (not the in-flight one, not hidden ones)", got, want)
	}
	deleted, err := DeleteOrphans(ctx, m, orphans, o)
	if err != nil || len(deleted) != 2 {
		t.Fatalf("DeleteOrphans = %v, %v", deleted, err)
	}
	ls, err := ListFiles(ctx, m, o)
	if err != nil || len(ls.Files) != 1 {
		t.Fatalf("logged file lost: %+v %v", ls, err)
	}
	if _, err := m.Stat(ctx, ls.Files[0].Key); err != nil {
		t.Fatalf("logged file deleted: %v", err)
	}
	if _, err := m.Stat(ctx, "part-00002-inflight-c000.json"); err != nil {
		t.Fatalf("young file deleted: %v", err)
	}
	// A file named by the log is never deleted, even if passed in.
	if d, _ := DeleteOrphans(ctx, m, []storage.FileInfo{{Path: ls.Files[0].Key}}, o); len(d) != 0 {
		t.Fatalf("DeleteOrphans deleted a logged file: %v", d)
	}
	// No log: refuse rather than call everything an orphan.
	bare := newMemStore(t, "file:///bare", nil)
	bare.putAt("part-0", []byte("x"), time.Unix(0, 0))
	if _, err := Orphans(ctx, bare, 0, o); !errors.Is(err, ErrMissingLogFile) {
		t.Fatalf("orphans without a log: %v", err)
	}
}

func TestCompactLogForced(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.CompactInterval = 5
	l, _ := NewLog(m, o)
	for b := int64(0); b < 7; b++ {
		if err := l.Add(ctx, b, []SinkFileStatus{entry(fmt.Sprintf("file:///out/p%d", b), clock.Now())}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
	}
	// Now 7h after batch 0: a 4h retention drops p0..p2 from 4.compact.
	o.Retention = RetentionOf(4 * time.Hour)
	res, _, err := CompactLog(ctx, m, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.BatchID != 4 || res.EntriesWritten != 2 {
		t.Fatalf("CompactLog = %+v, want 4.compact rewritten with 2 entries", res)
	}
	l2, _ := NewLog(m, o)
	all, err := l2.AllFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"file:///out/p3", "file:///out/p4", "file:///out/p5", "file:///out/p6"}; !slices.Equal(paths(all), want) {
		t.Fatalf("after CompactLog: %v, want %v", paths(all), want)
	}
	if latest, _ := l2.LatestBatchID(ctx); latest != 6 {
		t.Fatalf("CompactLog changed the latest batch to %d", latest)
	}
	for _, k := range m.keys() {
		if strings.HasSuffix(k, ".compact") && k != MetadataDir+"/4.compact" {
			t.Fatalf("CompactLog created %s", k)
		}
	}
}

func FuzzDecodeLog(f *testing.F) {
	for _, seed := range []string{
		"v1",
		"v1\n" + `{"path":"/a/b/0","size":1,"isDir":false,"modificationTime":1,"blockReplication":1,"blockSize":100,"action":"add"}`,
		"v1\n" + `{"path":"file:///x y","size":1}` + "\n",
		"v2\n{}", "", "v1\n\n", "v1\n{\"path\":\"\\u2028<&>\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeLog("fuzz", data)
		if err != nil {
			return
		}
		enc, err := EncodeLog(entries)
		if err != nil {
			t.Fatalf("decoded entries do not encode: %v", err)
		}
		back, err := DecodeLog("fuzz", enc)
		if err != nil {
			t.Fatalf("re-encoded log does not decode: %v\n%q", err, enc)
		}
		if !slices.Equal(back, entries) {
			t.Fatalf("round trip changed entries:\n%+v\n%+v", entries, back)
		}
	})
}

func TestHasLog(t *testing.T) {
	ctx := context.Background()
	m := newMemStore(t, "file:///out", nil)
	if ok, err := HasLog(ctx, m); ok || err != nil {
		t.Fatalf("empty dir: HasLog = %v, %v", ok, err)
	}
	m.putAt("part-0", []byte("x"), time.Unix(0, 0))
	m.putAt("_spark_metadataX/0", []byte("v1"), time.Unix(0, 0))
	if ok, _ := HasLog(ctx, m); ok {
		t.Fatal("a sibling with a common prefix is not the log")
	}
	m.putAt(MetadataDir+"/0", []byte("v1"), time.Unix(0, 0))
	if ok, err := HasLog(ctx, m); !ok || err != nil {
		t.Fatalf("HasLog = %v, %v", ok, err)
	}
}

// TestReadRacesLogCleanup: a reader lists the log, then a writer commits a
// newer compaction and deletes the files the reader was about to read. The
// reader lists again and reads the new state, as Spark's allFiles does.
func TestReadRacesLogCleanup(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.CompactInterval, o.MinBatchesToRetain, o.CleanupDelay = 2, 1, 0
	w, _ := NewLog(m, o)
	for b := int64(0); b < 3; b++ {
		if err := w.Add(ctx, b, []SinkFileStatus{entry(fmt.Sprintf("file:///out/p%d", b), clock.Now())}); err != nil {
			t.Fatal(err)
		}
	}
	raced := false
	m.beforeRangeRead = func(path string) {
		if raced || path != MetadataDir+"/1.compact" {
			return
		}
		raced = true
		// Batches 3..5: 5.compact, and 1.compact and 2 are deleted
		// (minCompactionBatchId 3).
		for b := int64(3); b <= 5; b++ {
			if err := w.Add(ctx, b, []SinkFileStatus{entry(fmt.Sprintf("file:///out/p%d", b), clock.Now())}); err != nil {
				t.Error(err)
			}
		}
	}
	r, _ := NewLog(m, o)
	all, err := r.AllFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !raced {
		t.Fatal("the race did not happen")
	}
	if _, err := m.Stat(ctx, MetadataDir+"/1.compact"); err == nil {
		t.Fatal("the writer should have deleted 1.compact")
	}
	if want := []string{"file:///out/p0", "file:///out/p1", "file:///out/p2", "file:///out/p3", "file:///out/p4", "file:///out/p5"}; !slices.Equal(paths(all), want) {
		t.Fatalf("AllFiles after the race = %v, want %v", paths(all), want)
	}
}

func TestCompactionHonoursCancel(t *testing.T) {
	m := newMemStore(t, "file:///out", nil)
	es := make([]SinkFileStatus, 10000)
	for i := range es {
		es[i] = entry(fmt.Sprintf("file:///out/p%d", i), time.Unix(1, 0))
	}
	data, _ := EncodeLog(es)
	m.putAt(MetadataDir+"/0", data, time.Unix(0, 0))
	o := DefaultOptions()
	o.CompactInterval = 2
	l, _ := NewLog(m, o)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Add(ctx, 1, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("compaction with a cancelled ctx: %v", err)
	}
	if _, err := m.Stat(context.Background(), MetadataDir+"/1.compact"); err == nil {
		t.Fatal("a cancelled compaction left a compaction file")
	}
}
