package txlog

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// putRecorder records the content of every PutIfAbsent per path.
type putRecorder struct {
	storage.Store
	mu   sync.Mutex
	puts map[string][][]byte
}

func (p *putRecorder) PutIfAbsent(ctx context.Context, path string, data []byte) error {
	p.mu.Lock()
	p.puts[path] = append(p.puts[path], bytes.Clone(data))
	p.mu.Unlock()
	return p.Store.PutIfAbsent(ctx, path, data)
}

// TestBlindAppendLoserWork counts what a blind append that lost its
// version to two concurrent blind appends does (Delta's ConflictChecker:
// winning blind appends do not conflict with it): it puts the same bytes
// at the next free version (its commitInfo, readVersion included, does not
// change between attempts), reads each winner once and never again (its
// post-commit snapshot holds them, so Update reads only what follows),
// and writes one .crc, its own.
func TestBlindAppendLoserWork(t *testing.T) {
	ctx := context.Background()
	mem := newMemStore()
	rec := &putRecorder{Store: mem, puts: map[string][][]byte{}}
	l := newTestLog(t, rec, Options{DisableAutoCheckpoint: true})
	snap := createTable(t, l)
	// Another writer (its own Log on the uncounted store) wins 1 and 2.
	other := newTestLog(t, mem.mem, Options{DisableAutoCheckpoint: true})
	s := snap
	for i, f := range []string{"w1.parquet", "w2.parquet"} {
		mustCommit(t, other, s, addAction(f, true))
		var err error
		if s, err = other.SnapshotAt(ctx, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	mem.resetCounters()
	tx := l.Begin(snap)
	tx.Add(addAction("ours.parquet", true))
	v, err := tx.Commit(ctx, "WRITE", map[string]any{"mode": "Append"}, nil)
	if err != nil || v != 3 {
		t.Fatalf("commit: v=%d err=%v, want 3", v, err)
	}
	// Attempts: version 1 (lost), then 3; 2 is seen by reading 1's successors.
	lost, won := rec.puts[CommitPath(1)], rec.puts[CommitPath(3)]
	if len(lost) != 1 || len(won) != 1 || len(rec.puts[CommitPath(2)]) != 0 {
		t.Fatalf("put-if-absent attempts: %d at 1, %d at 2, %d at 3; want 1, 0, 1", len(lost), len(rec.puts[CommitPath(2)]), len(won))
	}
	if !bytes.Equal(lost[0], won[0]) {
		t.Errorf("the retry put other bytes:\n%s\n%s", lost[0], won[0])
	}
	for _, w := range []int64{1, 2} {
		if n := mem.readsOf(func(p string) bool { return p == CommitPath(w) }); n != 1 {
			t.Errorf("winner %d read %d times, want 1", w, n)
		}
	}
	if c := mem.Counts(); c.Put != 1 {
		t.Errorf("%d puts, want 1 (the .crc of 3)", c.Put)
	}
	if _, err := l.ReadChecksum(ctx, 3); err != nil {
		t.Errorf(".crc of 3: %v", err)
	}
	post := tx.PostCommitSnapshot()
	if post == nil || post.Version() != 3 || post.NumFiles() != 3 {
		t.Fatalf("post-commit snapshot %v, want version 3 with 3 files", post)
	}
	mem.resetCounters()
	if _, err := l.Update(ctx, post); err != nil {
		t.Fatal(err)
	}
	if n := mem.readsOf(func(p string) bool { return strings.HasSuffix(p, ".json") && p != CommitPath(4) }); n != 0 {
		t.Errorf("Update after the commit read %d commits it had, want 0", n)
	}
}
