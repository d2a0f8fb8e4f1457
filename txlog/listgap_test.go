package txlog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// hidingLister lists the store without the paths in hide, as a directory
// read racing a concurrent writer's create can (ext4's getdents walks hash
// order: a new name before the cursor is missed, one after it returned);
// Stat and Read still find the files.
type hidingLister struct {
	*memStore
	hide  map[string]bool
	stats int
}

func (h *hidingLister) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		for fi, err := range h.memStore.List(ctx, prefix, startAfter) {
			if err == nil && h.hide[fi.Path] {
				continue
			}
			if !yield(fi, err) {
				return
			}
		}
	}
}

func (h *hidingLister) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	h.stats++
	return h.memStore.Stat(ctx, p)
}

// TestListingMissingACommitStillLoads: a listing that misses commits
// between two it returned (created while it ran) loads the same snapshot
// as a full one, looking up each missing commit once, from a full listing
// and from the _last_checkpoint hint; a commit really missing is still
// "versions not contiguous" (TestGapIsCorrupt).
func TestListingMissingACommitStillLoads(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s := createTable(t, l)
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		mustCommit(t, l, s, addAction(p, true))
		s, _ = l.Snapshot(ctx)
	}
	want := s.NumFiles()
	h := &hidingLister{memStore: st, hide: map[string]bool{CommitPath(2): true, CommitPath(3): true}}
	hl := newTestLog(t, h, Options{DisableAutoCheckpoint: true})
	got, err := hl.Snapshot(ctx)
	if err != nil {
		t.Fatalf("snapshot through a listing without commits 2 and 3: %v", err)
	}
	if got.Version() != 5 || got.NumFiles() != want {
		t.Errorf("snapshot: version %d, %d files; want 5, %d", got.Version(), got.NumFiles(), want)
	}
	if h.stats < 2 {
		t.Errorf("%d stats, want the 2 missing commits looked up", h.stats)
	}

	if _, err := l.Checkpoint(ctx, s); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, l, s, addAction("f", true))
	s, _ = l.Snapshot(ctx)
	mustCommit(t, l, s, addAction("g", true))
	h.hide = map[string]bool{CommitPath(6): true}
	got, err = hl.Snapshot(ctx)
	if err != nil || got.Version() != 7 || got.NumFiles() != want+2 {
		t.Fatalf("snapshot from the checkpoint through a listing without commit 6: %v, %v", got, err)
	}
}

// TestListingMissingTheCommitAfterACheckpoint: when the checkpoint's own
// commit is gone (log cleanup by another engine, or a log that starts at a
// checkpoint; PROTOCOL.md, "Checkpoints"), the first listed commit after
// the checkpoint is not the first one the snapshot needs: a listing that
// misses the commit right after the checkpoint (created while it ran)
// still loads, from the hint and from a full listing, with one listed
// commit after the checkpoint or several. A commit really missing there
// is still "versions not contiguous".
func TestListingMissingTheCommitAfterACheckpoint(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s := createTable(t, l)
	for _, p := range []string{"a", "b", "c"} {
		mustCommit(t, l, s, addAction(p, true))
		s, _ = l.Snapshot(ctx)
	}
	if _, err := l.Checkpoint(ctx, s); err != nil {
		t.Fatal(err)
	}
	cp := s.Version()
	for v := int64(0); v <= cp; v++ {
		st.del(CommitPath(v))
	}
	want := s.NumFiles()
	for _, p := range []string{"d", "e", "f"} {
		mustCommit(t, l, s, addAction(p, true))
		s, _ = l.Snapshot(ctx)
	}
	for _, hide := range [][]int64{{cp + 1}, {cp + 1, cp + 2}} {
		h := &hidingLister{memStore: st, hide: map[string]bool{}}
		for _, v := range hide {
			h.hide[CommitPath(v)] = true
		}
		hl := newTestLog(t, h, Options{DisableAutoCheckpoint: true})
		got, err := hl.Snapshot(ctx)
		if err != nil {
			t.Fatalf("snapshot through a listing without commits %v after checkpoint %d: %v", hide, cp, err)
		}
		if got.Version() != cp+3 || got.NumFiles() != want+3 {
			t.Errorf("hiding %v: version %d, %d files; want %d, %d", hide, got.Version(), got.NumFiles(), cp+3, want+3)
		}
	}
	st.del(CommitPath(cp + 1))
	if _, err := l.Snapshot(ctx); !errors.Is(err, ErrCorruptLog) {
		t.Errorf("commit %d deleted after checkpoint %d: %v, want ErrCorruptLog", cp+1, cp, err)
	}
}

// TestListingGapLookupsAreBounded: a listing missing maxGapStats commits
// between listed ones loads with that many Stats; one missing more fails
// as a gap ("versions not contiguous", ErrCorruptLog) after at most
// maxGapStats Stats per listing, not one per missing version.
func TestListingGapLookupsAreBounded(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s := createTable(t, l)
	const n = maxGapStats + 8
	for i := range n {
		mustCommit(t, l, s, addAction(fmt.Sprint("f", i), true))
		s, _ = l.Snapshot(ctx)
	}
	for _, missing := range []int{maxGapStats, maxGapStats + 1, n - 1} {
		h := &hidingLister{memStore: st, hide: map[string]bool{}}
		for v := 1; v <= missing; v++ {
			h.hide[CommitPath(int64(v))] = true
		}
		hl := newTestLog(t, h, Options{DisableAutoCheckpoint: true})
		got, err := hl.Snapshot(ctx)
		if missing <= maxGapStats {
			if err != nil || got.Version() != n {
				t.Errorf("%d missing: %v, %v; want version %d", missing, got, err, n)
			}
		} else if !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%d missing: %v, want ErrCorruptLog", missing, err)
		}
		if h.stats > maxGapStats {
			t.Errorf("%d missing: %d Stats, want at most %d", missing, h.stats, maxGapStats)
		}
	}
}
