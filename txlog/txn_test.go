package txlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

const testSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`

func newTestLog(t testing.TB, st storage.Store, opts Options) *Log {
	t.Helper()
	l, err := New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func createTable(t testing.TB, l *Log) *Snapshot {
	t.Helper()
	ctx := context.Background()
	tx := l.Begin(nil)
	p := NewTableProtocol(testSchema)
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "tbl", Format: Format{Provider: "parquet"}, SchemaString: testSchema}})
	v, err := tx.Commit(ctx, "CREATE TABLE", nil, nil)
	if err != nil || v != 0 {
		t.Fatalf("create: v=%d err=%v", v, err)
	}
	s, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func addAction(path string, dataChange bool) Action {
	return Action{Add: &Add{Path: path, Size: 10, ModificationTime: 1, DataChange: dataChange, Stats: `{"numRecords":1}`}}
}

func removeAction(path string, dataChange bool) Action {
	return Action{Remove: &Remove{Path: path, DataChange: dataChange}}
}

func mustCommit(t testing.TB, l *Log, snap *Snapshot, acts ...Action) int64 {
	t.Helper()
	tx := l.Begin(snap)
	tx.Add(acts...)
	v, err := tx.Commit(context.Background(), "WRITE", map[string]any{"mode": "Append"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCreateAndReplay(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	if _, err := l.Snapshot(ctx); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("empty: %v", err)
	}
	s0 := createTable(t, l)
	if s0.Version() != 0 || s0.Protocol().MinWriterVersion != 2 || s0.Metadata().ID != "tbl" {
		t.Fatalf("s0: %+v", s0)
	}
	// creating again fails
	tx := l.Begin(nil)
	p := NewTableProtocol(testSchema)
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "x", SchemaString: testSchema}})
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); !errors.Is(err, ErrTableExists) {
		t.Fatalf("second create: %v", err)
	}
	mustCommit(t, l, s0, addAction("a.parquet", true), addAction("b%20c.parquet", true),
		Action{Txn: &Txn{AppID: "q1", Version: 0}})
	s1, _ := l.Snapshot(ctx)
	mustCommit(t, l, s1, removeAction("a.parquet", true), addAction("d.parquet", true),
		Action{Txn: &Txn{AppID: "q1", Version: 1}},
		Action{DomainMetadata: &DomainMetadata{Domain: "user.x", Configuration: "c1"}},
		Action{DomainMetadata: &DomainMetadata{Domain: "user.y", Configuration: "c2"}})
	s2, _ := l.Snapshot(ctx)
	mustCommit(t, l, s2, Action{DomainMetadata: &DomainMetadata{Domain: "user.x", Removed: true}})
	s, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version() != 3 {
		t.Fatalf("version %d", s.Version())
	}
	var paths []string
	for _, a := range s.Files() {
		paths = append(paths, a.Path)
	}
	if fmt.Sprint(paths) != "[b%20c.parquet d.parquet]" {
		t.Errorf("files %v", paths)
	}
	if _, ok := s.File("b c.parquet"); !ok {
		t.Errorf("decoded key lookup failed")
	}
	if ts := s.Tombstones(); len(ts) != 1 || ts[0].Path != "a.parquet" || ts[0].DeletionTimestamp == nil {
		t.Errorf("tombstones %+v", ts)
	}
	if v, ok := s.TxnVersion("q1"); !ok || v != 1 {
		t.Errorf("txn %d %v", v, ok)
	}
	if _, ok := s.DomainMetadata("user.x"); ok {
		t.Errorf("removed domain still live")
	}
	if d, ok := s.DomainMetadata("user.y"); !ok || d.Configuration != "c2" {
		t.Errorf("domain y %+v", d)
	}
	if s.CommitInfo().Operation() != "WRITE" || s.Timestamp().IsZero() {
		t.Errorf("commitInfo %v ts %v", s.CommitInfo(), s.Timestamp())
	}
	// time travel
	old, err := l.SnapshotAt(ctx, 1)
	if err != nil || old.NumFiles() != 2 {
		t.Fatalf("at 1: %v %v", old, err)
	}
	if _, err := l.SnapshotAt(ctx, 9); !errors.Is(err, ErrVersionNotFound) {
		t.Errorf("at 9: %v", err)
	}
	h, err := l.History(ctx, 2)
	if err != nil || len(h) != 2 || h[0].Version != 3 || h[1].Version != 2 {
		t.Fatalf("history %+v %v", h, err)
	}
	if h[0].CommitInfo.TxnID() == "" || h[0].CommitInfo.TxnID() == h[1].CommitInfo.TxnID() {
		t.Errorf("txnIds %q %q", h[0].CommitInfo.TxnID(), h[1].CommitInfo.TxnID())
	}
}

func TestSnapshotAsOf(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	var now int64 = 1_700_000_000_000
	clock := func() time.Time { return time.UnixMilli(now) }
	st.now = clock // commit times are the files' modification times, as in Delta
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true, Now: clock})
	s := createTable(t, l)
	for i := 1; i <= 5; i++ {
		now += 1000
		mustCommit(t, l, s, addAction(fmt.Sprintf("f%d", i), true))
		s, _ = l.Snapshot(ctx)
	}
	for _, tc := range []struct {
		at   int64
		want int64
	}{{1_700_000_000_000, 0}, {1_700_000_000_999, 0}, {1_700_000_001_000, 1}, {1_700_000_003_500, 3}, {1_700_000_005_000, 5}} {
		got, err := l.SnapshotAsOf(ctx, time.UnixMilli(tc.at))
		if err != nil || got.Version() != tc.want {
			t.Errorf("as of %d: %v %v want %d", tc.at, got, err, tc.want)
		}
	}
	if _, err := l.SnapshotAsOf(ctx, time.UnixMilli(1)); !errors.Is(err, ErrTimestampOutOfRange) {
		t.Errorf("before first: %v", err)
	}
	// After the latest commit (version 5 at ...5_000) is refused, as Delta
	// does: a commit landing before it would change the answer.
	if _, err := l.SnapshotAsOf(ctx, time.UnixMilli(1_700_000_005_001)); !errors.Is(err, ErrTimestampOutOfRange) || !strings.Contains(err.Error(), "after the latest commit (version 5") {
		t.Errorf("after the latest: %v, want ErrTimestampOutOfRange naming version 5", err)
	}
	// Within the latest commit's millisecond is at it (found by review).
	if got, err := l.SnapshotAsOf(ctx, time.UnixMilli(1_700_000_005_000).Add(500*time.Microsecond)); err != nil || got.Version() != 5 {
		t.Errorf("latest commit + 0.5 ms: %v %v, want version 5", got, err)
	}
}

func TestGapIsCorrupt(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s := createTable(t, l)
	mustCommit(t, l, s, addAction("a", true))
	s, _ = l.Snapshot(ctx)
	mustCommit(t, l, s, addAction("b", true))
	s, _ = l.Snapshot(ctx)
	mustCommit(t, l, s, addAction("c", true))
	st.Delete(ctx, CommitPath(1))
	st.Delete(ctx, CommitPath(2))
	_, err := l.Snapshot(ctx)
	var ce *CorruptLogError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "versions not contiguous: missing 1-2") {
		t.Fatalf("err = %v", err)
	}
}

func TestPathOutsideTableRefused(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	createTable(t, l)
	st.put(CommitPath(1), `{"add":{"path":"../other/x.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`+"\n")
	if _, err := l.Snapshot(ctx); !errors.Is(err, ErrPathOutsideTable) || !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("err = %v", err)
	}
	s0, _ := l.SnapshotAt(ctx, 0)
	tx := l.Begin(s0)
	tx.Add(addAction("s3://elsewhere/x.parquet", true))
	if _, err := tx.Commit(ctx, "WRITE", nil, nil); !errors.Is(err, ErrPathOutsideTable) {
		t.Fatalf("commit err = %v", err)
	}
}

// txnKind builds our transaction for the conflict matrix.
type txnKind struct {
	name  string
	build func(tx *Transaction)
}

func TestConflictMatrix(t *testing.T) {
	ours := []txnKind{
		{"blind append", func(tx *Transaction) { tx.Add(addAction("new-ours", true)) }},
		{"complete replace", func(tx *Transaction) {
			tx.ReadWholeTable()
			tx.Add(removeAction("f1", true), removeAction("f2", true), addAction("new-ours", true))
		}},
		{"compaction", func(tx *Transaction) {
			tx.ReadFiles("f1", "f2")
			tx.Add(removeAction("f1", false), removeAction("f2", false), addAction("compacted-ours", false))
		}},
		{"streaming append q1", func(tx *Transaction) {
			tx.ReadTxn("q1")
			tx.Add(addAction("new-ours", true), Action{Txn: &Txn{AppID: "q1", Version: 5}})
		}},
		// A MERGE rewrites f1 and read the files its keys may be in: "w1"
		// and "c" stand for added files whose stats overlap its keys.
		{"merge", func(tx *Transaction) {
			tx.ReadFiles("f1")
			tx.ReadPredicate(func(a *Add) bool { return a.Path == "w1" || a.Path == "c" })
			tx.Add(removeAction("f1", true), addAction("new-ours", true))
		}},
	}
	md := Metadata{ID: "tbl", Format: Format{Provider: "parquet"}, SchemaString: testSchema, Configuration: map[string]string{"x": "y"}}
	proto := Protocol{MinReaderVersion: 1, MinWriterVersion: 3}
	winners := []struct {
		name string
		acts []Action
		// expected kind per ours kind ("" = commits)
		want map[string]string
	}{
		{"append", []Action{addAction("w1", true)}, map[string]string{"complete replace": ConflictConcurrentAppend, "merge": ConflictConcurrentAppend}},
		{"append w2", []Action{addAction("w2", true)}, map[string]string{"complete replace": ConflictConcurrentAppend}},
		{"remove f1", []Action{removeAction("f1", true)}, map[string]string{"complete replace": ConflictConcurrentDeleteRead, "compaction": ConflictConcurrentDeleteRead, "merge": ConflictConcurrentDeleteRead}},
		{"remove f3", []Action{removeAction("f3", true)}, map[string]string{"complete replace": ConflictConcurrentDeleteRead}},
		{"txn q1", []Action{{Txn: &Txn{AppID: "q1", Version: 4}}}, map[string]string{"streaming append q1": ConflictConcurrentTransaction}},
		{"txn q2", []Action{{Txn: &Txn{AppID: "q2", Version: 4}}}, map[string]string{}},
		{"metadata", []Action{{MetaData: &md}}, map[string]string{"blind append": ConflictMetadataChanged, "complete replace": ConflictMetadataChanged, "compaction": ConflictMetadataChanged, "streaming append q1": ConflictMetadataChanged, "merge": ConflictMetadataChanged}},
		{"protocol", []Action{{Protocol: &proto}}, map[string]string{"blind append": ConflictProtocolChanged, "complete replace": ConflictProtocolChanged, "compaction": ConflictProtocolChanged, "streaming append q1": ConflictProtocolChanged, "merge": ConflictProtocolChanged}},
		// Delta checks added files first, and counts a compaction's
		// dataChange=false adds among them (ConflictChecker.scala,
		// WinningCommitSummary.changedDataAddedFiles).
		{"compaction f1 f2", []Action{removeAction("f1", false), removeAction("f2", false), addAction("c", false)},
			map[string]string{"complete replace": ConflictConcurrentAppend, "compaction": ConflictConcurrentDeleteRead, "merge": ConflictConcurrentAppend}},
		{"compaction f3", []Action{removeAction("f3", false), addAction("c3", false)},
			map[string]string{"complete replace": ConflictConcurrentAppend}},
	}
	ctx := context.Background()
	for _, w := range winners {
		for _, o := range ours {
			t.Run(w.name+" vs "+o.name, func(t *testing.T) {
				st := newMemStore()
				l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
				s0 := createTable(t, l)
				mustCommit(t, l, s0, addAction("f1", true), addAction("f2", true), addAction("f3", true))
				base, err := l.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				// winner commits first from the same base
				mustCommit(t, l, base, w.acts...)
				tx := l.Begin(base)
				o.build(tx)
				v, err := tx.Commit(ctx, "WRITE", nil, nil)
				want := w.want[o.name]
				if want == "" {
					if err != nil {
						t.Fatalf("want commit, got %v", err)
					}
					if v != 3 {
						t.Fatalf("committed at %d, want 3", v)
					}
					return
				}
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Kind != want || !errors.Is(err, ErrConcurrentModification) {
					t.Fatalf("want %s, got %v", want, err)
				}
				if ce.ReadVersion != 1 || ce.WinningVersion != 2 {
					t.Errorf("versions %+v", ce)
				}
				if st.has(CommitPath(3)) {
					t.Errorf("conflicting commit was written")
				}
			})
		}
	}
}

func TestWriteSerializableIgnoresBlindAppend(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s0 := createTable(t, l)
	mustCommit(t, l, s0, addAction("f1", true))
	base, _ := l.Snapshot(ctx)
	mustCommit(t, l, base, addAction("w", true)) // blind append
	tx := l.Begin(base)
	tx.SetIsolation(WriteSerializable)
	tx.ReadWholeTable()
	tx.Add(addAction("x", true))
	if _, err := tx.Commit(ctx, "WRITE", nil, nil); err != nil {
		t.Fatalf("WriteSerializable vs blind append: %v", err)
	}
}

// TestReadPredicateIsolation: a blind append matching a read predicate
// conflicts under Serializable and not under WriteSerializable (Delta's
// ConflictChecker.checkForAddedFilesThatShouldHaveBeenReadByCurrentTxn); an
// add that does not match never conflicts.
func TestReadPredicateIsolation(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		iso  Isolation
		add  string
		want bool
	}{
		{Serializable, "hit", true},
		{Serializable, "miss", false},
		{WriteSerializable, "hit", false},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.iso, tc.add), func(t *testing.T) {
			l := newTestLog(t, newMemStore(), Options{DisableAutoCheckpoint: true})
			s0 := createTable(t, l)
			mustCommit(t, l, s0, addAction("f1", true))
			base, _ := l.Snapshot(ctx)
			mustCommit(t, l, base, addAction(tc.add, true)) // blind append
			tx := l.Begin(base)
			tx.SetIsolation(tc.iso)
			tx.ReadFiles("f1")
			tx.ReadPredicate(func(a *Add) bool { return a.Path == "hit" })
			tx.Add(removeAction("f1", true), addAction("x", true))
			_, err := tx.Commit(ctx, "MERGE", nil, nil)
			var ce *ConflictError
			if got := errors.As(err, &ce) && ce.Kind == ConflictConcurrentAppend; got != tc.want {
				t.Fatalf("conflict=%v (err %v), want %v", got, err, tc.want)
			}
			if !tc.want && err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestConcurrentBlindAppends(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	// automatic checkpoints keep the snapshot refreshes cheap
	l := newTestLog(t, st, Options{CommitAttempts: 1000})
	s0 := createTable(t, l)
	const writers, perWriter = 8, 20 // 160 commits, most of them rebased over others
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := s0
			for i := range perWriter {
				if i%5 == 4 { // mostly stale read versions, on purpose
					s, err := l.Snapshot(ctx)
					if err != nil {
						errs <- err
						return
					}
					base = s
				}
				tx := l.Begin(base)
				tx.Add(addAction(fmt.Sprintf("w%d-%d", w, i), true))
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
	if s.Version() != writers*perWriter || s.NumFiles() != writers*perWriter {
		t.Fatalf("version %d files %d", s.Version(), s.NumFiles())
	}
}

func TestAttemptsExhausted(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true, CommitAttempts: 2})
	s0 := createTable(t, l)
	n := 0
	sneak := faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Mode: faultstore.Call, Func: func(faultstore.Op, string) {
		// another writer sneaks a blind append in before every attempt
		n++
		v := int64(n)
		b, _ := EncodeCommit([]Action{{CommitInfo: CommitInfo{"isBlindAppend": []byte("true")}}, addAction(fmt.Sprintf("o%d", v), true)})
		_ = st.mem.PutIfAbsent(ctx, CommitPath(v), b)
	}}
	if err := st.Add(sneak); err != nil {
		t.Fatal(err)
	}
	tx := l.Begin(s0)
	tx.Add(addAction("mine", true))
	_, err := tx.Commit(ctx, "WRITE", nil, nil)
	if !errors.Is(err, ErrVersionAlreadyExists) || !errors.Is(err, ErrConcurrentModification) {
		t.Fatalf("err = %v", err)
	}
}

func TestCommitStateUnknown(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		landed  bool
		wantErr error
	}{
		{"landed: success", true, nil},
		{"not landed: unknown", false, ErrCommitStateUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
			s0 := createTable(t, l)
			// a timeout on the commit put: it landed (FailAfter) or not
			timeout := faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Mode: faultstore.FailBefore, Err: storage.ErrCommitStateUnknown}
			if tc.landed {
				timeout.Mode = faultstore.FailAfter
			}
			if err := st.Add(timeout); err != nil {
				t.Fatal(err)
			}
			tx := l.Begin(s0)
			tx.Add(addAction("x", true))
			v, err := tx.Commit(ctx, "WRITE", nil, nil)
			if tc.wantErr == nil {
				if err != nil || v != 1 {
					t.Fatalf("v=%d err=%v", v, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, storage.ErrCommitStateUnknown) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// the version holds another writer's commit: conflict path, then retry.
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s0 := createTable(t, l)
	// the first commit put: another writer's commit lands at the version,
	// and ours times out without landing
	other := faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Nth: 1, Mode: faultstore.Call, Func: func(_ faultstore.Op, p string) {
		b, _ := EncodeCommit([]Action{{CommitInfo: CommitInfo{"txnId": []byte(`"other"`)}}, addAction("o", true)})
		_ = st.mem.Put(ctx, p, b)
	}}
	timeout := faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Nth: 1, Mode: faultstore.FailBefore, Err: storage.ErrCommitStateUnknown}
	if err := st.Add(other, timeout); err != nil {
		t.Fatal(err)
	}
	tx := l.Begin(s0)
	tx.Add(addAction("x", true))
	if v, err := tx.Commit(ctx, "WRITE", nil, nil); err != nil || v != 2 {
		t.Fatalf("v=%d err=%v", v, err)
	}
}

func TestCommitInfoContent(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true, EngineInfo: "lakesink/test"})
	s0 := createTable(t, l)
	tx := l.Begin(s0)
	tx.Add(addAction("x", true))
	if _, err := tx.Commit(ctx, "STREAMING UPDATE", map[string]any{"outputMode": "Append", "epochId": int64(3), "partitionBy": []string{}}, map[string]any{"numFiles": 1}); err != nil {
		t.Fatal(err)
	}
	acts, err := l.ReadCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ci := acts[0].CommitInfo
	if ci == nil {
		t.Fatalf("commitInfo not first: %+v", acts[0])
	}
	p := ci.StringMap("operationParameters")
	if p["outputMode"] != "Append" || p["epochId"] != "3" || p["partitionBy"] != "[]" {
		t.Errorf("params %v", p)
	}
	if ci.StringMap("operationMetrics")["numFiles"] != "1" || !ci.IsBlindAppend() || ci.Operation() != "STREAMING UPDATE" {
		t.Errorf("ci %s", mustJSON(ci))
	}
	if e, _ := ci.String("engineInfo"); e != "lakesink/test" {
		t.Errorf("engineInfo %q", e)
	}
	if rv, ok := ci.ReadVersion(); !ok || rv != 0 {
		t.Errorf("readVersion %d", rv)
	}
}

func mustJSON(v interface{ MarshalJSON() ([]byte, error) }) string {
	b, _ := v.MarshalJSON()
	return string(b)
}

func TestNewTableProtocolNTZ(t *testing.T) {
	nested := NewTableProtocol(`{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"timestamp_ntz","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}}]}`)
	if nested.MinReaderVersion != 3 {
		t.Errorf("nested ntz: %+v", nested)
	}
	named := NewTableProtocol(`{"type":"struct","fields":[{"name":"timestamp_ntz","type":"long","nullable":true,"metadata":{}}]}`)
	if named.MinReaderVersion != 1 || named.MinWriterVersion != 2 {
		t.Errorf("column named timestamp_ntz: %+v", named)
	}
	p := NewTableProtocol(`{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]}`)
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || fmt.Sprint(p.ReaderFeatures, p.WriterFeatures) != "[timestampNtz] [timestampNtz]" {
		t.Errorf("%+v", p)
	}
}

func TestFeatureChecks(t *testing.T) {
	md := Metadata{Configuration: map[string]string{}}
	cm := Metadata{Configuration: map[string]string{"delta.columnMapping.mode": "name"}}
	for _, tc := range []struct {
		name      string
		p         Protocol
		m         Metadata
		read, wrt string // "" ok, else the feature named
	}{
		{"1/2", Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, md, "", ""},
		{"2/5 cm none", Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, md, "", ""},
		{"2/5 cm name", Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, cm, "columnMapping", "columnMapping"},
		{"4/7", Protocol{MinReaderVersion: 4, MinWriterVersion: 7}, md, "readerVersion 4", "readerVersion 4"},
		{"3/7 ntz", Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}, md, "", ""},
		{"3/7 dv", Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}, md, "deletionVectors", ""},
		{"3/7 unknown", Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"fancy"}, WriterFeatures: []string{"fancy"}}, md, "fancy", "fancy"},
		{"1/7 identity inactive", Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "invariants", "identityColumns"}}, md, "", ""},
		{"1/7 rowTracking", Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"rowTracking"}}, md, "", "rowTracking"},
		{"1/2 invariants active", Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, Metadata{SchemaString: `{"metadata":{"delta.invariants":"x"}}`}, "", "invariants"},
		{"1/3 check constraint", Protocol{MinReaderVersion: 1, MinWriterVersion: 3}, Metadata{Configuration: map[string]string{"delta.constraints.c": "id > 0"}}, "", "checkConstraints"},
		{"1/8", Protocol{MinReaderVersion: 1, MinWriterVersion: 8}, md, "", "writerVersion 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(err error, want string) {
				t.Helper()
				if want == "" {
					if err != nil {
						t.Errorf("want ok, got %v", err)
					}
					return
				}
				var ufe *UnsupportedFeatureError
				if !errors.As(err, &ufe) || ufe.Feature != want || !errors.Is(err, ErrUnsupportedFeature) {
					t.Errorf("want %s, got %v", want, err)
				}
			}
			check(CheckReadSupported(tc.p, tc.m), tc.read)
			check(CheckWriteSupported(tc.p, tc.m), tc.wrt)
		})
	}
}

func TestMetadataChangeConflictsWithAppend(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s0 := createTable(t, l)
	mustCommit(t, l, s0, addAction("w", true)) // a concurrent blind append
	tx := l.Begin(s0)
	md := s0.Metadata()
	md.Configuration = map[string]string{"delta.appendOnly": "true"}
	tx.Add(Action{MetaData: &md})
	_, err := tx.Commit(ctx, "SET TBLPROPERTIES", nil, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Kind != ConflictConcurrentAppend {
		t.Fatalf("err = %v", err)
	}
}

func TestSetCommitInfoAndAppendOnly(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	s0 := createTable(t, l)
	tx := l.Begin(s0)
	if err := tx.SetCommitInfo("userMetadata", "hello"); err != nil {
		t.Fatal(err)
	}
	md := s0.Metadata()
	md.Configuration = map[string]string{"delta.appendOnly": "true"}
	tx.Add(Action{MetaData: &md}, addAction("a", true))
	if _, err := tx.Commit(ctx, "WRITE", nil, nil); err != nil {
		t.Fatal(err)
	}
	s, _ := l.Snapshot(ctx)
	if u, _ := s.CommitInfo().String("userMetadata"); u != "hello" {
		t.Errorf("userMetadata %q", u)
	}
	tx = l.Begin(s)
	tx.Add(removeAction("a", true))
	if _, err := tx.Commit(ctx, "DELETE", nil, nil); !errors.Is(err, ErrInvalidTransaction) {
		t.Fatalf("remove on append-only table: %v", err)
	}
	tx = l.Begin(s) // dataChange=false rearrangement is allowed
	tx.ReadFiles("a")
	tx.Add(removeAction("a", false), addAction("b", false))
	if _, err := tx.Commit(ctx, "OPTIMIZE", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestInCommitTimestamps(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clock := int64(1_700_000_000_000)
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true, Now: func() time.Time { return time.UnixMilli(clock) }})
	tx := l.Begin(nil)
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{FeatureInCommitTimestamp}}
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "ict", SchemaString: testSchema,
		Configuration: map[string]string{"delta.enableInCommitTimestamps": "true"}}})
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil {
		t.Fatal(err)
	}
	s0, _ := l.Snapshot(ctx)
	clock -= 5000 // the clock goes backwards: the timestamp must still increase
	mustCommit(t, l, s0, addAction("a", true))
	s1, _ := l.Snapshot(ctx)
	acts, _ := l.ReadCommit(ctx, 1)
	ict, ok := acts[0].CommitInfo.InCommitTimestamp()
	if !ok || ict != 1_700_000_000_001 {
		t.Fatalf("ict %d %v (first action %s)", ict, ok, mustJSON(acts[0]))
	}
	if !s1.Timestamp().Equal(time.UnixMilli(ict)) || !s1.Timestamp().After(s0.Timestamp()) {
		t.Errorf("timestamps %v %v", s0.Timestamp(), s1.Timestamp())
	}
}

// TestInCommitTimestampWrittenOnlyWithTheFeature: the property alone on a
// 1/2 table (no inCommitTimestamp writer feature) does not make commits
// carry inCommitTimestamp (PROTOCOL.md "In-Commit Timestamps": the feature
// must be supported and enabled).
func TestInCommitTimestampWrittenOnlyWithTheFeature(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, newMemStore(), Options{DisableAutoCheckpoint: true})
	tx := l.Begin(nil)
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "ict", SchemaString: testSchema,
		Configuration: map[string]string{"delta.enableInCommitTimestamps": "true"}}})
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil {
		t.Fatal(err)
	}
	s0, _ := l.Snapshot(ctx)
	mustCommit(t, l, s0, addAction("a", true))
	for v := int64(0); v <= 1; v++ {
		acts, _ := l.ReadCommit(ctx, v)
		if ict, ok := acts[0].CommitInfo.InCommitTimestamp(); ok {
			t.Errorf("version %d carries inCommitTimestamp %d on a table without the feature", v, ict)
		}
	}
}
