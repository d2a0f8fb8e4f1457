package txlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// seedOpts are the options of the Logs of the seeding tests.
func seedOpts(perChunk int) Options {
	return Options{CheckpointRowsPerChunk: perChunk, DisableAutoCheckpoint: true, Now: reuseNow}
}

// reopen makes rt a fresh Log on its store (options opts) and its snapshot
// the one that Log loads.
func (rt *reuseTable) reopen(opts Options) {
	rt.t.Helper()
	rt.l = newTestLog(rt.t, rt.st, opts)
	var err error
	rt.snap, err = rt.l.Snapshot(context.Background())
	if err != nil {
		rt.t.Fatal(err)
	}
	rt.v = rt.snap.Version()
}

// TestCheckpointReuseSeededFromLoaded: a fresh Log opened on a table whose
// latest checkpoint this package wrote copies that checkpoint's groups of
// adds into its first checkpoint (10 appends later: only the 10 new adds
// are encoded, every other column chunk is copied verbatim), even after the
// checkpoint on the store was overwritten with another layout (the bytes
// copied are those its replay read), and the checkpoint loads as exactly
// the snapshot. Without the seeding, all 310 adds are encoded.
func TestCheckpointReuseSeededFromLoaded(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 300, 64)
	rt.append(2)
	rt.checkpoint()
	rt.reopen(seedOpts(64))
	memo := rt.l.ckptMemo.get()
	if memo == nil || memo.version != rt.v {
		t.Fatalf("no memo of the loaded checkpoint of %d: %+v", rt.v, memo)
	}
	// header, 4 groups of 64, the 46 rest
	var groups []int
	for _, g := range memo.groups {
		groups = append(groups, len(g.adds))
	}
	if fmt.Sprint(groups) != "[0 64 64 64 64 46]" {
		t.Errorf("memo's groups of adds %v, want [0 64 64 64 64 46]", groups)
	}
	// Another writer's checkpoint of the same version, other row groups.
	other := newTestLog(t, rt.st, Options{CheckpointRowsPerChunk: 7, Now: reuseNow})
	if _, err := other.Checkpoint(ctx, rt.snap); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		rt.append(1)
	}
	before := parquetCopiedChunks.Load()
	memo, f := rt.checkpoint()
	// The group of 46 is kept (2*10 < 46).
	if memo.encodedAdds != 10 {
		t.Errorf("first checkpoint of the fresh Log encoded %d adds, want the 10 new", memo.encodedAdds)
	}
	if got, want := parquetCopiedChunks.Load()-before, int64(5*len(f.Schema().Columns())); got != want {
		t.Errorf("%d column chunks copied verbatim, want %d (5 groups)", got, want)
	}
	// And on: the memo is now the Log's own.
	rt.append(1)
	if memo, _ = rt.checkpoint(); memo.encodedAdds != 1 {
		t.Errorf("next checkpoint encoded %d adds, want 1", memo.encodedAdds)
	}
}

// writeOldLayoutCheckpoint writes the checkpoint of snap as older lakesink
// versions laid it out, with codec: rows cut every perChunk rows whatever
// their action, so the first row group holds the protocol, the metaData
// and adds.
func writeOldLayoutCheckpoint(t *testing.T, st *memStore, snap *Snapshot, perChunk int, codec string) {
	t.Helper()
	c, err := parquetio.Codec(codec)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sl := parquetio.NewStatsLimitingWriter(&buf)
	pw := parquet.NewGenericWriter[ckptRow](sl, parquetio.SparkWriterOptions(c)...)
	fw := &ckptFileWriter{sl: sl, pw: pw, cws: pw.ColumnWriters(), shred: newCkptShredder(), perChunk: perChunk}
	p, md := snap.Protocol(), snap.Metadata()
	acts := []Action{{Protocol: &p}, {MetaData: &md}}
	for _, a := range snap.Files() {
		acts = append(acts, Action{Add: a})
	}
	for i := range acts {
		if err := fw.add(&acts[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.finish(); err != nil {
		t.Fatal(err)
	}
	st.put(CheckpointPath(snap.Version()), buf.String())
	lc, _ := json.Marshal(LastCheckpoint{Version: snap.Version(), Size: fw.rows})
	st.put(LastCheckpointPath, string(lc))
}

// TestCheckpointSeedOnlyFromCopyableGroups: a loaded checkpoint seeds a
// memo only with the row groups parquet-go can copy verbatim into this
// package's checkpoints and that hold adds only. A checkpoint in one mixed
// row group, one in another codec, and a delta-rs checkpoint
// (testdata/tables) give no memo: the next checkpoint encodes every add,
// and loads as the snapshot. One with a mixed first group and groups of
// adds after it reuses those groups (none without the seeding). Without
// the layout check (ckptLayout.copyable) the zstd groups seed a memo,
// which parquet-go's WriteRowGroup would decode and re-encode rather than
// copy.
func TestCheckpointSeedOnlyFromCopyableGroups(t *testing.T) {
	for _, tc := range []struct {
		name     string
		perChunk int
		codec    string
		memo     bool
		encoded  int
	}{
		{"one mixed group", 1000, "snappy", false, 310},
		{"zstd", 64, "zstd", false, 310},
		// [p, m, 62 adds] [64]x3 [46]: the 62 and the 10 new encoded,
		// carrying the 46 (2*72 >= 46); the full 64s copied.
		{"mixed first group", 64, "snappy", true, 118},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newReuseTable(t, 300, 64)
			writeOldLayoutCheckpoint(t, rt.st, rt.snap, tc.perChunk, tc.codec)
			rt.reopen(seedOpts(64))
			if rt.snap.CheckpointVersion() != 0 {
				t.Fatalf("loaded from checkpoint %d, want 0", rt.snap.CheckpointVersion())
			}
			if got := rt.l.ckptMemo.get() != nil; got != tc.memo {
				t.Fatalf("memo seeded: %v, want %v", got, tc.memo)
			}
			for range 10 {
				rt.append(1)
			}
			before := parquetCopiedChunks.Load()
			memo, f := rt.checkpoint()
			if memo.encodedAdds != int64(tc.encoded) {
				t.Errorf("checkpoint encoded %d adds, want %d", memo.encodedAdds, tc.encoded)
			}
			copied := (310 - tc.encoded) / 64
			if got, want := parquetCopiedChunks.Load()-before, int64(copied*len(f.Schema().Columns())); got != want {
				t.Errorf("%d column chunks copied verbatim, want %d", got, want)
			}
		})
	}
	t.Run("delta-rs", func(t *testing.T) {
		_, st := openDir(t, "testdata/tables/with_checkpoint_no_last_checkpoint")
		rt := &reuseTable{t: t, st: st}
		// Now just after its tombstones, which the checkpoint keeps then.
		opts := seedOpts(64)
		opts.Now = func() time.Time { return time.UnixMilli(1674611462000) }
		rt.reopen(opts)
		if rt.snap.CheckpointVersion() < 0 {
			t.Fatal("table not loaded from a checkpoint")
		}
		if m := rt.l.ckptMemo.get(); m != nil {
			t.Fatalf("memo seeded from a delta-rs checkpoint: %d groups", len(m.groups))
		}
		rt.append(2)
		memo, _ := rt.checkpoint()
		if n := rt.snap.NumFiles(); memo.encodedAdds != int64(n) {
			t.Errorf("checkpoint encoded %d adds, want all %d", memo.encodedAdds, n)
		}
	})
}

// TestReadOnlyLogKeepsNoCheckpointMemo: a Log opened ReadOnly (as the reader
// package opens its logs) on a table whose latest checkpoint this package
// wrote keeps no memo of it, where a writer's Log keeps the file's bytes
// (it kept them, up to 64 MiB, for as long as the Log lived, although it
// never writes a checkpoint); its writes fail with ErrReadOnly and write
// nothing.
func TestReadOnlyLogKeepsNoCheckpointMemo(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 300, 64)
	rt.append(2)
	rt.checkpoint()
	rt.reopen(seedOpts(64))
	if m := rt.l.ckptMemo.get(); m == nil || m.file.Size() == 0 {
		t.Fatalf("a writer's Log keeps no memo of the loaded checkpoint: %+v", m)
	}
	ro := seedOpts(64)
	ro.ReadOnly = true
	rt.reopen(ro)
	if m := rt.l.ckptMemo.get(); m != nil {
		t.Fatalf("a read-only Log keeps the memo of version %d (%d bytes)", m.version, m.file.Size())
	}
	if rt.snap.NumFiles() != 302 {
		t.Fatalf("read-only snapshot has %d files, want 302", rt.snap.NumFiles())
	}
	keys := len(rt.st.objects(""))
	if _, err := rt.l.Checkpoint(ctx, rt.snap); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Checkpoint of a read-only Log: %v, want ErrReadOnly", err)
	}
	tx := rt.l.Begin(rt.snap)
	tx.Add(Action{Add: reuseAdd("ro-1", 1)})
	if _, err := tx.Commit(ctx, "WRITE", nil, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Commit through a read-only Log: %v, want ErrReadOnly", err)
	}
	if _, err := rt.l.Cleanup(ctx, CleanupOptions{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Cleanup through a read-only Log: %v, want ErrReadOnly", err)
	}
	if _, err := rt.l.Cleanup(ctx, CleanupOptions{DryRun: true}); err != nil {
		t.Errorf("dry-run Cleanup through a read-only Log: %v", err)
	}
	if n := len(rt.st.objects("")); n != keys {
		t.Errorf("the refused writes left %d objects, want %d", n, keys)
	}
}
