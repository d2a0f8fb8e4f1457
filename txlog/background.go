package txlog

import (
	"context"
	"sync"
)

// background tracks the automatic checkpoint a Log writes after Commit
// returned (Options.BackgroundCheckpoint): at most one at a time, waited
// for by Log.Wait and Log.Close.
type background struct {
	mu      sync.Mutex
	running bool // a checkpoint is being written
	closed  bool // Log.Close was called: checkpoints go on the commit path
	wg      sync.WaitGroup
}

// start claims the background slot: run (the caller starts the goroutine
// and calls done at its end), or skip (one is running), or neither (the Log
// is closed: the caller writes the checkpoint itself).
func (b *background) start() (run, skip bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return false, false
	case b.running:
		return false, true
	}
	b.running = true
	b.wg.Add(1)
	return true, false
}

func (b *background) done() {
	b.mu.Lock()
	b.running = false
	b.mu.Unlock()
	b.wg.Done()
}

// Wait returns when the automatic checkpoint being written after a commit
// (Options.BackgroundCheckpoint) is done, at once when there is none. Safe
// for concurrent use.
func (l *Log) Wait() {
	l.bg.wg.Wait()
}

// Close waits for the automatic checkpoint in flight (Log.Wait); later
// commits write theirs on the commit path, as without
// Options.BackgroundCheckpoint. The Log stays usable. Idempotent; the error
// is always nil (the checkpoint's own errors are not reported, as a
// commit's automatic checkpoint never fails the commit).
func (l *Log) Close() error {
	l.bg.mu.Lock()
	l.bg.closed = true
	l.bg.mu.Unlock()
	l.bg.wg.Wait()
	return nil
}

// autoCheckpoint writes the automatic checkpoint of version (snap, or the
// snapshot loaded at version when nil), in the background when
// Options.BackgroundCheckpoint says so. Errors are dropped: the commit is
// done, and a checkpoint is only an optimisation.
func (l *Log) autoCheckpoint(ctx context.Context, version int64, snap *Snapshot) {
	write := func(ctx context.Context) {
		if snap == nil {
			var err error
			if snap, err = l.SnapshotAt(ctx, version); err != nil {
				return
			}
		}
		_, _ = l.Checkpoint(ctx, snap)
	}
	if l.opts.BackgroundCheckpoint {
		run, skip := l.bg.start()
		if skip {
			return
		}
		if run {
			// The commit's ctx ends with its caller; the checkpoint goes on
			// to its end (Close waits for it).
			bctx := context.WithoutCancel(ctx)
			go func() {
				defer l.bg.done()
				write(bctx)
			}()
			return
		}
	}
	write(ctx)
}
