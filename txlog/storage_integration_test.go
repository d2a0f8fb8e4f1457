package txlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/internal/storage"
	"github.com/lakesink/lakesink/internal/storage/faultstore"
)

// These tests run the log against the real stores of internal/storage (mem
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

// Crash after k writes of a commit that also writes the automatic
// checkpoint (commit put, checkpoint file, _last_checkpoint): after each
// crash the reopened table is at the state before or after the commit.
func TestCrashDuringCommitAndCheckpoint(t *testing.T) {
	ctx := context.Background()
	for k := 0; ; k++ {
		inner := openStore(t, "mem://txlog-"+uuid.NewString())
		l0 := newTestLog(t, inner, Options{})
		s := createTable(t, l0)
		for i := 1; i < 10; i++ {
			mustCommit(t, l0, s, addAction(fmt.Sprintf("f%d", i), true))
		}
		before, _ := l0.Snapshot(ctx)
		fs, err := faultstore.New(inner, faultstore.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		fs.CrashAfterWrites(k)
		l := newTestLog(t, fs, Options{})
		tx := l.Begin(before)
		tx.Add(addAction("f10", true))
		_, cerr := tx.Commit(ctx, "WRITE", nil, nil)
		crashed := fs.Crashed()
		after, err := l0.Snapshot(ctx) // reopen on the inner store
		if err != nil {
			t.Fatalf("k=%d: reopen: %v", k, err)
		}
		switch after.Version() {
		case 9:
			if cerr == nil {
				t.Fatalf("k=%d: commit reported success but table is at 9", k)
			}
			assertSameSnapshot(t, after, before)
		case 10:
			if after.NumFiles() != 10 {
				t.Fatalf("k=%d: %d files", k, after.NumFiles())
			}
		default:
			t.Fatalf("k=%d: version %d", k, after.Version())
		}
		if !crashed {
			if cerr != nil || after.CheckpointVersion() != 10 {
				t.Fatalf("k=%d: no crash but err=%v cp=%d", k, cerr, after.CheckpointVersion())
			}
			return
		}
	}
}
