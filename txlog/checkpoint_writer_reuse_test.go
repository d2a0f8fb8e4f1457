package txlog

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// TestCheckpointKeepsWriter: a Log's checkpoints after the first take the
// file writer the previous one gave back (one made for 5 checkpoints),
// and a checkpoint through the kept writer allocates well under one that
// makes a new writer (the GenericWriter[ckptRow], its column writers and
// their buffers): at most 3/4 of its allocations. Without the kept writer
// every checkpoint makes one and the two counts are the same.
func TestCheckpointKeepsWriter(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 2000, 2000)
	rt.checkpoint()
	for range 4 {
		rt.append(1)
		rt.checkpointVerify(false)
	}
	if made := rt.l.ckptWriter.made; made != 1 {
		t.Errorf("5 checkpoints made %d file writers, want 1", made)
	}
	// Each run writes the same checkpoint (of the same snapshot) with the
	// same memo, so the runs differ only in the writer.
	memo := rt.l.ckptMemo.get()
	run := func(fresh bool) float64 {
		return testing.AllocsPerRun(20, func() {
			rt.l.ckptMemo.memo = memo
			if fresh {
				rt.l.ckptWriter.fw = nil
			}
			if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
				t.Fatal(err)
			}
		})
	}
	kept, fresh := run(false), run(true)
	t.Logf("allocations per checkpoint: %.0f with the kept writer, %.0f with a new one", kept, fresh)
	if kept > fresh*3/4 {
		t.Errorf("a checkpoint with the kept writer made %.0f allocations, more than 3/4 of a new writer's %.0f", kept, fresh)
	}
}

// TestCheckpointKeptWriterSameBytes: a checkpoint written by the kept
// writer (Reset after each of its files, 10 here) is byte for byte the
// file a new writer writes of the same snapshot from the same memo opened
// anew from its bytes, through appends, a remove (a tombstone), a txn, a
// domain, and with copied row groups: a writer reset after
// Writer.WriteRowGroup holds nothing of the copied chunks and changed
// nothing of the memo's parquet.File. Without the detaching of the last
// file's column paths before Reset (parquet-go issue #602) every column
// of the kept writer's second file is named "".
func TestCheckpointKeptWriterSameBytes(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 300, 64)
	rt.checkpoint()
	// write checkpoints snap with the Log's memo, by the kept writer or a
	// new one (the kept writer stays kept), leaving the memo as it was.
	write := func(fresh bool) []byte {
		t.Helper()
		memo, kept := rt.l.ckptMemo.get(), rt.l.ckptWriter.fw
		if fresh {
			rt.l.ckptWriter.fw = nil
			// and a memo opened anew from its bytes: nothing the kept
			// writer could have changed in the memo's parquet.File
			data := make([]byte, memo.file.Size())
			if _, err := memo.file.ReadAt(data, 0); err != nil {
				t.Fatal(err)
			}
			rt.l.ckptMemo.memo = newCkptMemo(memo.version, memo.protocol, memo.metadata, data, memo.groups, 0, 0)
		}
		if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
			t.Fatal(err)
		}
		b, err := rt.st.Read(ctx, CheckpointPath(rt.v))
		if err != nil {
			t.Fatal(err)
		}
		rt.l.ckptMemo.memo = memo
		if fresh {
			rt.l.ckptWriter.fw = kept
		}
		return b
	}
	steps := []func(){
		func() { rt.append(3) },
		func() {
			ts := reuseNow().UnixMilli()
			rt.commit(Action{Remove: &Remove{Path: rt.snap.Files()[5].Path, DataChange: true, DeletionTimestamp: &ts}})
		},
		func() { rt.commit(Action{Txn: &Txn{AppID: "app", Version: 7}}) },
		func() {
			rt.commit(Action{DomainMetadata: &DomainMetadata{Domain: "user.d", Configuration: "x"}})
		},
		func() { rt.append(70) },
	}
	copied := parquetCopiedChunks.Load()
	for i, step := range steps {
		step()
		kept := write(false)
		fresh := write(true)
		if !bytes.Equal(kept, fresh) {
			t.Fatalf("step %d: the kept writer's checkpoint (%d bytes) differs from a new writer's (%d bytes)", i, len(kept), len(fresh))
		}
		// the next step starts from this checkpoint's memo
		if _, err := rt.l.Checkpoint(ctx, rt.snap); err != nil {
			t.Fatal(err)
		}
	}
	if parquetCopiedChunks.Load() == copied {
		t.Error("no column chunk was copied")
	}
	if made := rt.l.ckptWriter.made; made != 1+len(steps) {
		t.Errorf("made %d writers, want %d (the kept one and one per step)", made, 1+len(steps))
	}
}

// TestCheckpointConcurrentOnOneLog: checkpoints of one Log running at
// once (Checkpoint is safe for concurrent use) each write a whole file:
// one takes the kept writer, the others make their own (run with -race).
func TestCheckpointConcurrentOnOneLog(t *testing.T) {
	ctx := context.Background()
	rt := newReuseTable(t, 500, 100)
	rt.checkpoint()
	rt.append(5)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = rt.l.Checkpoint(ctx, rt.snap) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := newTestLog(t, rt.st, Options{}).Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, got, rt.snap)
	rt.append(1)
	rt.checkpoint()
}
