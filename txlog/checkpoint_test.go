package txlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// buildLog writes n commits directly (fast): version 0 creates the table,
// each later version adds one file and removes the file added 5 versions
// earlier, and sets txn app=v.
func buildLog(t testing.TB, st *memStore, n int) {
	t.Helper()
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	md := Metadata{ID: "big", Format: Format{Provider: "parquet"}, SchemaString: testSchema}
	for v := range int64(n) {
		var acts []Action
		ci := CommitInfo{}
		_ = ci.Set("timestamp", 1_700_000_000_000+v)
		acts = append(acts, Action{CommitInfo: ci})
		if v == 0 {
			acts = append(acts, Action{Protocol: &p}, Action{MetaData: &md})
		} else {
			pv := fmt.Sprint(v % 3)
			acts = append(acts, Action{Add: &Add{Path: fmt.Sprintf("p=%d/f%05d.parquet", v%3, v), Size: v,
				PartitionValues: map[string]*string{"p": &pv}, DataChange: true, Stats: `{"numRecords":1}`}})
			if v > 5 {
				ts := int64(1_700_000_000_000)
				acts = append(acts, Action{Remove: &Remove{Path: fmt.Sprintf("p=%d/f%05d.parquet", (v-5)%3, v-5), DataChange: true, DeletionTimestamp: &ts}})
			}
			acts = append(acts, Action{Txn: &Txn{AppID: "app", Version: v}})
		}
		b, err := EncodeCommit(acts)
		if err != nil {
			t.Fatal(err)
		}
		st.put(CommitPath(v), string(b))
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	buildLog(t, st, 25)
	st.put(CommitPath(25), `{"domainMetadata":{"domain":"user.d","configuration":"cfg","removed":false}}`+"\n"+
		`{"add":{"path":"nullpart.parquet","partitionValues":{"p":null},"size":1,"modificationTime":1,"dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"vBn[lx{q8@P<9BNH/isA","offset":1,"sizeInBytes":36,"cardinality":2}}}`+"\n")
	// tombstones are far older than the retention: use a clock near them.
	// Small chunks: the checkpoint has several row groups.
	l := newTestLog(t, st, Options{CheckpointRowsPerChunk: 7, Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }})
	want, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := l.Checkpoint(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if lc.Version != 25 || *lc.NumOfAddFiles != int64(want.NumFiles()) {
		t.Errorf("last checkpoint %+v", lc)
	}
	cpData, _ := st.Read(ctx, CheckpointPath(25))
	pf, err := parquet.OpenFile(bytes.NewReader(cpData), int64(len(cpData)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n < 3 || pf.NumRows() != lc.Size {
		t.Errorf("row groups %d rows %d (size %d)", n, pf.NumRows(), lc.Size)
	}
	hint, err := l.LastCheckpointHint(ctx)
	if err != nil || hint == nil || hint.Version != 25 {
		t.Fatalf("hint %+v %v", hint, err)
	}
	got, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.CheckpointVersion() != 25 {
		t.Fatalf("not loaded from checkpoint: %d", got.CheckpointVersion())
	}
	assertSameSnapshot(t, got, want)
}

func assertSameSnapshot(t testing.TB, got, want *Snapshot) {
	t.Helper()
	gb, _ := EncodeCommit(snapshotActions(got))
	wb, _ := EncodeCommit(snapshotActions(want))
	if string(gb) != string(wb) {
		t.Errorf("snapshots differ:\n got %s\nwant %s", gb, wb)
	}
}

func snapshotActions(s *Snapshot) []Action {
	p, m := s.Protocol(), s.Metadata()
	acts := []Action{{Protocol: &p}, {MetaData: &m}}
	for _, tx := range s.TxnActions() {
		acts = append(acts, Action{Txn: &tx})
	}
	for _, d := range s.Domains() {
		acts = append(acts, Action{DomainMetadata: &d})
	}
	for _, a := range s.Files() {
		acts = append(acts, Action{Add: a})
	}
	for _, r := range s.Tombstones() {
		acts = append(acts, Action{Remove: r})
	}
	return acts
}

func TestCheckpointDropsExpiredTombstones(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	buildLog(t, st, 12)
	l := newTestLog(t, st, Options{}) // now is years after the removes
	s, _ := l.Snapshot(ctx)
	if len(s.Tombstones()) == 0 {
		t.Fatal("no tombstones to expire")
	}
	if _, err := l.Checkpoint(ctx, s); err != nil {
		t.Fatal(err)
	}
	s2, _ := l.Snapshot(ctx)
	if len(s2.Tombstones()) != 0 || s2.NumFiles() != s.NumFiles() {
		t.Errorf("tombstones %d files %d/%d", len(s2.Tombstones()), s2.NumFiles(), s.NumFiles())
	}
}

func TestAutoCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{})
	s := createTable(t, l)
	for i := 1; i <= 10; i++ {
		mustCommit(t, l, s, addAction(fmt.Sprintf("f%d", i), true))
		s, _ = l.Snapshot(ctx)
	}
	if !st.has(CheckpointPath(10)) || st.has(CheckpointPath(5)) {
		t.Fatalf("checkpoint files: 10=%v 5=%v", st.has(CheckpointPath(10)), st.has(CheckpointPath(5)))
	}
	if s.CheckpointVersion() != 10 || s.NumFiles() != 10 {
		t.Errorf("snapshot cp %d files %d", s.CheckpointVersion(), s.NumFiles())
	}
}

func TestCheckpointSelection(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		mutate  func(t *testing.T, st *memStore, cp []byte)
		wantCP  int64
		wantErr error
	}{
		{"stale hint to missing checkpoint", func(t *testing.T, st *memStore, cp []byte) {
			st.put(LastCheckpointPath, `{"version":30,"size":3}`)
		}, 20, nil},
		{"corrupt hint", func(t *testing.T, st *memStore, cp []byte) {
			st.put(LastCheckpointPath, `{"version":`)
		}, 20, nil},
		{"hint to older checkpoint", func(t *testing.T, st *memStore, cp []byte) {
			st.put(LastCheckpointPath, `{"version":10,"size":3}`)
		}, 20, nil},
		{"no hint", func(t *testing.T, st *memStore, cp []byte) {
			st.Delete(ctx, LastCheckpointPath)
		}, 20, nil},
		{"incomplete multi-part at 25 ignored", func(t *testing.T, st *memStore, cp []byte) {
			st.put(fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", LogDir, 25, 1, 2), string(cp))
		}, 20, nil},
		{"complete multi-part at 25 used", func(t *testing.T, st *memStore, cp []byte) {
			// both parts carry the full state at 25 (replay is idempotent).
			l := newTestLog(t, st, Options{Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }})
			s, err := l.SnapshotAt(ctx, 25)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Checkpoint(ctx, s); err != nil {
				t.Fatal(err)
			}
			b, _ := st.Read(ctx, CheckpointPath(25))
			st.Delete(ctx, CheckpointPath(25))
			for part := 1; part <= 2; part++ {
				st.put(fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", LogDir, 25, part, 2), string(b))
			}
			// incomplete 3-part checkpoints at 25 (beside the complete one) and
			// at 26 are ignored; part 2 of 3 at 25 is garbage and never read.
			st.put(fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", LogDir, 25, 1, 3), string(b))
			st.put(fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", LogDir, 25, 2, 3), "garbage")
			st.put(fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", LogDir, 26, 1, 3), string(b))
		}, 25, nil},
		{"corrupt checkpoint file", func(t *testing.T, st *memStore, cp []byte) {
			st.put(CheckpointPath(20), "not parquet")
		}, -1, ErrCorruptLog},
		{"commits before checkpoint cleaned", func(t *testing.T, st *memStore, cp []byte) {
			for v := range int64(20) {
				st.Delete(ctx, CommitPath(v))
			}
		}, 20, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			buildLog(t, st, 27)
			l := newTestLog(t, st, Options{Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }})
			want, _ := l.Snapshot(ctx)
			for _, v := range []int64{10, 20} {
				s, _ := l.SnapshotAt(ctx, v)
				if _, err := l.Checkpoint(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			cp, _ := st.Read(ctx, CheckpointPath(20))
			tc.mutate(t, st, cp)
			got, err := l.Snapshot(ctx)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.CheckpointVersion() != tc.wantCP {
				t.Errorf("checkpoint %d, want %d", got.CheckpointVersion(), tc.wantCP)
			}
			assertSameSnapshot(t, got, want)
		})
	}
}

// A 2,500-commit log (three list pages of 1,000 keys) with checkpoints
// near its end: loading the latest snapshot reads _last_checkpoint, one
// checkpoint, at most 10 commit files and one list page. (The cost of
// building the log is linear in its length; 10,000 commits checked nothing
// more: `make bench` opens a 10,000-commit log.)
func TestSnapshotLoadIOBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2,500-commit log")
	}
	ctx := context.Background()
	st := newMemStore()
	buildLog(t, st, 2_500)
	l := newTestLog(t, st, Options{})
	for _, v := range []int64{2480, 2490} {
		s, err := l.SnapshotAt(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Checkpoint(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	st.resetCounters()
	s, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version() != 2499 || s.CheckpointVersion() != 2490 {
		t.Fatalf("version %d cp %d", s.Version(), s.CheckpointVersion())
	}
	isCommit := func(p string) bool { return strings.HasSuffix(p, ".json") }
	isCP := func(p string) bool { return strings.Contains(p, ".checkpoint.") }
	if n := st.readsOf(isCommit); n > 10 {
		t.Errorf("read %d commit files", n)
	}
	if n := st.readsOf(isCP); n != 1 {
		t.Errorf("read %d checkpoint files", n)
	}
	if c := st.Counts(); c.List != 1 || c.ListPages > 1 {
		t.Errorf("listings %d pages %d", c.List, c.ListPages)
	}
}
