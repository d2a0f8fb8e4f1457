package txlog

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	_ "unsafe" // go:linkname

	"github.com/parquet-go/parquet-go"
)

// reuseTable is a table in a memStore whose commits the test writes
// directly; snap follows them by Log.Update, as a writer's snapshot does.
type reuseTable struct {
	t    testing.TB
	st   *memStore
	l    *Log
	snap *Snapshot
	v    int64
}

var reuseNow = func() time.Time { return time.UnixMilli(1_700_000_000_000) }

func newReuseTable(t testing.TB, files, perChunk int) *reuseTable {
	t.Helper()
	st := newMemStore()
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	md := Metadata{ID: "reuse", Format: Format{Provider: "parquet"}, SchemaString: testSchema, PartitionColumns: []string{"p"}}
	acts := []Action{{Protocol: &p}, {MetaData: &md}}
	for i := range files {
		acts = append(acts, Action{Add: reuseAdd(fmt.Sprintf("base-%06d", i), int64(i))})
	}
	b, err := EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	st.put(CommitPath(0), string(b))
	rt := &reuseTable{t: t, st: st, l: newTestLog(t, st, Options{CheckpointRowsPerChunk: perChunk, DisableAutoCheckpoint: true, Now: reuseNow})}
	rt.snap, err = rt.l.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func reuseAdd(name string, size int64) *Add {
	pv := fmt.Sprint(size % 3)
	return &Add{Path: fmt.Sprintf("p=%s/%s.parquet", pv, name), Size: size, ModificationTime: 1_700_000_000_000 + size,
		PartitionValues: map[string]*string{"p": &pv}, DataChange: true, Stats: fmt.Sprintf(`{"numRecords":%d}`, size)}
}

// commit writes the next version with acts and advances snap to it.
func (rt *reuseTable) commit(acts ...Action) {
	rt.t.Helper()
	rt.v++
	b, err := EncodeCommit(acts)
	if err != nil {
		rt.t.Fatal(err)
	}
	rt.st.put(CommitPath(rt.v), string(b))
	rt.snap, err = rt.l.Update(context.Background(), rt.snap)
	if err != nil || rt.snap.Version() != rt.v {
		rt.t.Fatalf("update to %d: %v", rt.v, err)
	}
}

// append commits n new files.
func (rt *reuseTable) append(n int) {
	var acts []Action
	for i := range n {
		acts = append(acts, Action{Add: reuseAdd(fmt.Sprintf("v%05d-%d", rt.v+1, i), rt.v*10+int64(i))})
	}
	rt.commit(acts...)
}

// checkpoint checkpoints snap and checks that a fresh Log loads exactly
// snap from it; it returns the memo (what was encoded) and the file.
func (rt *reuseTable) checkpoint() (*ckptMemo, *parquet.File) {
	rt.t.Helper()
	return rt.checkpointVerify(true)
}

// checkpointVerify is checkpoint, loading the table from it when verify.
func (rt *reuseTable) checkpointVerify(verify bool) (*ckptMemo, *parquet.File) {
	rt.t.Helper()
	ctx := context.Background()
	if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
		rt.t.Fatal(err)
	}
	memo := rt.l.ckptMemo.get()
	if memo == nil || memo.version != rt.v {
		rt.t.Fatalf("no memo of the checkpoint of %d", rt.v)
	}
	if verify {
		got, err := newTestLog(rt.t, rt.st, Options{}).Snapshot(ctx)
		if err != nil {
			rt.t.Fatal(err)
		}
		if got.CheckpointVersion() != rt.v {
			rt.t.Fatalf("snapshot from checkpoint %d, want %d", got.CheckpointVersion(), rt.v)
		}
		assertSameSnapshot(rt.t, got, rt.snap)
	}
	data, err := rt.st.Read(ctx, CheckpointPath(rt.v))
	if err != nil {
		rt.t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		rt.t.Fatal(err)
	}
	return memo, f
}

// TestCheckpointReusesUnchangedRowGroups: after a full checkpoint, one
// after appends encodes only the new adds (the other groups are copied),
// and every checkpoint, through removes, re-adds of a path (with and
// without a remove), txns, domains and a metadata change, loads as exactly
// the snapshot it was written from. Without the identity check (a group
// reused though one of its files was re-added) the reloaded snapshot
// differs; without the reuse, encodedAdds is every file.
func TestCheckpointReusesUnchangedRowGroups(t *testing.T) {
	rt := newReuseTable(t, 300, 64)
	memo, _ := rt.checkpoint()
	if memo.encodedAdds != 300 {
		t.Fatalf("first checkpoint encoded %d adds, want all 300", memo.encodedAdds)
	}
	rt.append(3)
	rt.append(3)
	memo, f := rt.checkpoint()
	if memo.encodedAdds != 6 {
		t.Errorf("checkpoint after 6 appends encoded %d adds, want 6", memo.encodedAdds)
	}
	// header group, 4 full groups of 64, the 44 rest, the 6 new
	if n := len(f.RowGroups()); n != 7 {
		t.Errorf("%d row groups, want 7", n)
	}

	ts := reuseNow().UnixMilli()
	old := rt.snap.Files()
	rt.commit(Action{Remove: &Remove{Path: old[10].Path, DataChange: true, DeletionTimestamp: &ts}})
	rt.checkpoint()
	// a remove and an add of the same path in one commit (a new *Add)
	re := *old[100]
	re.Size++
	rt.commit(Action{Remove: &Remove{Path: old[100].Path, DataChange: true, DeletionTimestamp: &ts}}, Action{Add: &re})
	rt.checkpoint()
	// an add of a live path without a remove
	re2 := *old[200]
	re2.Stats = `{"numRecords":99}`
	rt.commit(Action{Add: &re2})
	memo, _ = rt.checkpoint()
	if memo.encodedAdds >= int64(rt.snap.NumFiles()) {
		t.Errorf("a re-add encoded all %d adds", memo.encodedAdds)
	}
	rt.commit(Action{Txn: &Txn{AppID: "app", Version: 3}}, Action{DomainMetadata: &DomainMetadata{Domain: "user.d", Configuration: "x"}})
	rt.append(1)
	rt.checkpoint()
	for range 20 {
		rt.append(2)
		rt.checkpoint()
	}
	md := rt.snap.Metadata()
	md.Configuration = map[string]string{"user.k": "v"}
	rt.commit(Action{MetaData: &md})
	memo, _ = rt.checkpoint()
	if memo.encodedAdds != int64(rt.snap.NumFiles()) {
		t.Errorf("checkpoint after a metadata change encoded %d of %d adds", memo.encodedAdds, rt.snap.NumFiles())
	}
	rt.append(1)
	memo, _ = rt.checkpoint()
	if memo.encodedAdds != 1 {
		t.Errorf("checkpoint after 1 append encoded %d adds, want 1", memo.encodedAdds)
	}
}

// TestCheckpointReuseBoundsRowGroups: 400 checkpoints of a 1,000-file
// table, one after each one-file append, keep at most N/perChunk +
// log2(N) + 3 row groups (the carry of checkpoint_reuse.go), and encode
// few adds in all (without the reuse: 400 times every file). Without the
// carry the file would gain a row group per checkpoint.
func TestCheckpointReuseBoundsRowGroups(t *testing.T) {
	const perChunk = 256
	rt := newReuseTable(t, 1000, perChunk)
	rt.checkpoint()
	var encoded, full int64
	for i := range 400 {
		rt.append(1)
		memo, f := rt.checkpointVerify(i%50 == 49)
		encoded += memo.encodedAdds
		n := rt.snap.NumFiles()
		full += int64(n)
		limit := (n+perChunk-1)/perChunk + bits.Len(uint(n)) + 3
		if g := len(f.RowGroups()); g > limit {
			t.Fatalf("checkpoint %d of %d files has %d row groups, more than %d", i, n, g, limit)
		}
	}
	if encoded*10 > full {
		t.Errorf("encoded %d adds in 400 checkpoints, more than a tenth of %d", encoded, full)
	}
}

// TestCheckpointReuseIgnoresStore: the bytes copied are those the Log
// wrote, not the file on the store: another writer's checkpoint of the
// same version, laid out differently, does not change the next one.
func TestCheckpointReuseIgnoresStore(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 200, 50)
	rt.append(2)
	rt.checkpoint()
	other := newTestLog(t, rt.st, Options{CheckpointRowsPerChunk: 7, Now: reuseNow})
	if _, err := other.Checkpoint(ctx, rt.snap); err != nil {
		t.Fatal(err)
	}
	rt.append(2)
	memo, _ := rt.checkpoint()
	// the 2 new and the carried 2 of the group after the 4 of 50
	if memo.encodedAdds != 4 {
		t.Errorf("encoded %d adds, want 4", memo.encodedAdds)
	}
}

// parquetCopiedChunks is parquet-go's count of column chunks its
// Writer.WriteRowGroup copied verbatim (writer_copy.go, copyPathCounter,
// kept "so tests can assert that the L0 fast path was taken").
//
//go:linkname parquetCopiedChunks github.com/parquet-go/parquet-go.copyPathCounter
var parquetCopiedChunks atomic.Int64

// TestCheckpointReuseCopiesVerbatim: the groups a checkpoint reuses take
// parquet-go's verbatim copy (every column chunk of each), not its decode
// and re-encode path (which would write the same rows).
func TestCheckpointReuseCopiesVerbatim(t *testing.T) {
	rt := newReuseTable(t, 1000, 300)
	rt.checkpoint()
	rt.append(1)
	rt.append(1)
	before := parquetCopiedChunks.Load()
	memo, f := rt.checkpoint()
	if memo.encodedAdds != 2 {
		t.Fatalf("encoded %d adds, want 2", memo.encodedAdds)
	}
	// header, 3 full groups of 300 and the 100 rest (copied), the 2 new
	if got, want := parquetCopiedChunks.Load()-before, int64(4*len(f.Schema().Columns())); got != want {
		t.Errorf("%d column chunks copied verbatim, want %d", got, want)
	}
}

// BenchmarkCheckpointAfterAppends is the checkpoint a blind appender
// writes every 10 versions: a 10,000-file table checkpointed at v, then 10
// one-file appends, then the checkpoint of v+10, with the memo of v's
// checkpoint (reuse) and without (full, the rewrite of every add); read
// loads the table from each (the reused one's adds are not in key order
// across row groups).
func BenchmarkCheckpointAfterAppends(b *testing.B) {
	ctx := context.Background()
	rt := newReuseTable(b, 10_000, 10_000)
	if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
		b.Fatal(err)
	}
	memo := rt.l.ckptMemo.get()
	for range 10 {
		rt.append(1)
	}
	for _, mode := range []string{"reuse", "full"} {
		b.Run("write/"+mode, func(b *testing.B) {
			for b.Loop() {
				rt.l.ckptMemo.memo = nil
				if mode == "reuse" {
					rt.l.ckptMemo.memo = memo
				}
				if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
					b.Fatal(err)
				}
			}
			if got := rt.l.ckptMemo.get().encodedAdds; mode == "reuse" && got != 10 {
				b.Fatalf("encoded %d adds, want 10", got)
			}
		})
		b.Run("read/"+mode, func(b *testing.B) {
			l := newTestLog(b, rt.st, Options{})
			for b.Loop() {
				s, err := l.Snapshot(ctx)
				if err != nil || s.NumFiles() != 10_010 {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReplayCheckpointRuns: the adds and removes of a checkpoint replay as
// in log order (an add sets the file, a remove drops it) whatever their
// order: ascending (one run), in sorted runs (a checkpoint with copied row
// groups, with duplicates across runs and removes between them), and in
// no order (the spill to over). Random sequences over a few keys against
// that model.
func TestReplayCheckpointRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		var acts []Action
		nKeys := 1 + rng.IntN(12)
		runs := 1 + rng.IntN(5)
		for range runs {
			// an ascending run of adds, then maybe removes
			k := rng.IntN(3)
			for k < nKeys {
				acts = append(acts, Action{Add: &Add{Path: fmt.Sprintf("f%02d", k), Size: int64(len(acts))}})
				k += 1 + rng.IntN(3)
			}
			for range rng.IntN(3) {
				acts = append(acts, Action{Remove: &Remove{Path: fmt.Sprintf("f%02d", rng.IntN(nKeys))}})
			}
		}
		if iter%7 == 0 {
			rng.Shuffle(len(acts), func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
		}
		want := map[string]int64{}
		for _, a := range acts {
			if a.Add != nil {
				want[a.Add.Path] = a.Add.Size
			} else {
				delete(want, a.Remove.Path)
			}
		}
		r := newReplayer(parseTableRoot(""))
		r.inCheckpoint = true
		for i := range acts {
			if err := r.apply(&acts[i]); err != nil {
				t.Fatal(err)
			}
		}
		r.endCheckpoint()
		got := map[string]int64{}
		var prev string
		for k, a := range r.files().all() {
			if k.path <= prev && prev != "" {
				t.Fatalf("files out of order: %q after %q", k.path, prev)
			}
			prev = k.path
			got[k.path] = a.Size
		}
		if !maps.Equal(got, want) {
			t.Fatalf("iteration %d: files %v, want %v (actions %s)", iter, got, want, describe(acts))
		}
	}
}

func describe(acts []Action) string {
	var b bytes.Buffer
	for _, a := range acts {
		if a.Add != nil {
			fmt.Fprintf(&b, "+%s ", a.Add.Path)
		} else {
			fmt.Fprintf(&b, "-%s ", a.Remove.Path)
		}
	}
	return b.String()
}

// TestCheckpointMemoDroppedPastTheCap: a checkpoint larger than the memo
// cap leaves no memo (not the older, smaller one, whose bytes would stay
// held and whose groups would keep being copied while some of its adds
// live), and the next checkpoint is a full rewrite that loads exactly.
func TestCheckpointMemoDroppedPastTheCap(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 300, 32)
	first, _ := rt.checkpoint()
	// The cap sits between this checkpoint's size and the next one's.
	rt.l.ckptMemo.maxBytes = first.file.Size() + 1
	rt.append(200)
	if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
		t.Fatal(err)
	}
	if m := rt.l.ckptMemo.get(); m != nil {
		t.Fatalf("memo of version %d kept after a checkpoint past the %d-byte cap", m.version, rt.l.ckptMemo.maxBytes)
	}
	rt.l.ckptMemo.maxBytes = ckptMemoMaxBytes
	rt.append(1)
	memo, _ := rt.checkpoint()
	if n := int64(rt.snap.NumFiles()); memo.encodedAdds != n {
		t.Errorf("checkpoint after the dropped memo encoded %d adds, want all %d", memo.encodedAdds, n)
	}
}
