package compaction

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// writeUncommitted writes rows as data files the way a writer does before
// its commit (issue 14, item 4): the files exist, no commit names them yet.
func writeUncommitted(t *testing.T, st storage.Store, rows [][]any) []parquetio.WrittenFile {
	t.Helper()
	files, err := parquetio.WriteFiles(context.Background(), st, &schema.Batch{Schema: flightsSchema(), Rows: rows},
		parquetio.WriteOptions{PartitionColumns: []string{"origin"}})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// commitFiles commits adds of files, as the sink does after writing them.
func commitFiles(t *testing.T, tb *table.Table, files []parquetio.WrittenFile) int64 {
	t.Helper()
	ctx := context.Background()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx := tb.Log().Begin(snap)
	for _, f := range files {
		tx.Add(txlog.Action{Add: &txlog.Add{Path: txlog.EncodePath(f.Path), PartitionValues: f.PartitionValues,
			Size: f.Size, ModificationTime: f.ModificationTime.UnixMilli(), DataChange: true, Stats: f.Stats}})
	}
	v, err := tx.Commit(ctx, "WRITE", map[string]any{"mode": "Append"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVacuumRetainZeroKeepsFilesOfACommitInFlight is issue 14 item 4:
// `vacuum --retain 0h --force` deleted the data files of a batch being
// written, so its commit named deleted files. Untracked files younger than
// the floor (1 hour) now survive any retention; the commit that follows
// names files that exist, and every row reads back once. Past the floor an
// untracked file that no commit ever named is deleted.
func TestVacuumRetainZeroKeepsFilesOfACommitInFlight(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, []string{"origin"}, nil)
	var want [][]any
	for i := range 3 {
		rows := flightsRows(int64(i*20), 20, origins)
		appendRows(t, tb, rows)
		want = append(want, rows...)
	}
	compacted := liveKeys(t, tb)
	optimizeAt(t, tb, time.Now())

	inflightRows := flightsRows(1000, 30, origins)
	inflight := writeUncommitted(t, st, inflightRows)
	leftover := writeUncommitted(t, st, flightsRows(5000, 5, origins)) // a crashed writer's, never committed
	now := time.Now().Add(time.Second)
	res, err := Vacuum(ctx, tb, VacuumOptions{RetainZero: true, Force: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	left := listKeys(t, st)
	for _, f := range append(slices.Clone(inflight), leftover...) {
		if !slices.Contains(left, f.Path) {
			t.Errorf("uncommitted file %s younger than the floor was deleted", f.Path)
		}
	}
	for _, k := range compacted {
		if slices.Contains(left, k) {
			t.Errorf("compacted-away file %s kept with retention 0", k)
		}
	}
	if res.UntrackedKept != len(inflight)+len(leftover) || res.FilesDeleted != len(compacted) {
		t.Errorf("result: %d untracked kept, %d deleted; want %d, %d", res.UntrackedKept, res.FilesDeleted, len(inflight)+len(leftover), len(compacted))
	}

	// The commit in flight lands: the latest snapshot reads completely.
	commitFiles(t, tb, inflight)
	want = append(want, inflightRows...)
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshot(ctx, st, snap)
	if err != nil {
		t.Fatalf("latest snapshot names a deleted file: %v", err)
	}
	if !equalRowSets(rowSet(got), rowSet(want)) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}

	// Two hours later the never-committed leftovers go; committed files stay.
	later := time.Now().Add(2 * DefaultUntrackedMinAge)
	if _, err := Vacuum(ctx, tb, VacuumOptions{RetainZero: true, Force: true, Now: func() time.Time { return later }}); err != nil {
		t.Fatal(err)
	}
	left = listKeys(t, st)
	for _, f := range leftover {
		if slices.Contains(left, f.Path) {
			t.Errorf("untracked leftover %s older than the floor was kept", f.Path)
		}
	}
	for _, f := range inflight {
		if !slices.Contains(left, f.Path) {
			t.Errorf("committed file %s deleted", f.Path)
		}
	}
}

// The floor has its own force: below 1 hour is refused without it; with it
// (and an explicit zero) an uncommitted file goes, which is the hazard the
// floor exists for.
func TestVacuumUntrackedMinAgeNeedsItsOwnForce(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, []string{"origin"}, nil)
	appendRows(t, tb, flightsRows(0, 10, origins))
	inflight := writeUncommitted(t, st, flightsRows(100, 3, origins))
	now := time.Now().Add(time.Minute)
	clock := func() time.Time { return now }
	for _, o := range []VacuumOptions{
		{RetainZero: true, Force: true, UntrackedMinAge: 30 * time.Minute},
		{RetainZero: true, Force: true, UntrackedMinAgeZero: true},
	} {
		o.Now = clock
		if _, err := Vacuum(ctx, tb, o); !errors.Is(err, ErrUntrackedMinAgeTooShort) {
			t.Fatalf("%+v: err %v, want ErrUntrackedMinAgeTooShort", o, err)
		}
	}
	// 30 s floor, files 1 min old: deleted.
	res, err := Vacuum(ctx, tb, VacuumOptions{RetainZero: true, Force: true, UntrackedMinAge: 30 * time.Second, ForceUntrackedMinAge: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if res.UntrackedMinAge != 30*time.Second || res.FilesDeleted != len(inflight) {
		t.Fatalf("floor %s, deleted %d, want 30s and %d", res.UntrackedMinAge, res.FilesDeleted, len(inflight))
	}
	// A long retention still wins over a short floor: nothing is deleted
	// that is younger than the retention.
	more := writeUncommitted(t, st, flightsRows(200, 3, origins))
	res, err = Vacuum(ctx, tb, VacuumOptions{Retention: 30 * 24 * time.Hour, UntrackedMinAgeZero: true, ForceUntrackedMinAge: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 0 || !res.UntrackedCutoff.Equal(now.Add(-30*24*time.Hour)) {
		t.Fatalf("deleted %d (untracked cutoff %s), want 0 under a 30-day retention", res.FilesDeleted, res.UntrackedCutoff)
	}
	for _, f := range more {
		if !slices.Contains(listKeys(t, st), f.Path) {
			t.Fatalf("%s deleted", f.Path)
		}
	}
}

// rootListCounter counts listings of the table directory itself (prefix
// outside _delta_log/ and _spark_metadata/).
type rootListCounter struct {
	storage.Store
	lists *atomic.Int64
}

func (s rootListCounter) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	if !strings.HasPrefix(prefix, "_delta_log/") && !strings.HasPrefix(prefix, "_spark_metadata/") {
		s.lists.Add(1)
	}
	return s.Store.List(ctx, prefix, startAfter)
}

// TestVacuumLite: Delta's VACUUM LITE deletes only the files of expired
// remove actions still in the log, without listing the table directory;
// untracked files, however old, stay for a full VACUUM. A second LITE
// finds the files gone and deletes (and commits) nothing.
func TestVacuumLite(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://compaction-lite/t")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var lists atomic.Int64
	tb, err := table.OpenStore(rootListCounter{st, &lists}, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Write(ctx, &schema.Batch{Schema: flightsSchema()}, table.WriteOptions{PartitionColumns: []string{"origin"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		appendRows(t, tb, flightsRows(int64(i*20), 20, origins))
	}
	compacted := liveKeys(t, tb)
	optimizeAt(t, tb, time.Now())
	live := liveKeys(t, tb)
	if err := st.Put(ctx, "origin=SFO/orphan.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }

	lists.Store(0)
	dry, err := Vacuum(ctx, tb, VacuumOptions{Mode: VacuumLite, DryRun: true, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if dry.FilesDeleted != len(compacted) || dry.Mode != "LITE" {
		t.Fatalf("dry run: %d files (%s), want %d", dry.FilesDeleted, dry.Mode, len(compacted))
	}
	res, err := Vacuum(ctx, tb, VacuumOptions{Mode: VacuumLite, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if n := lists.Load(); n != 0 {
		t.Errorf("VACUUM LITE listed the table directory %d times", n)
	}
	left := listKeys(t, st)
	for _, k := range compacted {
		if slices.Contains(left, k) {
			t.Errorf("expired tombstone %s not deleted", k)
		}
	}
	for _, k := range append(live, "origin=SFO/orphan.parquet") {
		if !slices.Contains(left, k) {
			t.Errorf("%s deleted by LITE", k)
		}
	}
	if res.FilesDeleted != len(compacted) {
		t.Errorf("deleted %d, want %d", res.FilesDeleted, len(compacted))
	}
	if ops := opsSince(t, tb, res.Version); !slices.Equal(ops, []string{OpVacuumEnd, OpVacuumStart}) {
		t.Errorf("commits %v", ops)
	}
	again, err := Vacuum(ctx, tb, VacuumOptions{Mode: VacuumLite, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if again.FilesDeleted != 0 || again.StartVersion != -1 {
		t.Errorf("second LITE: deleted %d, start commit %d", again.FilesDeleted, again.StartVersion)
	}
	// A full VACUUM then takes the orphan.
	full, err := Vacuum(ctx, tb, VacuumOptions{Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if full.FilesDeleted != 1 || lists.Load() == 0 {
		t.Errorf("full: deleted %d, listed %d times", full.FilesDeleted, lists.Load())
	}
	for _, s := range []string{"lite", "LITE", "Full", "full"} {
		if _, err := ParseVacuumMode(s); err != nil {
			t.Errorf("ParseVacuumMode(%q): %v", s, err)
		}
	}
	if _, err := ParseVacuumMode("quick"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("ParseVacuumMode(quick): %v", err)
	}
}

// TestVacuumRecordsStartAndEndCommits: VACUUM START and VACUUM END as Delta
// 2.3+ writes them (commitInfo only, blind), their parameters and metrics;
// a transaction that began before them commits without a conflict; a dry
// run commits nothing.
func TestVacuumRecordsStartAndEndCommits(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, []string{"origin"}, nil)
	for i := range 3 {
		appendRows(t, tb, flightsRows(int64(i*20), 20, origins))
	}
	compacted := liveKeys(t, tb)
	optimizeAt(t, tb, time.Now())
	later := func() time.Time { return time.Now().Add(time.Second) }

	before, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := Vacuum(ctx, tb, VacuumOptions{RetainZero: true, Force: true, DryRun: true, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if dry.StartVersion != -1 || len(opsSince(t, tb, before.Version())) != 0 {
		t.Fatalf("dry run committed: start %d, ops %v", dry.StartVersion, opsSince(t, tb, before.Version()))
	}
	// A writer that read `before` and commits after VACUUM.
	pending := tb.Log().Begin(before)
	files := writeUncommitted(t, st, flightsRows(900, 6, origins))
	for _, f := range files {
		pending.Add(txlog.Action{Add: &txlog.Add{Path: txlog.EncodePath(f.Path), PartitionValues: f.PartitionValues,
			Size: f.Size, ModificationTime: f.ModificationTime.UnixMilli(), DataChange: true, Stats: f.Stats}})
	}
	pending.ReadFiles(liveKeys(t, tb)...)

	res, err := Vacuum(ctx, tb, VacuumOptions{RetainZero: true, Force: true, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if res.StartVersion != before.Version()+1 || res.EndVersion != before.Version()+2 {
		t.Fatalf("start %d end %d, want %d and %d", res.StartVersion, res.EndVersion, before.Version()+1, before.Version()+2)
	}
	for _, v := range []int64{res.StartVersion, res.EndVersion} {
		acts, err := tb.Log().ReadCommit(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(acts) != 1 || acts[0].CommitInfo == nil {
			t.Fatalf("version %d has %d actions, want commitInfo alone", v, len(acts))
		}
	}
	h, err := tb.Log().History(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	end, start := h[0].CommitInfo, h[1].CommitInfo
	if start.Operation() != "VACUUM START" || end.Operation() != "VACUUM END" {
		t.Fatalf("operations %q, %q", start.Operation(), end.Operation())
	}
	wantParams := map[string]string{"retentionCheckEnabled": "false", "defaultRetentionMillis": "604800000", "specifiedRetentionMillis": "0"}
	if p := start.StringMap("operationParameters"); !mapsEqual(p, wantParams) {
		t.Errorf("VACUUM START operationParameters %v, want %v", p, wantParams)
	}
	var size int64
	for _, f := range res.Files {
		size += f.Size
	}
	wantStart := map[string]string{"numFilesToDelete": strconv.Itoa(len(compacted)), "sizeOfDataToDelete": strconv.FormatInt(size, 10)}
	if m := start.StringMap("operationMetrics"); !mapsEqual(m, wantStart) {
		t.Errorf("VACUUM START operationMetrics %v, want %v", m, wantStart)
	}
	if p := end.StringMap("operationParameters"); !mapsEqual(p, map[string]string{"status": "COMPLETED"}) {
		t.Errorf("VACUUM END operationParameters %v", p)
	}
	wantEnd := map[string]string{"numDeletedFiles": strconv.Itoa(len(compacted)), "numVacuumedDirectories": "4"}
	if m := end.StringMap("operationMetrics"); !mapsEqual(m, wantEnd) {
		t.Errorf("VACUUM END operationMetrics %v, want %v", m, wantEnd)
	}
	if !start.IsBlindAppend() || !end.IsBlindAppend() {
		t.Error("VACUUM commits are not blind")
	}
	// The writer that read `before` wins its commit over both.
	v, err := pending.Commit(ctx, "WRITE", map[string]any{"mode": "Append"}, nil)
	if err != nil {
		t.Fatalf("commit after VACUUM START/END: %v", err)
	}
	if v != res.EndVersion+1 {
		t.Fatalf("version %d, want %d", v, res.EndVersion+1)
	}
	// The table default retention is not specified: no specifiedRetentionMillis.
	optimizeAt(t, tb, time.Now())
	res, err = Vacuum(ctx, tb, VacuumOptions{Now: func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	h, err = tb.Log().History(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h[1].CommitInfo.StringMap("operationParameters")["specifiedRetentionMillis"]; ok || res.StartVersion != h[1].Version {
		t.Errorf("default retention: START %v at %d (result %d)", h[1].CommitInfo.StringMap("operationParameters"), h[1].Version, res.StartVersion)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
