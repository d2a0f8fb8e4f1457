package txlog

// Hostile-input tests (issue #9): inputs built to exhaust memory or stack,
// and logs that a newer or broken writer produced. Each one either succeeds
// with a measured peak heap under a stated bound, or fails with a typed error
// naming the file; none may panic, hang or allocate without bound. Larger
// sizes run with LAKESINK_BOMB_FULL=1.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/heaptest"
	"github.com/lakesink/lakesink/storage"
)

// bombFull reports LAKESINK_BOMB_FULL=1 (the full sizes).
func bombFull() bool { return os.Getenv("LAKESINK_BOMB_FULL") == "1" }

const mib = 1 << 20

// logFiles lists every key under _delta_log with its content, to show that a
// refused operation rewrote nothing.
func logFiles(t *testing.T, st *memStore) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, data := range st.objects(LogDir + "/") {
		out[k] = string(data)
	}
	return out
}

// TestBombLongCommitLine: a commit file that is one 100 MB line (an add with
// huge stats). The line limit (DefaultMaxLineBytes, 64 MiB) refuses it with
// a *CorruptLogError naming the file, version and line, and the scanner's
// buffer is the only large allocation: it doubles up to the limit, so the
// peak is the last two buffers (32 + 64 MiB) plus the smaller ones not yet
// collected (< 64 MiB); bound 2 × limit + 16 MiB. A line under the limit (20 MiB; 60 MiB with
// LAKESINK_BOMB_FULL=1) is accepted: it is held by the line buffer (up to
// 2×, it doubles), the raw action map, encoding/json's decoder buffer, the
// decoded stats string and the snapshot, so the bound is 8 × the line +
// 16 MiB (measured: 6.8× for 20 MiB).
func TestBombLongCommitLine(t *testing.T) {
	ctx := context.Background()
	huge := func(n int) []byte {
		var b bytes.Buffer
		b.Grow(n + 200)
		b.WriteString(`{"add":{"path":"big.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,"stats":"`)
		b.Write(bytes.Repeat([]byte("x"), n))
		b.WriteString(`"}}` + "\n")
		return b.Bytes()
	}

	t.Run("100MB line refused", func(t *testing.T) {
		st := newMemStore()
		l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
		createTable(t, l)
		putBytes(st, CommitPath(1), huge(100_000_000))
		var err error
		peak := heaptest.Peak(func() { _, err = l.Snapshot(ctx) })
		var ce *CorruptLogError
		if !errors.As(err, &ce) || ce.Path != CommitPath(1) || ce.Version != 1 || ce.Line != 1 ||
			!strings.Contains(err.Error(), "line longer than 67108864 bytes") {
			t.Fatalf("err = %v, want *CorruptLogError naming %s line 1", err, CommitPath(1))
		}
		t.Logf("100 MB line: %v; peak heap %.1f MiB", err, float64(peak)/mib)
		if bound := uint64(2*DefaultMaxLineBytes + 16*mib); peak > bound {
			t.Errorf("peak heap %.1f MiB > bound %.1f MiB", float64(peak)/mib, float64(bound)/mib)
		}
	})

	t.Run("line under the limit accepted", func(t *testing.T) {
		n := 20 << 20
		if bombFull() {
			n = 60 << 20
		}
		st := newMemStore()
		l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
		createTable(t, l)
		putBytes(st, CommitPath(1), huge(n))
		var snap *Snapshot
		var err error
		start := time.Now()
		peak := heaptest.Peak(func() { snap, err = l.Snapshot(ctx) })
		if err != nil {
			t.Fatal(err)
		}
		a, ok := snap.File("big.parquet")
		if !ok || len(a.Stats) != n {
			t.Fatalf("big.parquet not live with its %d-byte stats", n)
		}
		t.Logf("%d MiB line: replay %v, peak heap %.1f MiB", n>>20, time.Since(start).Round(time.Millisecond), float64(peak)/mib)
		if bound := uint64(8*n + 16*mib); peak > bound {
			t.Errorf("peak heap %.1f MiB > bound %.1f MiB", float64(peak)/mib, float64(bound)/mib)
		}
	})

	t.Run("custom limit names the line", func(t *testing.T) {
		st := newMemStore()
		l := newTestLog(t, st, Options{DisableAutoCheckpoint: true, MaxLineBytes: 1 << 20})
		createTable(t, l)
		small := string(addLine("ok.parquet"))
		st.put(CommitPath(1), small+small+string(huge(2<<20)))
		_, err := l.Snapshot(ctx)
		var ce *CorruptLogError
		if !errors.As(err, &ce) || ce.Line != 3 || ce.Version != 1 {
			t.Fatalf("err = %v, want *CorruptLogError at line 3 of version 1", err)
		}
	})
}

// putBytes stores data (the bombs are large: without the copies a
// hand-made map store saved, the mem store copies once).
func putBytes(st *memStore, p string, data []byte) { st.putBytes(p, data) }

// chunkReader returns at most n bytes per Read, as a network body does.
type chunkReader struct {
	r *bytes.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestBombLongLineSmallReads: a 32 MiB line arriving in 4 KiB reads is
// split in linear time. bufio.Scanner, used before, searched the whole
// partial line for '\n' after every Read (quadratic: ~n²/8 KiB byte
// comparisons, 4096 × the line for 32 MiB). The test counts the work
// instead of timing it (lineWork): every byte is searched once, and the
// long-line buffer copies each byte once plus its regrowths, which double
// (< 2 × the line in all; measured 3.0 × the input in all): bound 4 ×.
// BenchmarkLongLineSmallReads (make bench) gives the time.
func TestBombLongLineSmallReads(t *testing.T) {
	input := append(bytes.Repeat([]byte("x"), 32<<20), '\n')
	input = append(input, []byte("{}\n")...)
	var lens []int
	var work lineWork
	err := decodeCommitLines(chunkReader{bytes.NewReader(input), 4096}, "p", 1, 0, func(_ int, b []byte) error {
		lens = append(lens, len(b))
		return nil
	}, &work, -1)
	if err != nil || !slices.Equal(lens, []int{32 << 20, 2}) {
		t.Fatalf("lines %v, err %v", lens, err)
	}
	n := int64(len(input))
	t.Logf("32 MiB line in 4 KiB reads: %d bytes searched, %d copied, for %d input bytes", work.searched, work.copied, n)
	if work.searched != n {
		t.Errorf("%d bytes searched for newlines, want each of the %d input bytes once", work.searched, n)
	}
	if work.copied > 4*n {
		t.Errorf("%d bytes copied for a %d-byte input (> 4×: not linear)", work.copied, n)
	}
}

func addLine(path string) []byte {
	return fmt.Appendf(nil, `{"add":{"path":%q,"partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`+"\n", path)
}

// TestBombCheckpointManyFiles: a checkpoint of 25,000 live files (1,000,000
// with LAKESINK_BOMB_FULL=1; the bound is per file, so the small size
// catches a per-file overhead as well) written by Log.Checkpoint, then a fresh Log opens
// the table from it. The snapshot keeps one *Add per file (path, partition
// values, stats) in two maps and a sorted slice; the bound is 2 KiB per file
// plus the checkpoint file itself (read whole into memory), which a table of
// small adds stays well under.
func TestBombCheckpointManyFiles(t *testing.T) {
	n := 25_000
	if bombFull() {
		n = 1_000_000
	}
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	createTable(t, l)
	// One commit of n adds, built directly (Transaction.Commit's conflict
	// bookkeeping is not what is measured here).
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"add":{"path":"part-%08d.parquet","partitionValues":{},"size":1024,"modificationTime":1700000000000,"dataChange":true,"stats":"{\"numRecords\":10}"}}`+"\n", i)
	}
	putBytes(st, CommitPath(1), b.Bytes())
	b = bytes.Buffer{}
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := l.Checkpoint(ctx, snap); err != nil {
		t.Fatal(err)
	}
	t.Logf("checkpoint of %d adds: %v", n, time.Since(start).Round(time.Millisecond))
	st.del(CommitPath(1)) // the checkpoint alone must carry the state
	ckSize := len(st.objects(CheckpointPath(1))[CheckpointPath(1)])
	snap = nil
	var got *Snapshot
	start = time.Now()
	peak := heaptest.Peak(func() {
		l2 := newTestLog(t, st, Options{})
		got, err = l2.Snapshot(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.NumFiles() != n || got.CheckpointVersion() != 1 {
		t.Fatalf("files %d checkpoint %d, want %d from checkpoint 1", got.NumFiles(), got.CheckpointVersion(), n)
	}
	perFile := float64(peak) / float64(n)
	t.Logf("open from a checkpoint of %d adds (%.1f MiB): %v, peak heap %.1f MiB (%.0f B/file)",
		n, float64(ckSize)/mib, time.Since(start).Round(time.Millisecond), float64(peak)/mib, perFile)
	if bound := uint64(2048*n + ckSize); peak > bound {
		t.Errorf("peak heap %.1f MiB > bound %.1f MiB", float64(peak)/mib, float64(bound)/mib)
	}
}

// TestBombUnknownActionNotDropped: a newer writer's commit holds an action
// type this package does not know. Reading ignores it (as Delta readers
// ignore what they cannot interpret), but a checkpoint would drop it from the
// table's state, so Checkpoint refuses with *UnknownActionError naming the
// action and commit, and writes nothing.
func TestBombUnknownActionNotDropped(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	createTable(t, l)
	st.put(CommitPath(1), string(addLine("a.parquet"))+`{"futureAction":{"x":[1,2,3]}}`+"\n")
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatalf("read with an unknown action: %v", err)
	}
	if _, ok := snap.File("a.parquet"); !ok {
		t.Fatal("a.parquet not live")
	}
	// The commit round-trips verbatim (ReadCommit keeps it in Unknown).
	acts, err := l.ReadCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeCommit(acts)
	if err != nil || !strings.Contains(string(enc), `{"futureAction":{"x":[1,2,3]}}`) {
		t.Fatalf("re-encoded commit %q (err %v) lost the unknown action", enc, err)
	}
	before := logFiles(t, st)
	_, err = l.Checkpoint(ctx, snap)
	var ue *UnknownActionError
	if !errors.As(err, &ue) || ue.Action != "futureAction" || ue.Version != 1 || ue.Path != CommitPath(1) ||
		!errors.Is(err, ErrUnknownAction) || !errors.Is(err, ErrUnsupportedFeature) {
		t.Fatalf("checkpoint: %v, want *UnknownActionError for futureAction in version 1", err)
	}
	if after := logFiles(t, st); !mapsEqual(before, after) {
		t.Fatalf("refused checkpoint changed the log: %v -> %v", keys(before), keys(after))
	}
	// Once a later checkpoint of ours is impossible, an automatic one after a
	// commit is skipped too, and the commit itself succeeds.
	l2 := newTestLog(t, st, Options{CheckpointInterval: 2})
	mustCommit(t, l2, snap, addAction("b.parquet", true))
	if st.has(CheckpointPath(2)) {
		t.Fatal("automatic checkpoint written over an unknown action")
	}
}

// TestBombUnknownActionInV2Checkpoint: the unknown action sits in a V2
// JSON checkpoint (the commits before it are gone): our checkpoint of a
// later version would drop it too, so it is refused the same way.
func TestBombUnknownActionInV2Checkpoint(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	md := `{"metaData":{"id":"tbl","format":{"provider":"parquet","options":{}},"schemaString":` +
		fmt.Sprintf("%q", testSchema) + `,"partitionColumns":[],"configuration":{}}}`
	ck := LogDir + "/00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"
	st.put(ck, `{"checkpointMetadata":{"version":1}}`+"\n"+
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}}`+"\n"+
		md+"\n"+string(addLine("a.parquet"))+`{"futureAction":{"x":1}}`+"\n")
	st.put(CommitPath(2), string(addLine("b.parquet")))
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.NumFiles() != 2 || snap.CheckpointVersion() != 1 {
		t.Fatalf("files %d, checkpoint %d", snap.NumFiles(), snap.CheckpointVersion())
	}
	before := logFiles(t, st)
	_, err = l.Checkpoint(ctx, snap)
	var ue *UnknownActionError
	if !errors.As(err, &ue) || ue.Action != "futureAction" || ue.Path != ck || ue.Version != 1 {
		t.Fatalf("checkpoint: %v, want *UnknownActionError naming %s", err, ck)
	}
	if after := logFiles(t, st); !mapsEqual(before, after) {
		t.Fatalf("refused checkpoint changed the log: %v -> %v", keys(before), keys(after))
	}
}

// TestBombUnknownFeaturesNothingRewritten: a protocol naming a reader or
// writer feature this package does not know. Loading the snapshot works
// (the log replays), but a commit and a checkpoint are refused with
// *UnsupportedFeatureError naming the feature, and the log is unchanged.
func TestBombUnknownFeaturesNothingRewritten(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, protocol, feature string
	}{
		{"unknown reader feature", `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["futureReadFeature"],"writerFeatures":["futureReadFeature"]}}`, "futureReadFeature"},
		{"unknown writer feature", `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["futureWriteFeature"]}}`, "futureWriteFeature"},
		{"reader version 4", `{"protocol":{"minReaderVersion":4,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}}`, "readerVersion 4"},
		{"writer version 8", `{"protocol":{"minReaderVersion":1,"minWriterVersion":8}}`, "writerVersion 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			md := `{"metaData":{"id":"tbl","format":{"provider":"parquet","options":{}},"schemaString":` +
				fmt.Sprintf("%q", testSchema) + `,"partitionColumns":[],"configuration":{}}}`
			st.put(CommitPath(0), tc.protocol+"\n"+md+"\n")
			l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
			snap, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			var ufe *UnsupportedFeatureError
			if err := snap.CheckReadSupported(); strings.Contains(tc.name, "reader") && (!errors.As(err, &ufe) || ufe.Feature != tc.feature) {
				t.Fatalf("CheckReadSupported: %v, want %q", err, tc.feature)
			}
			before := logFiles(t, st)
			tx := l.Begin(snap)
			tx.Add(addAction("a.parquet", true))
			if _, err := tx.Commit(ctx, "WRITE", nil, nil); !errors.As(err, &ufe) || ufe.Feature != tc.feature || !ufe.Write {
				t.Fatalf("commit: %v, want *UnsupportedFeatureError{%q, Write}", err, tc.feature)
			}
			if _, err := l.Checkpoint(ctx, snap); !errors.As(err, &ufe) || ufe.Feature != tc.feature || !ufe.Write {
				t.Fatalf("checkpoint: %v, want *UnsupportedFeatureError{%q, Write}", err, tc.feature)
			}
			if after := logFiles(t, st); !mapsEqual(before, after) {
				t.Fatalf("log changed: %v -> %v", keys(before), keys(after))
			}
		})
	}
}

// TestBombGapNothingRewritten: a log whose commits skip versions is corrupt
// ("versions not contiguous", naming the missing versions): loading it
// fails, and a writer whose commit loses the race to a version right after
// which the log has a hole is refused instead of filling the hole. Nothing
// is written. A stray file with the largest 20-digit version makes the gap
// 9.2e18 versions wide: it is reported at once, not counted through. (A
// writer that lost a race reads the winners one by one and looks up only
// the version after the first missing one, not the whole log, so it does
// not see that stray.)
func TestBombGapNothingRewritten(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		stray   int64
		missing string
		commit  bool // a writer losing version 2 sees the hole
	}{
		{"hole at 3", 4, "missing 3", true},
		{"stray max version", 9223372036854775807, "missing 3-9223372036854775806", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
			s0 := createTable(t, l)
			mustCommit(t, l, s0, addAction("a.parquet", true))
			s1, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, l, s1, addAction("b.parquet", true)) // version 2
			st.put(CommitPath(tc.stray), string(addLine("d.parquet")))
			before := logFiles(t, st)
			_, err = l.Snapshot(ctx)
			var ce *CorruptLogError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "versions not contiguous: "+tc.missing) {
				t.Fatalf("snapshot: %v, want versions not contiguous: %s", err, tc.missing)
			}
			if !tc.commit {
				return
			}
			// A writer still at version 1 loses version 2 and, checking the
			// winners, finds the hole.
			tx := l.Begin(s1)
			tx.Add(addAction("c.parquet", true))
			if _, err := tx.Commit(ctx, "WRITE", nil, nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), "versions not contiguous: "+tc.missing) {
				t.Fatalf("commit over a hole: %v, want *CorruptLogError versions not contiguous", err)
			}
			if after := logFiles(t, st); !mapsEqual(before, after) {
				t.Fatalf("log changed: %v -> %v", keys(before), keys(after))
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var _ storage.Store = (*memStore)(nil)

// TestDecodeCommitLinesBoundaries: the line limit counts the bytes of a line
// without its newline, for limits below and above the 64 KiB read buffer;
// blank lines are skipped and the last line may lack its newline.
func TestDecodeCommitLinesBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		maxLine int
		want    []string
		errLine int // 0: no error
	}{
		{"exactly the limit", "abc\nde", 3, []string{"abc", "de"}, 0},
		{"one over", "abc\nabcd\n", 3, []string{"abc"}, 2},
		{"blank lines and CRLF", "\n a \r\n\n\nb", 10, []string{"a", "b"}, 0},
		{"no trailing newline", "x", 10, []string{"x"}, 0},
		{"empty", "", 10, nil, 0},
		{"big limit exact", strings.Repeat("y", 200_000) + "\nz\n", 200_000, []string{strings.Repeat("y", 200_000), "z"}, 0},
		{"big limit one over", "z\n" + strings.Repeat("y", 200_001) + "\n", 200_000, []string{"z"}, 2},
		{"big limit over at EOF", strings.Repeat("y", 200_001), 200_000, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := DecodeCommitLines(chunkReader{bytes.NewReader([]byte(tc.input)), 1000}, "p", 3, tc.maxLine, func(_ int, b []byte) error {
				got = append(got, string(b))
				return nil
			})
			var ce *CorruptLogError
			switch {
			case tc.errLine == 0 && err != nil:
				t.Fatalf("err %v", err)
			case tc.errLine != 0 && (!errors.As(err, &ce) || ce.Line != tc.errLine || ce.Version != 3):
				t.Fatalf("err %v, want *CorruptLogError at line %d", err, tc.errLine)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("lines %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBombHugeLastCheckpoint: a 32 MB _last_checkpoint is only a hint: at
// most 1 MiB of it is read, it is ignored, and the snapshot comes from the
// listing (before, it was read whole). Bound: 8 MiB of heap.
func TestBombHugeLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s0 := createTable(t, l)
	mustCommit(t, l, s0, addAction("a.parquet", true))
	huge := append([]byte(`{"version":1,"size":3,"pad":"`), bytes.Repeat([]byte("x"), 32_000_000)...)
	huge = append(huge, `"}`...)
	putBytes(st, LastCheckpointPath, huge)
	var snap *Snapshot
	var err error
	peak := heaptest.Peak(func() { snap, err = l.Snapshot(ctx) })
	if err != nil || snap.Version() != 1 || snap.NumFiles() != 1 {
		t.Fatalf("snapshot %v, err %v", snap, err)
	}
	t.Logf("32 MB _last_checkpoint: peak heap %.1f MiB", float64(peak)/mib)
	if peak > 8*mib {
		t.Errorf("peak heap %.1f MiB > 8 MiB", float64(peak)/mib)
	}
}
