package txlog

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// rowTrackingTable creates a table with the rowTracking feature supported
// (writer 7, domainMetadata + rowTracking), as Spark's
// delta.enableRowTracking=true makes it.
func rowTrackingTable(t *testing.T, l *Log) *Snapshot {
	t.Helper()
	ctx := context.Background()
	tx := l.Begin(nil)
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{FeatureDomainMetadata, FeatureRowTracking}}
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "tbl", Format: Format{Provider: "parquet"}, SchemaString: testSchema,
		Configuration: map[string]string{"delta.enableRowTracking": "true"}}})
	tx.Honour(FeatureRowTracking)
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil {
		t.Fatal(err)
	}
	s, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func addRows(path string, n string) Action {
	return Action{Add: &Add{Path: path, Size: 10, ModificationTime: 1, DataChange: true, Stats: `{"numRecords":` + n + `}`}}
}

func commitHonouring(t *testing.T, l *Log, snap *Snapshot, acts ...Action) (int64, error) {
	t.Helper()
	tx := l.Begin(snap)
	tx.Honour(FeatureRowTracking)
	tx.Add(acts...)
	return tx.Commit(context.Background(), "WRITE", map[string]any{"mode": "Append"}, nil)
}

// rowIDs returns path -> (baseRowId, defaultRowCommitVersion) of snap's
// files and its high-water mark.
func rowIDs(t *testing.T, snap *Snapshot) (map[string][2]int64, int64) {
	t.Helper()
	out := map[string][2]int64{}
	for _, a := range snap.Files() {
		if a.BaseRowID == nil || a.DefaultRowCommitVersion == nil {
			t.Fatalf("%s: baseRowId %v defaultRowCommitVersion %v, want both", a.Path, a.BaseRowID, a.DefaultRowCommitVersion)
		}
		out[a.Path] = [2]int64{*a.BaseRowID, *a.DefaultRowCommitVersion}
	}
	hwm, err := RowIDHighWaterMark(snap.domains)
	if err != nil {
		t.Fatal(err)
	}
	return out, hwm
}

// PROTOCOL.md "Writer Requirements for Row Tracking": fresh row ids above
// the high-water mark, numRecords apart, defaultRowCommitVersion = the
// commit's version, the mark in the delta.rowTracking domain.
func TestRowTrackingAssignsFreshRowIDs(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, newMemStore(), Options{})
	snap := rowTrackingTable(t, l)
	if _, err := commitHonouring(t, l, snap, addRows("a.parquet", "3"), addRows("b.parquet", "2")); err != nil {
		t.Fatal(err)
	}
	snap, _ = l.Snapshot(ctx)
	if _, err := commitHonouring(t, l, snap, addRows("c.parquet", "4")); err != nil {
		t.Fatal(err)
	}
	snap, _ = l.Snapshot(ctx)
	got, hwm := rowIDs(t, snap)
	want := map[string][2]int64{"a.parquet": {0, 1}, "b.parquet": {3, 1}, "c.parquet": {5, 2}}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: (baseRowId, defaultRowCommitVersion) = %v, want %v", p, got[p], w)
		}
	}
	if hwm != 8 {
		t.Errorf("rowIdHighWaterMark %d, want 8", hwm)
	}
	d, _ := snap.DomainMetadata(DomainRowTracking)
	if d.Configuration != `{"rowIdHighWaterMark":8}` {
		t.Errorf("domain configuration %q, want Delta's RowTrackingMetadataDomain JSON", d.Configuration)
	}
}

// A commit that lost the race to another appender takes its row ids above
// the winner's high-water mark and its version (not a domain conflict:
// Delta's ConflictChecker reassigns them).
func TestRowTrackingReassignedAfterLostRace(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, newMemStore(), Options{})
	snap := rowTrackingTable(t, l)
	loser := l.Begin(snap)
	loser.Honour(FeatureRowTracking)
	loser.Add(addRows("late.parquet", "5"))
	if _, err := commitHonouring(t, l, snap, addRows("first.parquet", "2")); err != nil {
		t.Fatal(err)
	}
	v, err := loser.Commit(ctx, "WRITE", map[string]any{"mode": "Append"}, nil)
	if err != nil || v != 2 {
		t.Fatalf("loser commit: version %d, %v; want 2 after a retry", v, err)
	}
	snap, _ = l.Snapshot(ctx)
	got, hwm := rowIDs(t, snap)
	if got["first.parquet"] != [2]int64{0, 1} || got["late.parquet"] != [2]int64{2, 2} || hwm != 6 {
		t.Errorf("row ids %v, high-water mark %d; want first (0,1), late (2,2), 6", got, hwm)
	}
}

// Without numRecords no row ids can be assigned: the commit fails naming
// the file, nothing is committed.
func TestRowTrackingNeedsNumRecords(t *testing.T) {
	l := newTestLog(t, newMemStore(), Options{})
	snap := rowTrackingTable(t, l)
	a := addRows("nostats.parquet", "1")
	a.Add.Stats = ""
	_, err := commitHonouring(t, l, snap, a)
	if !errors.Is(err, ErrInvalidTransaction) || !strings.Contains(err.Error(), "nostats.parquet") {
		t.Fatalf("err = %v, want ErrInvalidTransaction naming nostats.parquet", err)
	}
	if s, _ := l.Snapshot(context.Background()); s.Version() != 0 {
		t.Errorf("version %d after the failed commit, want 0", s.Version())
	}
}

// A writer that does not declare rowTracking (OPTIMIZE, Merge: they rewrite
// rows, whose stable row ids they would have to preserve) is refused.
func TestRowTrackingRefusedWithoutHonour(t *testing.T) {
	l := newTestLog(t, newMemStore(), Options{})
	snap := rowTrackingTable(t, l)
	tx := l.Begin(snap)
	tx.Add(addRows("x.parquet", "1"))
	_, err := tx.Commit(context.Background(), "OPTIMIZE", nil, nil)
	var ufe *UnsupportedFeatureError
	if !errors.As(err, &ufe) || ufe.Feature != FeatureRowTracking {
		t.Fatalf("err = %v, want *UnsupportedFeatureError for rowTracking", err)
	}
}

func TestAssignRowIDsKeepsExistingIDs(t *testing.T) {
	base, dcv := int64(40), int64(3)
	re := Action{Add: &Add{Path: "re.parquet", DataChange: false, Stats: `{"numRecords":9}`, BaseRowID: &base, DefaultRowCommitVersion: &dcv}}
	out, err := assignRowIDs([]Action{re}, 8, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || *out[0].Add.BaseRowID != 40 || *out[0].Add.DefaultRowCommitVersion != 3 {
		t.Errorf("a recommitted add must keep its baseRowId and defaultRowCommitVersion: %+v (len %d)", out[0].Add, len(out))
	}
	if re.Add.BaseRowID != &base {
		t.Error("assignRowIDs modified its input")
	}
}
