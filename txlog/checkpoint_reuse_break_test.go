package txlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/storage/faultstore"
)

// breakTable is a table in a memStore whose commits the test writes
// directly, followed by a Log whose clock the test moves.
type breakTable struct {
	t     *testing.T
	st    *memStore
	l     *Log
	snap  *Snapshot
	v     int64
	clock time.Time
	opts  Options
}

func (bt *breakTable) now() time.Time { return bt.clock }

func (bt *breakTable) commit(acts ...Action) {
	bt.t.Helper()
	bt.v++
	b, err := EncodeCommit(acts)
	if err != nil {
		bt.t.Fatal(err)
	}
	bt.st.put(CommitPath(bt.v), string(b))
	bt.snap, err = bt.l.Update(context.Background(), bt.snap)
	if err != nil || bt.snap.Version() != bt.v {
		bt.t.Fatalf("update to %d: %v", bt.v, err)
	}
}

// fullRewrite writes the checkpoint of version v in a copy of the store
// holding only its commits, by a fresh Log (no memo: nothing reused) with
// the same clock, and returns the snapshot a third Log loads from it.
func (bt *breakTable) fullRewrite(ctx context.Context) *Snapshot {
	bt.t.Helper()
	cp := newMemStore()
	for p, b := range bt.st.objects("_delta_log/") {
		if strings.HasSuffix(p, ".json") && !strings.Contains(p, "_last_checkpoint") {
			cp.putBytes(p, b)
		}
	}
	opts := bt.opts
	l := newTestLog(bt.t, cp, opts)
	s, err := l.Snapshot(ctx)
	if err != nil || s.Version() != bt.v || s.CheckpointVersion() >= 0 {
		bt.t.Fatalf("JSON-only snapshot %d (checkpoint %d): %v", s.Version(), s.CheckpointVersion(), err)
	}
	if _, err := l.Checkpoint(ctx, s); err != nil {
		bt.t.Fatal(err)
	}
	got, err := newTestLog(bt.t, cp, opts).Snapshot(ctx)
	if err != nil || got.CheckpointVersion() != bt.v {
		bt.t.Fatalf("full rewrite snapshot from checkpoint %d: %v", got.CheckpointVersion(), err)
	}
	return got
}

// TestCheckpointReuseRandomModel: random sequences of appends (partition
// values incl. null, tags, row tracking fields, clusteringProvider, stats
// sometimes past parquet-mr's 4096-byte statistics limit), removes, re-adds
// of a live path with other stats (with and without a remove), deletion
// vectors added to a file (the key changes), OPTIMIZE-like rewrites, txns,
// domains set and removed, metadata and protocol changes and a clock that
// jumps past the tombstone retention, with checkpoints at random points by
// one Log (reusing its last checkpoint's row groups). Every checkpoint must
// load in a fresh Log as exactly the snapshot a fresh Log's full rewrite of
// the same version loads as, and its live files as the writer's snapshot's;
// every column chunk's statistics and column index must bound its values.
func TestCheckpointReuseRandomModel(t *testing.T) {
	seeds := 4
	steps := 100
	if testing.Short() {
		seeds, steps = 3, 60
	}
	var reusedTotal, ckpts int
	for seed := range seeds {
		r, c := runReuseModel(t, uint64(seed), steps)
		reusedTotal += r
		ckpts += c
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
	if reusedTotal == 0 {
		t.Fatalf("no checkpoint of %d reused a row group: the test tests nothing", ckpts)
	}
	t.Logf("%d checkpoints, %d copied adds", ckpts, reusedTotal)
}

func runReuseModel(t *testing.T, seed uint64, steps int) (reused, ckpts int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 0xb4e))
	bt := &breakTable{t: t, st: newMemStore(), clock: time.UnixMilli(1_700_000_000_000)}
	bt.opts = Options{CheckpointRowsPerChunk: 4 + rng.IntN(12), DisableAutoCheckpoint: true, Now: bt.now}
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	md := Metadata{ID: "brk", Format: Format{Provider: "parquet"}, SchemaString: schema, PartitionColumns: []string{"p"},
		Configuration: map[string]string{PropDeletedFileRetentionDuration: "interval 1 hours"}}
	b, err := EncodeCommit([]Action{{Protocol: &p}, {MetaData: &md}})
	if err != nil {
		t.Fatal(err)
	}
	bt.st.put(CommitPath(0), string(b))
	bt.l = newTestLog(t, bt.st, bt.opts)
	if bt.snap, err = bt.l.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	rowID := int64(0)
	n := 0
	newAdd := func() *Add {
		n++
		var pv *string
		if rng.IntN(5) > 0 {
			s := fmt.Sprint(rng.IntN(4))
			if rng.IntN(8) == 0 {
				s = strings.Repeat("z", 3000+rng.IntN(3000)) // a huge partition value
			}
			pv = &s
		}
		name := fmt.Sprintf("f-%08x-%d.parquet", rng.Uint32(), n)
		path := "p=__HIVE_DEFAULT_PARTITION__/" + name
		if pv != nil {
			path = "p=" + (*pv)[:min(len(*pv), 8)] + "/" + name
		}
		stats := fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, 1+rng.IntN(100), rng.IntN(50), 50+rng.IntN(50))
		if rng.IntN(10) == 0 {
			stats = fmt.Sprintf(`{"numRecords":1,"minValues":{"s":"%s"}}`, strings.Repeat("a", 5000+rng.IntN(2000)))
		}
		a := &Add{Path: path, Size: int64(rng.IntN(1 << 20)), ModificationTime: bt.clock.UnixMilli(), DataChange: true,
			PartitionValues: map[string]*string{"p": pv}, Stats: stats}
		if rng.IntN(3) == 0 {
			a.Tags = map[string]string{"INSERTION_TIME": fmt.Sprint(rng.IntN(1000)), "k": strings.Repeat("t", rng.IntN(10))}
		}
		if bt.snap.Protocol().MinWriterVersion == 7 {
			base, dv := rowID, bt.v+1
			rowID += 100
			a.BaseRowID, a.DefaultRowCommitVersion = &base, &dv
			if rng.IntN(2) == 0 {
				a.ClusteringProvider = "liquid"
			}
		}
		return a
	}
	ts := func() *int64 { x := bt.clock.UnixMilli(); return &x }
	rmOf := func(a *Add, dataChange bool) Action {
		size := a.Size
		ext := true
		return Action{Remove: &Remove{Path: a.Path, DeletionTimestamp: ts(), DataChange: dataChange, ExtendedFileMetadata: &ext,
			PartitionValues: a.PartitionValues, Size: &size, Tags: a.Tags, DeletionVector: a.DeletionVector,
			BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion}}
	}
	pick := func() *Add {
		fs := bt.snap.Files()
		if len(fs) == 0 {
			return nil
		}
		return fs[rng.IntN(len(fs))]
	}
	domains := []string{"user.a", "user.b", "delta.clustering"}
	for step := range steps {
		var acts []Action
		switch op := rng.IntN(20); {
		case op < 7: // append
			for range 1 + rng.IntN(6) {
				acts = append(acts, Action{Add: newAdd()})
			}
		case op < 9: // remove
			if a := pick(); a != nil {
				acts = append(acts, rmOf(a, true))
			}
		case op < 10: // re-add of a live path with other stats, no remove
			if a := pick(); a != nil {
				re := *a
				re.Stats = fmt.Sprintf(`{"numRecords":%d}`, rng.IntN(1000))
				acts = append(acts, Action{Add: &re})
			}
		case op < 11: // remove and re-add in one commit
			if a := pick(); a != nil {
				re := *a
				re.Size++
				acts = append(acts, rmOf(a, true), Action{Add: &re})
			}
		case op < 12: // a deletion vector for a file (a new key)
			if a := pick(); a != nil && bt.snap.Protocol().MinReaderVersion == 3 {
				re := *a
				off := int32(1 + rng.IntN(100))
				re.DeletionVector = &DeletionVector{StorageType: "u", PathOrInlineDV: fmt.Sprintf("ab^-aqEH.-t@S}K{vb[*k%04d", rng.IntN(10000)), Offset: &off, SizeInBytes: 36, Cardinality: 1 + rng.Int64N(5)}
				re.DataChange = true
				acts = append(acts, rmOf(a, true), Action{Add: &re})
			}
		case op < 13: // OPTIMIZE-like: k files into one
			fs := bt.snap.Files()
			if len(fs) >= 3 {
				k := 2 + rng.IntN(min(6, len(fs)-1))
				for _, i := range rng.Perm(len(fs))[:k] {
					acts = append(acts, rmOf(fs[i], false))
				}
				a := newAdd()
				a.DataChange = false
				acts = append(acts, Action{Add: a})
			}
		case op < 14: // txn
			acts = append(acts, Action{Txn: &Txn{AppID: fmt.Sprint("app", rng.IntN(3)), Version: int64(step), LastUpdated: ptr(bt.clock.UnixMilli())}})
		case op < 15: // domain set or removed
			d := domains[rng.IntN(len(domains))]
			acts = append(acts, Action{DomainMetadata: &DomainMetadata{Domain: d, Configuration: fmt.Sprint(step), Removed: rng.IntN(3) == 0}})
		case op < 16: // metadata change
			m := bt.snap.Metadata()
			cfg := map[string]string{}
			for k, v := range m.Configuration {
				cfg[k] = v
			}
			cfg["user.k"] = fmt.Sprint(step)
			m.Configuration = cfg
			acts = append(acts, Action{MetaData: &m})
		case op < 17: // protocol upgrade to table features, once
			if bt.snap.Protocol().MinWriterVersion != 7 {
				acts = append(acts, Action{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
					ReaderFeatures: []string{"deletionVectors"},
					WriterFeatures: []string{"deletionVectors", "rowTracking", "domainMetadata", "clustering"}}})
			}
		default: // clock: minutes, or past the retention
			if rng.IntN(3) == 0 {
				bt.clock = bt.clock.Add(2 * time.Hour)
			} else {
				bt.clock = bt.clock.Add(time.Duration(rng.IntN(30)) * time.Minute)
			}
		}
		if len(acts) > 0 {
			bt.commit(acts...)
		}
		if rng.IntN(4) == 0 && bt.v > 0 && bt.snap.CheckpointVersion() != bt.v {
			ckpts++
			if _, err := bt.l.Checkpoint(ctx, bt.snap); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			memo := bt.l.ckptMemo.get()
			if memo == nil || memo.version != bt.v {
				t.Fatalf("seed %d: no memo of %d", seed, bt.v)
			}
			reused += bt.snap.NumFiles() - int(memo.encodedAdds)
			got, err := newTestLog(t, bt.st, bt.opts).Snapshot(ctx)
			if err != nil || got.CheckpointVersion() != bt.v {
				t.Fatalf("seed %d v %d: load: checkpoint %d, %v", seed, bt.v, got.CheckpointVersion(), err)
			}
			want := bt.fullRewrite(ctx)
			if t.Failed() {
				return
			}
			before := t.Failed()
			assertSameSnapshot(t, got, want)
			gf, _ := EncodeCommit(addsOf(got))
			wf, _ := EncodeCommit(addsOf(bt.snap))
			if string(gf) != string(wf) {
				t.Errorf("files differ from the writer's snapshot")
			}
			data, err := bt.st.Read(ctx, CheckpointPath(bt.v))
			if err != nil {
				t.Fatal(err)
			}
			checkChunkStats(t, data)
			if !before && t.Failed() {
				t.Logf("seed %d version %d (perChunk %d, %d files, %d encoded)", seed, bt.v, bt.opts.CheckpointRowsPerChunk, bt.snap.NumFiles(), memo.encodedAdds)
				return
			}
			// sometimes continue from the loaded snapshot (no pointers shared)
			if rng.IntN(8) == 0 {
				bt.snap = got
			}
		}
	}
	return reused, ckpts
}

func addsOf(s *Snapshot) []Action {
	var acts []Action
	for _, a := range s.Files() {
		acts = append(acts, Action{Add: a})
	}
	return acts
}

// checkChunkStats checks that each column chunk's statistics (when it has
// min and max) and each page's column index bounds bound the chunk's
// non-null values, so that no reader skips a row group or page holding a
// matching row.
func checkChunkStats(t *testing.T, data []byte) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	leaves := f.Schema().Columns()
	for gi, rg := range f.RowGroups() {
		meta := f.Metadata().RowGroups[gi]
		for ci, cc := range rg.ColumnChunks() {
			typ := cc.Type()
			var lo, hi parquet.Value
			pages := cc.Pages()
			var pageMins, pageMaxs []parquet.Value
			var pageNulls []bool
			for {
				pg, err := pages.ReadPage()
				if err != nil {
					break
				}
				mn, mx, ok := pg.Bounds()
				pageNulls = append(pageNulls, !ok)
				if ok {
					pageMins = append(pageMins, mn.Clone())
					pageMaxs = append(pageMaxs, mx.Clone())
					if lo.IsNull() || typ.Compare(mn, lo) < 0 {
						lo = mn.Clone()
					}
					if hi.IsNull() || typ.Compare(mx, hi) > 0 {
						hi = mx.Clone()
					}
				} else {
					pageMins = append(pageMins, parquet.Value{})
					pageMaxs = append(pageMaxs, parquet.Value{})
				}
				parquet.Release(pg)
			}
			pages.Close()
			name := strings.Join(leaves[ci], ".")
			st := meta.Columns[ci].MetaData.Statistics
			if !lo.IsNull() && (len(st.MinValue) > 0 || len(st.MaxValue) > 0) {
				smin := typ.Kind().Value(st.MinValue)
				smax := typ.Kind().Value(st.MaxValue)
				if typ.Compare(smin, lo) > 0 || typ.Compare(smax, hi) < 0 {
					t.Errorf("row group %d column %s: statistics [%.40q, %.40q] do not bound values [%.40q, %.40q]", gi, name, smin, smax, lo, hi)
				}
			}
			idx, err := cc.ColumnIndex()
			if err != nil || idx == nil {
				continue
			}
			if idx.NumPages() != len(pageNulls) {
				t.Errorf("row group %d column %s: column index of %d pages, chunk has %d", gi, name, idx.NumPages(), len(pageNulls))
				continue
			}
			for i := range pageNulls {
				if pageNulls[i] {
					continue
				}
				if idx.NullPage(i) {
					t.Errorf("row group %d column %s page %d: column index says null page, page has values", gi, name, i)
					continue
				}
				if typ.Compare(idx.MinValue(i), pageMins[i]) > 0 || typ.Compare(idx.MaxValue(i), pageMaxs[i]) < 0 {
					t.Errorf("row group %d column %s page %d: column index [%.40q, %.40q] does not bound [%.40q, %.40q]", gi, name, i, idx.MinValue(i), idx.MaxValue(i), pageMins[i], pageMaxs[i])
				}
			}
		}
	}
}

// TestCheckpointReuseConcurrentLogs: two Logs of one table, each following
// the commits a third goroutine lands and checkpointing its own snapshot
// (often the same version as the other, overwriting its file with other
// row groups), both reusing their own last checkpoint. After every round
// the table loads, from whichever checkpoint _last_checkpoint names, as
// the JSON log's snapshot; each Log's memo copies only its own bytes, so
// an overwrite by the other Log corrupts nothing. Run under -race.
func TestCheckpointReuseConcurrentLogs(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 200, 16)
	logs := []*Log{
		newTestLog(t, rt.st, Options{CheckpointRowsPerChunk: 16, DisableAutoCheckpoint: true, Now: reuseNow}),
		newTestLog(t, rt.st, Options{CheckpointRowsPerChunk: 16, DisableAutoCheckpoint: true, Now: reuseNow}),
	}
	snaps := make([]*Snapshot, len(logs))
	for i, l := range logs {
		s, err := l.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snaps[i] = s
	}
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	var encoded, files int64
	for round := range rounds {
		done := make(chan error, len(logs))
		for i, l := range logs {
			go func() {
				s, err := l.Update(ctx, snaps[i])
				if err == nil {
					snaps[i] = s
					_, err = l.Checkpoint(ctx, s)
				}
				done <- err
			}()
		}
		// a commit lands while they checkpoint
		rt.append(1 + round%3)
		if round%5 == 4 {
			old := rt.snap.Files()
			ts := reuseNow().UnixMilli()
			rt.commit(Action{Remove: &Remove{Path: old[round].Path, DataChange: true, DeletionTimestamp: &ts}})
		}
		for range logs {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range logs {
			if m := l.ckptMemo.get(); m != nil && round > 0 {
				encoded += m.encodedAdds
				files += int64(len(m.index()))
			}
		}
		got, err := newTestLog(t, rt.st, Options{}).Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		assertSameSnapshot(t, got, rt.snap)
		for _, s := range snaps {
			c, err := newTestLog(t, rt.st, Options{}).SnapshotAt(ctx, s.Version())
			if err != nil {
				t.Fatal(err)
			}
			assertSameSnapshot(t, c, s)
		}
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
	if encoded >= files {
		t.Errorf("the Logs encoded %d of %d adds: no reuse", encoded, files)
	}
}

// TestCheckpointReuseFailedWrite: a reusing checkpoint whose publication
// fails (the object not written, or written with its answer lost) leaves
// _last_checkpoint naming the one before, the table loading as its
// snapshot, and the Log's memo at the last checkpoint it saw published;
// the next checkpoint still reuses and loads exactly.
func TestCheckpointReuseFailedWrite(t *testing.T) {
	for _, mode := range []faultstore.Mode{faultstore.FailBefore, faultstore.FailAfter} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			rt := newReuseTable(t, 300, 32)
			rt.checkpoint()
			rt.append(3)
			p := CheckpointPath(rt.v)
			if err := rt.st.Add(faultstore.Rule{Ops: faultstore.OpWriterClose, Path: p, Nth: 1, Mode: mode}); err != nil {
				t.Fatal(err)
			}
			if _, err := rt.l.Checkpoint(ctx, rt.snap); !errors.Is(err, faultstore.ErrInjected) {
				t.Fatalf("checkpoint of %d: %v, want the injected error", rt.v, err)
			}
			if m := rt.l.ckptMemo.get(); m == nil || m.version != 0 {
				t.Fatalf("memo after a failed checkpoint: %+v, want version 0's", m)
			}
			lc, err := rt.l.LastCheckpointHint(ctx)
			if err != nil || lc == nil || lc.Version != 0 {
				t.Fatalf("_last_checkpoint %+v, %v: want version 0", lc, err)
			}
			got, err := newTestLog(t, rt.st, Options{}).Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			assertSameSnapshot(t, got, rt.snap)
			rt.append(2)
			memo, _ := rt.checkpoint()
			if memo.encodedAdds >= int64(rt.snap.NumFiles()) {
				t.Errorf("the checkpoint after a failed one encoded all %d adds", memo.encodedAdds)
			}
		})
	}
}
