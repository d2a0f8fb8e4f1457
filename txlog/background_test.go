package txlog

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage/faultstore"
)

// TestBackgroundCheckpoint: with Options.BackgroundCheckpoint the commit
// that makes a checkpoint due returns while the checkpoint is still being
// written (its writer is held open by the test); a checkpoint due while
// that one runs is skipped; Wait returns once it is written, with
// _last_checkpoint naming it; after Close the next due checkpoint is on
// disk when its commit returns.
func TestBackgroundCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	started := make(chan string, 4)
	release := make(chan struct{})
	var opened atomic.Int64
	err := st.Add(faultstore.Rule{Ops: faultstore.OpNewWriter, Path: "_delta_log/*.checkpoint.parquet", Mode: faultstore.Call,
		Func: func(_ faultstore.Op, p string) {
			opened.Add(1)
			started <- p
			select {
			case <-release:
			case <-time.After(30 * time.Second): // a checkpoint on the commit path: the test fails below
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLog(t, st, Options{BackgroundCheckpoint: true, CheckpointInterval: 2})
	s := createTable(t, l)
	commit := func(i int) {
		t.Helper()
		mustCommit(t, l, s, addAction(fmt.Sprintf("f%d", i), true))
		var err error
		if s, err = l.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	commit(1)
	commit(2) // due: started in the background
	if p := <-started; p != CheckpointPath(2) {
		t.Fatalf("checkpoint %s started, want %s", p, CheckpointPath(2))
	}
	if st.has(CheckpointPath(2)) {
		t.Fatalf("%s written before the commit that made it due returned", CheckpointPath(2))
	}
	commit(3)
	commit(4) // due while 2 is written: skipped
	close(release)
	l.Wait()
	if !st.has(CheckpointPath(2)) || st.has(CheckpointPath(4)) || opened.Load() != 1 {
		t.Fatalf("after Wait: checkpoint 2 %v, 4 %v, %d opened; want 2 only", st.has(CheckpointPath(2)), st.has(CheckpointPath(4)), opened.Load())
	}
	if lc, err := l.LastCheckpointHint(ctx); err != nil || lc == nil || lc.Version != 2 {
		t.Fatalf("_last_checkpoint %+v, %v; want version 2", lc, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	commit(5)
	commit(6) // after Close: on the commit path
	if !st.has(CheckpointPath(6)) || opened.Load() != 2 {
		t.Fatalf("after Close: checkpoint 6 %v when its commit returned, %d opened", st.has(CheckpointPath(6)), opened.Load())
	}
	if s.NumFiles() != 6 {
		t.Fatalf("%d files, want 6", s.NumFiles())
	}
}
