package txlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// These tests run the log against the real stores of storage (mem
// and local directory) and the fault-injecting wrapper.

func openStore(t *testing.T, url string) storage.Store {
	t.Helper()
	st, err := storage.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestRealStoresConcurrentCommits(t *testing.T) {
	for name, url := range map[string]string{"mem": "mem://txlog-" + uuid.NewString(), "local": t.TempDir()} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, url)
			l := newTestLog(t, st, Options{})
			s0 := createTable(t, l)
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 10 {
						tx := l.Begin(s0)
						tx.Add(addAction(fmt.Sprintf("w%d/f%d.parquet", w, i), true))
						if _, err := tx.Commit(ctx, "WRITE", nil, nil); err != nil {
							errs <- err
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			s, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.Version() != 40 || s.NumFiles() != 40 || s.CheckpointVersion() != 40 {
				t.Fatalf("version %d files %d checkpoint %d", s.Version(), s.NumFiles(), s.CheckpointVersion())
			}
			if key, err := s.FileKey(s.Files()[0].Path); err != nil || key != "w0/f0.parquet" {
				t.Errorf("key %q %v", key, err)
			}
		})
	}
}

// A PutIfAbsent that lands but loses its answer is resolved by reading the
// commit back (our txnId): success, no second commit.
func TestFaultstoreCommitAnswerLost(t *testing.T) {
	ctx := context.Background()
	inner := openStore(t, "mem://txlog-"+uuid.NewString())
	fs, err := faultstore.New(inner, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLog(t, fs, Options{})
	s0 := createTable(t, l)
	if err := fs.Add(faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Path: CommitPath(1), Mode: faultstore.FailAfter}); err != nil {
		t.Fatal(err)
	}
	tx := l.Begin(s0)
	tx.Add(addAction("x", true))
	v, err := tx.Commit(ctx, "WRITE", nil, nil)
	if err != nil || v != 1 {
		t.Fatalf("v=%d err=%v", v, err)
	}
	s, _ := l.Snapshot(ctx)
	if s.Version() != 1 || s.CommitInfo().TxnID() != tx.TxnID() {
		t.Errorf("version %d txnId %q", s.Version(), s.CommitInfo().TxnID())
	}
	// answer lost and the read-back fails too: ErrCommitStateUnknown.
	fs.Clear()
	if err := fs.Add(faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Path: CommitPath(2), Mode: faultstore.FailAfter},
		faultstore.Rule{Ops: faultstore.OpRead | faultstore.OpRangeRead, Path: CommitPath(2), Mode: faultstore.FailBefore}); err != nil {
		t.Fatal(err)
	}
	tx = l.Begin(s)
	tx.Add(addAction("y", true))
	if _, err := tx.Commit(ctx, "WRITE", nil, nil); !errors.Is(err, ErrCommitStateUnknown) {
		t.Fatalf("err = %v", err)
	}
}

// TestCrashDuringCommitAndCheckpoint crashes a commit that also writes the
// automatic checkpoint at each of its named crash points (commit,
// checksum, checkpoint, last-checkpoint; the set must be exactly these), before the
// step and after it (performed, its answer lost, the process dead). After
// each crash the reopened table is at the state before or after the
// commit (after, if the commit reported success), every version replays
// to its own state (a .crc left behind validates it), and a rerun of the
// checkpoint completes.
func TestCrashDuringCommitAndCheckpoint(t *testing.T) {
	ctx := context.Background()
	// setup: versions 0..9 on a fresh store, and the state of each.
	setup := func(t *testing.T) (storage.Store, *Snapshot, []*Snapshot) {
		inner := openStore(t, "mem://txlog-"+uuid.NewString())
		l0 := newTestLog(t, inner, Options{})
		s := createTable(t, l0)
		for i := 1; i < 10; i++ {
			mustCommit(t, l0, s, addAction(fmt.Sprintf("f%d", i), true))
		}
		var all []*Snapshot
		for v := range int64(10) {
			sv, err := l0.SnapshotAt(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, sv)
		}
		return inner, all[9], all
	}
	commit := func(st storage.Store, before *Snapshot) (*Transaction, error) {
		l := newTestLog(t, st, Options{})
		tx := l.Begin(before)
		tx.Add(addAction("f10", true))
		_, err := tx.Commit(ctx, "WRITE", nil, nil)
		return tx, err
	}
	inner, before, _ := setup(t)
	rec, err := faultstore.New(inner, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commit(rec, before); err != nil {
		t.Fatal(err)
	}
	points := rec.Points()
	if err := faultstore.CheckPoints(points, faultstore.PointCommit, faultstore.PointChecksum, faultstore.PointCheckpoint, faultstore.PointLastCheckpoint); err != nil {
		t.Fatal(err)
	}
	for _, c := range faultstore.Crashes(points) {
		t.Run(c.String(), func(t *testing.T) {
			inner, before, all := setup(t)
			fs, err := faultstore.New(inner, faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Arm(fs); err != nil {
				t.Fatal(err)
			}
			tx, cerr := commit(fs, before)
			if !fs.Crashed() {
				t.Fatalf("the crash point was not reached (err %v)", cerr)
			}
			if cerr != nil && !errors.Is(cerr, faultstore.ErrInjected) {
				t.Fatalf("error without an injected cause: %v", cerr)
			}
			l0 := newTestLog(t, inner, Options{}) // reopen on the inner store
			after, err := l0.Snapshot(ctx)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			switch after.Version() {
			case 9:
				if cerr == nil {
					t.Fatalf("commit reported success but table is at 9")
				}
				assertSameSnapshot(t, after, before)
			case 10:
				if after.NumFiles() != 10 || after.CommitInfo().TxnID() != tx.TxnID() {
					t.Fatalf("%d files, txnId %q", after.NumFiles(), after.CommitInfo().TxnID())
				}
				if c.Point.Name == faultstore.PointCommit && c.Mode == faultstore.FailBefore {
					t.Fatalf("the commit landed although the crash came before it")
				}
				vc, err := l0.ReadChecksum(ctx, 10)
				crcDue := c.Point.Name != faultstore.PointCommit && !(c.Point.Name == faultstore.PointChecksum && c.Mode == faultstore.FailBefore)
				switch {
				case crcDue && err != nil:
					t.Fatalf("no .crc after the crash at %s: %v", c, err)
				case !crcDue && err == nil:
					t.Fatalf("a .crc although the crash came before it")
				case err == nil && (vc.NumFiles != 10 || vc.TxnID != tx.TxnID()):
					t.Fatalf(".crc: %d files, txnId %q", vc.NumFiles, vc.TxnID)
				}
			default:
				t.Fatalf("version %d", after.Version())
			}
			for v, want := range all {
				got, err := l0.SnapshotAt(ctx, int64(v))
				if err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
				assertSameSnapshot(t, got, want)
			}
			if after.Version() == 10 {
				if _, err := l0.Checkpoint(ctx, after); err != nil {
					t.Fatalf("checkpoint rerun: %v", err)
				}
				if s, err := newTestLog(t, inner, Options{}).Snapshot(ctx); err != nil || s.CheckpointVersion() != 10 || s.NumFiles() != 10 {
					t.Fatalf("after the rerun: %v", err)
				}
			}
		})
	}
}
