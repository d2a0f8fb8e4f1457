package txlog

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// TestFileSetEditMatchesMap: random puts and deletes through editors
// (chunks split and emptied) give the set a map gives, in key order, and
// never change the set an editor started from.
func TestFileSetEditMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[fileKey]*int{}
	var s *fileSet[int]
	for round := range 40 {
		before, beforeVals := maps.Clone(model), s.values()
		ed := s.edit()
		for range rng.IntN(2000) {
			k := fileKey{path: fmt.Sprintf("f%05d", rng.IntN(3000)), dvID: []string{"", "", "", "dv"}[rng.IntN(4)]}
			if rng.IntN(3) == 0 {
				ed.delete(k)
				delete(model, k)
				continue
			}
			v := new(int)
			*v = round
			ed.put(k, v)
			model[k] = v
		}
		next := ed.done()
		if !reflect.DeepEqual(s.values(), beforeVals) || s.len() != len(before) {
			t.Fatalf("round %d: the edited set changed", round)
		}
		s = next
		keys := slices.SortedFunc(maps.Keys(model), compareKeys)
		var got []fileKey
		for k, v := range s.all() {
			if model[k] != v {
				t.Fatalf("round %d: %v holds another value", round, k)
			}
			got = append(got, k)
		}
		if !slices.Equal(got, keys) || s.len() != len(keys) {
			t.Fatalf("round %d: %d keys, model %d", round, len(got), len(keys))
		}
		for _, c := range s.chunks {
			if len(c.e) == 0 || len(c.e) > fileChunkMax {
				t.Fatalf("round %d: a chunk of %d entries", round, len(c.e))
			}
		}
		for _, k := range keys[:min(len(keys), 50)] {
			if v, ok := s.get(k); !ok || v != model[k] {
				t.Fatalf("round %d: get(%v)", round, k)
			}
			if k.dvID == "" {
				if v, ok := s.getPath(k.path); !ok || v != model[k] {
					t.Fatalf("round %d: getPath(%s)", round, k.path)
				}
			}
		}
		if _, ok := s.getPath("f99999"); ok {
			t.Fatal("getPath of an absent path")
		}
	}
}

// TestReplayOrderedCheckpointMatchesMap: a checkpoint whose adds arrive in
// key order (the ordered set) and one whose order breaks half way, with
// removes before and after the adds of the same files and commits after,
// leave the live files and tombstones a map of every action leaves.
func TestReplayOrderedCheckpointMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 30 {
		r := newReplayer(tableRoot{scheme: "mem"})
		files, tombs := map[string]*Add{}, map[string]*Remove{}
		apply := func(a Action) {
			if err := r.apply(&a); err != nil {
				t.Fatal(err)
			}
			if a.Add != nil {
				files[a.Add.Path] = a.Add
				delete(tombs, a.Add.Path)
			} else {
				delete(files, a.Remove.Path)
				tombs[a.Remove.Path] = a.Remove
			}
		}
		r.inCheckpoint = true
		next := 0
		for i := range 600 {
			p := fmt.Sprintf("f%05d", next)
			switch {
			case rng.IntN(5) == 0: // a remove of one read already, or one to come
				apply(Action{Remove: &Remove{Path: fmt.Sprintf("f%05d", max(0, next+rng.IntN(20)-10))}})
			case trial%2 == 1 && i == 300: // order broken
				apply(Action{Add: &Add{Path: "f00000", Size: 7}})
			default:
				apply(Action{Add: &Add{Path: p, Size: int64(i)}})
				next += 1 + rng.IntN(3)
			}
		}
		r.endCheckpoint()
		for range 200 {
			p := fmt.Sprintf("f%05d", rng.IntN(next+10))
			if rng.IntN(2) == 0 {
				apply(Action{Add: &Add{Path: p, Size: 1}})
			} else {
				apply(Action{Remove: &Remove{Path: p}})
			}
		}
		r.finish()
		var got []string
		for k, a := range r.s.files.all() {
			if files[k.path] != a {
				t.Fatalf("trial %d: %s holds another add", trial, k.path)
			}
			got = append(got, k.path)
		}
		if want := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
			t.Fatalf("trial %d: %d live files, want %d", trial, len(got), len(want))
		}
		for k, rm := range r.s.tombstoneSet().all() {
			if tombs[k.path] != rm {
				t.Fatalf("trial %d: tombstone %s", trial, k.path)
			}
		}
		if r.s.tombstoneSet().len() != len(tombs) {
			t.Fatalf("trial %d: %d tombstones, want %d", trial, r.s.tombstoneSet().len(), len(tombs))
		}
	}
}

// TestAdvanceSharesUntouchedFiles: advancing a 20,000-file snapshot over a
// commit of one add and one remove allocates a small fraction of what
// copying its file index would (maps.Clone of the file maps allocated
// about 3 MB here) and leaves the snapshot it came from as it was.
func TestAdvanceSharesUntouchedFiles(t *testing.T) {
	r := newReplayer(tableRoot{scheme: "mem"})
	for _, a := range wideHead() {
		if err := r.apply(&a); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20_000
	for i := range n {
		if err := r.apply(&Action{Add: wideAdd(i)}); err != nil {
			t.Fatal(err)
		}
	}
	r.finish()
	s := r.s
	s.protocol, s.metadata = *r.protocol, *r.metadata
	s.crc = computeChecksumState(s.files)
	before := s.Files()
	acts := []Action{{Add: wideAdd(n)}, {Remove: &Remove{Path: wideAdd(5).Path}}}
	var next *Snapshot
	allocated := bytesAllocated(func() {
		var err error
		if next, err = s.advance(1, acts, CommitPath(1), s.timestamp); err != nil {
			t.Fatal(err)
		}
	})
	if allocated > 256<<10 {
		t.Errorf("advance over a 2-action commit allocated %d bytes on a %d-file snapshot", allocated, n)
	}
	if next.NumFiles() != n || s.NumFiles() != n || !reflect.DeepEqual(s.Files(), before) {
		t.Fatalf("files: %d after, %d before (changed: %v)", next.NumFiles(), s.NumFiles(), !reflect.DeepEqual(s.Files(), before))
	}
	if _, ok := next.File(wideAdd(5).Path); ok {
		t.Fatal("removed file still live")
	}
	if _, ok := next.File(wideAdd(n).Path); !ok {
		t.Fatal("added file not live")
	}
}

// bytesAllocated is what fn allocates on the heap.
func bytesAllocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestCheckpointOpenSharesPartitionValues: the 20,000 adds of a checkpoint
// over 100 partitions share 100 partitionValues maps (one map each before:
// ~250 bytes an add), and the opened snapshot holds under 450 bytes of
// heap a file (paths and stats included; 270 now, 930 with a map per add
// and the files and byPath maps) and allocated under 1,100 bytes a file
// while opening (720 now, 1,900 before).
func TestCheckpointOpenSharesPartitionValues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 20_000
	buildWideCheckpoint(t, dir, n)
	st, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Heap held is the live heap after the open minus before it, each read
	// after two collections (one moves sync.Pool contents to the victim
	// cache, the second frees them: pooled buffers of the open are not the
	// snapshot's). The least of three opens counts, so that what else the
	// process did meanwhile (a runtime sweep, a test's leftover) does not;
	// a snapshot holding more fails all three (it failed once in ~30 runs
	// at load ~8 with one try and one collection: 586-601 B/file).
	liveHeap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	var s *Snapshot
	held, allocated := int64(math.MaxInt64), uint64(math.MaxUint64)
	for range 3 {
		l := newTestLog(t, st, Options{})
		s = nil
		before := liveHeap()
		a := bytesAllocated(func() {
			if s, err = l.Snapshot(ctx); err != nil {
				t.Fatal(err)
			}
		})
		h := liveHeap() - before
		t.Logf("try: held %d B/file", h/n)
		held, allocated = min(held, h), min(allocated, a)
	}
	if s.CheckpointVersion() != 1 || s.NumFiles() != n {
		t.Fatalf("checkpoint %d, %d files", s.CheckpointVersion(), s.NumFiles())
	}
	distinct := map[uintptr]bool{}
	for _, a := range s.Files() {
		distinct[reflect.ValueOf(a.PartitionValues).Pointer()] = true
		if want := wideAdd(0); len(a.PartitionValues) != 1 || a.PartitionValues["p"] == nil || len(a.Stats) < len(want.Stats)-10 {
			t.Fatalf("%s: partition values %v, stats %q", a.Path, a.PartitionValues, a.Stats)
		}
	}
	if len(distinct) != 100 {
		t.Errorf("%d distinct partitionValues maps for 100 partitions", len(distinct))
	}
	if per := held / n; per > 450 {
		t.Errorf("the snapshot holds %d bytes a file", per)
	}
	if per := allocated / n; per > 1100 {
		t.Errorf("opening allocated %d bytes a file", per)
	}
	t.Logf("held %d B/file, allocated %d B/file", held/n, allocated/n)
	runtime.KeepAlive(s)
}
