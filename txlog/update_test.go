package txlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// sameSnapshot fails unless a and b hold the same state in everything a
// reader or the next commit sees.
func sameSnapshot(t *testing.T, what string, a, b *Snapshot) {
	t.Helper()
	check := func(field string, x, y any) {
		t.Helper()
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: %s differs at version %d:\n  %v\n  %v", what, field, b.Version(), x, y)
		}
	}
	check("version", a.Version(), b.Version())
	check("protocol", a.Protocol(), b.Protocol())
	check("metadata", a.Metadata(), b.Metadata())
	check("properties", a.Properties(), b.Properties())
	check("files", a.Files(), b.Files())
	check("tombstones", a.Tombstones(), b.Tombstones())
	check("txns", a.TxnActions(), b.TxnActions())
	check("domains", a.Domains(), b.Domains())
	check("commitInfo", a.CommitInfo(), b.CommitInfo())
	check("timestamp", a.Timestamp(), b.Timestamp())
	check("size", a.SizeInBytes(), b.SizeInBytes())
	check("checksum state", a.crc, b.crc)
	check("files by path", filesByPath(a), filesByPath(b))
	check("unknown action", a.UnknownAction(), b.UnknownAction())
}

// filesByPath is what File answers for every live file.
func filesByPath(s *Snapshot) map[string]*Add {
	out := map[string]*Add{}
	for k := range s.files.all() {
		a, _ := s.File(k.path)
		out[k.path] = a
	}
	return out
}

// TestPostCommitSnapshotIsTheReplayedState: the snapshot a commit leaves
// in memory (advanced from the one it read, over winning commits it was
// rebased on) equals the one a reload replays from the log, after adds,
// removes, re-adds, deletion-vector replacements, txns, domains and a
// metadata change.
func TestPostCommitSnapshotIsTheReplayedState(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, newMemStore(), Options{DisableAutoCheckpoint: true})
	tx := l.Begin(nil)
	p := NewTableProtocol(testSchema)
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "tbl", Format: Format{Provider: "parquet"}, SchemaString: testSchema}},
		addAction("first", true))
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "new table post-commit", tx.PostCommitSnapshot(), snap)
	dv := func(id string) *DeletionVector {
		return &DeletionVector{StorageType: "i", PathOrInlineDV: id, SizeInBytes: 4, Cardinality: 1}
	}
	md := snap.Metadata()
	md.Configuration = map[string]string{PropCheckpointInterval: "3", PropAppendOnly: "nope"}
	steps := [][]Action{
		{addAction("a", true), addAction("b", true), {Txn: &Txn{AppID: "q", Version: 1}}},
		{removeAction("a", true), addAction("c", true)},
		{addAction("a", true), {DomainMetadata: &DomainMetadata{Domain: "d", Configuration: "{}"}}},
		{{Add: &Add{Path: "b", Size: 10, DataChange: true, DeletionVector: dv("0000")}}, {Remove: &Remove{Path: "b", DataChange: true}}},
		{{MetaData: &md}, {Txn: &Txn{AppID: "q", Version: 2}}},
		{{DomainMetadata: &DomainMetadata{Domain: "d", Removed: true}}, addAction("e%20f", true)},
	}
	for i, acts := range steps {
		// Every other step, a concurrent blind append wins first: the
		// transaction is rebased over it.
		tx := l.Begin(snap)
		if i%2 == 1 {
			other, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, l, other, addAction(fmt.Sprintf("other%d", i), true))
		}
		tx.SetIsolation(WriteSerializable)
		tx.Add(acts...)
		v, err := tx.Commit(ctx, "WRITE", nil, nil)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		post := tx.PostCommitSnapshot()
		if post == nil || post.Version() != v {
			t.Fatalf("step %d: post-commit snapshot %v for version %d", i, post, v)
		}
		reload, err := l.SnapshotAt(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, fmt.Sprintf("step %d post-commit", i), post, reload)
		up, err := l.Update(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, fmt.Sprintf("step %d update from %d", i, snap.Version()), up, reload)
		snap = post
	}
	if err := snap.Properties().Err(PropAppendOnly); err == nil {
		t.Errorf("appendOnly=nope: no error after the metadata change")
	}
}

// TestBlindAppendCostIsConstant counts the store calls of a blind append
// on a table of 1,000 versions by a writer holding the snapshot of its
// previous commit: nothing is listed, and the reads are a constant few
// (issue 22: the commit used to list _delta_log and replay from the
// checkpoint every time). Another writer's commit is then read alone.
func TestBlindAppendCostIsConstant(t *testing.T) {
	ctx := context.Background()
	mem := newMemStore()
	buildLog(t, mem, 1000)
	fs, err := faultstore.New(mem, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLog(t, fs, Options{DisableAutoCheckpoint: true})
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		fs.ResetCounts()
		cur, err := l.Update(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		tx := l.Begin(cur)
		tx.Add(addAction(fmt.Sprintf("new%d", i), true))
		v, err := tx.Commit(ctx, "WRITE", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := fs.Counts()
		reads := c.Read + c.RangeRead + c.Stat
		if c.List != 0 || reads > 4 || c.PutIfAbsent != 1 || c.Put > 1 {
			t.Fatalf("append %d at version %d: %+v; want no list, at most 4 reads/stats, 1 put-if-absent, at most 1 put (.crc)", i, v, c)
		}
		snap = tx.PostCommitSnapshot()
	}
	// Another writer commits twice: Update reads those two commits.
	other := newTestLog(t, mem, Options{DisableAutoCheckpoint: true})
	for i := range 2 {
		s, err := other.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustCommit(t, other, s, addAction(fmt.Sprintf("theirs%d", i), true))
	}
	fs.ResetCounts()
	up, err := l.Update(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if c := fs.Counts(); c.List != 0 || c.Read != 3 || up.Version() != snap.Version()+2 {
		t.Fatalf("update over 2 commits: version %d (from %d), %+v; want 3 reads (2 commits and the miss), no list", up.Version(), snap.Version(), c)
	}
	reload, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if up.NumFiles() != reload.NumFiles() || up.Version() != reload.Version() {
		t.Fatalf("update: %d files at %d, reload %d files at %d", up.NumFiles(), up.Version(), reload.NumFiles(), reload.Version())
	}
}

// TestUpdateAfterCleanupReloads: when the held snapshot's commit file was
// deleted by log cleanup, its successors may be gone too; Update loads
// the latest snapshot instead of taking the first missing version as the
// end of the log.
func TestUpdateAfterCleanupReloads(t *testing.T) {
	ctx := context.Background()
	mem, l, old, _ := heldBehindCheckpoint(t)
	for v := int64(0); v < 29; v++ {
		if err := mem.Delete(ctx, CommitPath(v)); err != nil {
			t.Fatal(err)
		}
	}
	up, err := l.Update(ctx, old)
	if err != nil || up.Version() != 29 {
		t.Fatalf("update from 5 after cleanup: %v, %v; want version 29", up, err)
	}
}

// TestUpdateSeesATableRecreatedAtItsPath: a long-lived writer holds the
// snapshot of version 3; the table is deleted (rm -r) and created again at
// the same path. Whether the new table is behind, level with or past
// version 3, Update returns the new table's state, never the old table's
// files with the new table's commits applied over them (a checkpoint of
// that mixed state would reference the deleted table's files).
func TestUpdateSeesATableRecreatedAtItsPath(t *testing.T) {
	for _, newVersions := range []int{2, 4, 7} {
		t.Run(fmt.Sprintf("recreated with %d versions", newVersions), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st, err := storage.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
			held := createTable(t, l)
			for i := range 3 {
				tx := l.Begin(held)
				tx.Add(addAction(fmt.Sprintf("old%d", i), true))
				if _, err := tx.Commit(ctx, "WRITE", nil, nil); err != nil {
					t.Fatal(err)
				}
				held = tx.PostCommitSnapshot()
			}
			if held.Version() != 3 {
				t.Fatalf("held version %d", held.Version())
			}
			if err := os.RemoveAll(filepath.Join(dir, LogDir)); err != nil {
				t.Fatal(err)
			}
			other := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
			s := createTable(t, other)
			for i := 1; i < newVersions; i++ {
				mustCommit(t, other, s, addAction(fmt.Sprintf("new%d", i), true))
				if s, err = other.Snapshot(ctx); err != nil {
					t.Fatal(err)
				}
			}
			want, err := other.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			up, err := l.Update(ctx, held)
			if err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, "update after recreate", up, want)
			// And again from a snapshot a full load built (its commit
			// file's identity comes from the listing, not a Stat).
			loaded, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := l.Update(ctx, loaded); err != nil || again != loaded {
				t.Fatalf("update of a fresh load: %v, %v; want the same snapshot", again, err)
			}
		})
	}
}

// TestUpdateRacingCleanup: log cleanup deletes the held snapshot's commit
// and its successors between Update's check of the held commit and its
// read of the next one. The missing successor is not the end of the log:
// Update must not answer the held version as the latest (a commit from it
// would land at version 6 of a table at version 29, hidden behind the
// checkpoint: a lost write).
func TestUpdateRacingCleanup(t *testing.T) {
	ctx := context.Background()
	mem, l, held, _ := heldBehindCheckpoint(t)
	// Cleanup runs (oldest first, as Cleanup deletes) as Update reads 6.
	err := mem.Add(faultstore.Rule{Ops: faultstore.OpRead, Path: CommitPath(6), Nth: 1, Mode: faultstore.Call,
		Func: func(faultstore.Op, string) {
			for v := int64(0); v < 29; v++ {
				if err := mem.mem.Delete(ctx, CommitPath(v)); err != nil {
					t.Error(err)
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	up, err := l.Update(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	if up.Version() != 29 {
		t.Fatalf("update from 5 racing cleanup: version %d, want 29", up.Version())
	}
	if v := mustCommit(t, l, up, addAction("mine", true)); v != 30 {
		t.Fatalf("commit after the update at version %d, want 30", v)
	}
}

// TestLostRaceReadsOnlyTheWinners counts the store calls of a commit that
// loses the race to three commits of another writer: the winners are read
// one by one (and the version after them looked up), nothing is listed
// (issue 22: the loser listed _delta_log, which on local disk reads every
// entry of the directory, and a listing taken while others commit can miss
// a file created before one it sees, which read as a hole: a false
// CorruptLogError with 4 writers on a 10,000-version table).
func TestLostRaceReadsOnlyTheWinners(t *testing.T) {
	ctx := context.Background()
	mem := newMemStore()
	buildLog(t, mem, 200)
	fs, err := faultstore.New(mem, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLog(t, fs, Options{DisableAutoCheckpoint: true, DisableChecksumFile: true})
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := newTestLog(t, mem, Options{DisableAutoCheckpoint: true})
	for i := range 3 {
		s, err := other.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustCommit(t, other, s, addAction(fmt.Sprintf("theirs%d", i), true))
	}
	fs.ResetCounts()
	tx := l.Begin(snap)
	tx.Add(addAction("ours", true))
	v, err := tx.Commit(ctx, "WRITE", nil, nil)
	if err != nil || v != snap.Version()+4 {
		t.Fatalf("commit after 3 winners: version %d, %v; want %d", v, err, snap.Version()+4)
	}
	c := fs.Counts()
	// 3 winners read and the miss after them; a stat of the version after
	// the miss (a hole?) and of the commit written (post-commit snapshot).
	if c.List != 0 || c.Read+c.RangeRead != 4 || c.Stat != 2 || c.PutIfAbsent != 2 {
		t.Fatalf("lost race to 3 commits: %+v; want no list, 4 reads, 2 stats, 2 put-if-absent", c)
	}
	post := tx.PostCommitSnapshot()
	reload, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after the lost race", post, reload)
}

// heldBehindCheckpoint builds a 30-version log (buildLog) with a checkpoint
// at 29 and returns its store, log, the snapshot at version 5 and the one
// at 29: the state of a writer far behind when log cleanup runs.
func heldBehindCheckpoint(t *testing.T) (mem *memStore, l *Log, held, latest *Snapshot) {
	t.Helper()
	ctx := context.Background()
	mem = newMemStore()
	buildLog(t, mem, 30)
	l = newTestLog(t, mem, Options{DisableAutoCheckpoint: true})
	held, err := l.SnapshotAt(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if latest, err = l.SnapshotAt(ctx, 29); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(ctx, latest); err != nil {
		t.Fatal(err)
	}
	return mem, l, held, latest
}
