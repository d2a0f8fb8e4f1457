package compaction

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

func listKeys(t *testing.T, st storage.Store) []string {
	t.Helper()
	var keys []string
	for fi, err := range st.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, fi.Path)
	}
	return keys
}

func liveKeys(t *testing.T, tb *table.Table) []string {
	t.Helper()
	snap, err := tb.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, a := range snap.Files() {
		k, err := snap.FileKey(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// optimizeAt compacts the table with deletionTimestamp = now.
func optimizeAt(t *testing.T, tb *table.Table, now time.Time) *Result {
	t.Helper()
	_, res, err := Optimize(context.Background(), tb, PlanOptions{}, ExecOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumRemovedFiles == 0 {
		t.Fatal("optimize removed nothing")
	}
	return res
}

func TestVacuum(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	for _, tc := range []struct {
		name     string
		origins  []string
		removeAt time.Duration // deletionTimestamp of the compacted files, from now
		vacuumAt time.Duration // the vacuum's clock, from now
		opts     VacuumOptions
		// extra files written directly into the store (orphans / hidden)
		extra          []string
		wantRemoved    bool // the compacted-away files are deleted
		wantExtraGone  []string
		wantExtraKept  []string
		dryRun         bool
		wantErr        error
		checkRetention bool
	}{
		{
			name: "escaped partition directories", origins: []string{"New York", "a:b", "x/y%z"},
			vacuumAt: 8 * day, wantRemoved: true,
			extra:         []string{"origin=a%3Ab/orphan.parquet", "origin=New York/orphan.parquet"},
			wantExtraGone: []string{"origin=a%3Ab/orphan.parquet", "origin=New York/orphan.parquet"},
		},
		{
			name: "hidden names are never touched", origins: []string{"SFO"},
			vacuumAt: 8 * day, wantRemoved: true,
			extra:         []string{"_hidden/a.parquet", ".tmp/b.parquet", "_SUCCESS", "origin=SFO/_x.parquet", "origin=SFO/.y.crc", "_delta_log/junk.json", "orphan.parquet", "_change_data/cdc.parquet"},
			wantExtraKept: []string{"_hidden/a.parquet", ".tmp/b.parquet", "_SUCCESS", "origin=SFO/_x.parquet", "origin=SFO/.y.crc", "_delta_log/junk.json"},
			wantExtraGone: []string{"orphan.parquet", "_change_data/cdc.parquet"},
		},
		{
			name: "tombstones inside the retention window are kept", origins: origins,
			removeAt: 5 * day, vacuumAt: 8 * day, wantRemoved: false,
		},
		{
			name: "young orphans are kept", origins: origins,
			vacuumAt: 8 * day, opts: VacuumOptions{Retention: 30 * day}, wantRemoved: false,
			extra: []string{"orphan.parquet"}, wantExtraKept: []string{"orphan.parquet"},
		},
		{
			name: "dry run deletes nothing", origins: origins,
			vacuumAt: 8 * day, dryRun: true, opts: VacuumOptions{DryRun: true},
			extra: []string{"orphan.parquet"}, wantExtraKept: []string{"orphan.parquet"},
		},
		{
			name: "short retention refused", origins: origins, vacuumAt: 8 * day,
			opts: VacuumOptions{Retention: time.Hour}, wantErr: ErrRetentionTooShort,
		},
		{
			name: "short retention forced", origins: origins, vacuumAt: 2 * time.Hour,
			opts: VacuumOptions{Retention: time.Hour, Force: true}, wantRemoved: true,
		},
		{
			name: "table retention property", origins: origins, vacuumAt: 2 * day, wantRemoved: true,
			checkRetention: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var props map[string]string
			if tc.checkRetention {
				props = map[string]string{txlog.PropDeletedFileRetentionDuration: "interval 1 day"}
			}
			tb, st := newTable(t, []string{"origin"}, props)
			var want [][]any
			for i := range 3 {
				rows := flightsRows(int64(i*20), 20, tc.origins)
				appendRows(t, tb, rows)
				want = append(want, rows...)
			}
			before := liveKeys(t, tb)
			now := time.Now()
			optimizeAt(t, tb, now.Add(tc.removeAt))
			after := liveKeys(t, tb)
			for _, k := range tc.extra {
				if err := st.Put(ctx, k, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			logBefore := listKeysUnder(t, st, "_delta_log/")
			all := listKeys(t, st)
			opts := tc.opts
			opts.Now = func() time.Time { return now.Add(tc.vacuumAt) }
			res, err := Vacuum(ctx, tb, opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			left := listKeys(t, st)
			if tc.dryRun {
				if !slices.Equal(all, left) {
					t.Fatalf("dry run deleted files: before %v after %v", all, left)
				}
				if res.FilesDeleted != len(before)+len(tc.extra) || len(res.Files) != res.FilesDeleted {
					t.Fatalf("dry run reports %d files %v", res.FilesDeleted, res.Files)
				}
				return
			}
			has := func(k string) bool { return slices.Contains(left, k) }
			for _, k := range after {
				if !has(k) {
					t.Errorf("live file %s deleted", k)
				}
			}
			for _, k := range before {
				if has(k) == tc.wantRemoved {
					t.Errorf("compacted-away file %s present=%v, want deleted=%v", k, has(k), tc.wantRemoved)
				}
			}
			for _, k := range tc.wantExtraGone {
				if has(k) {
					t.Errorf("%s not deleted", k)
				}
			}
			for _, k := range tc.wantExtraKept {
				if !has(k) {
					t.Errorf("%s deleted", k)
				}
			}
			// The log keeps every file; a VACUUM that deleted files adds its
			// VACUUM START and VACUUM END commits (and nothing else).
			gotLog := listKeysUnder(t, st, "_delta_log/")
			for _, k := range logBefore {
				if !slices.Contains(gotLog, k) {
					t.Errorf("_delta_log lost %s", k)
				}
			}
			wantOps := []string{}
			if res.FilesDeleted > 0 {
				wantOps = []string{OpVacuumEnd, OpVacuumStart}
			}
			if ops := opsSince(t, tb, res.Version); !slices.Equal(ops, wantOps) {
				t.Errorf("commits after version %d: %v, want %v", res.Version, ops, wantOps)
			}
			var bytes int64
			for _, f := range res.Files {
				bytes += f.Size
			}
			gone := 0
			for _, k := range all {
				if !has(k) {
					gone++
				}
			}
			if res.FilesDeleted != gone || res.BytesDeleted != bytes {
				t.Errorf("result %+v, %d files gone", res, gone)
			}
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readSnapshot(ctx, st, snap)
			if err != nil {
				t.Fatalf("table unreadable after vacuum: %v", err)
			}
			if !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatal("rows changed")
			}
		})
	}
}

// opsSince lists the operations of the commits after version, newest first.
func opsSince(t *testing.T, tb *table.Table, version int64) []string {
	t.Helper()
	h, err := tb.Log().History(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ops := []string{}
	for _, e := range h {
		if e.Version > version {
			ops = append(ops, e.CommitInfo.Operation())
		}
	}
	return ops
}

func listKeysUnder(t *testing.T, st storage.Store, prefix string) []string {
	var out []string
	for _, k := range listKeys(t, st) {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// A partition column whose name starts with "_": its directories are
// partition directories, not hidden ones.
func TestVacuumUnderscorePartitionColumn(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://compaction-underscore/t")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tb, err := table.OpenStore(st)
	if err != nil {
		t.Fatal(err)
	}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "_p", Type: schema.TypeInteger, Nullable: true},
	}}
	for i := range 3 {
		rows := [][]any{{int64(i), int32(1)}, {int64(i + 10), int32(2)}}
		if _, err := tb.Write(ctx, &schema.Batch{Schema: sch, Rows: rows}, table.WriteOptions{PartitionColumns: []string{"_p"}}); err != nil {
			t.Fatal(err)
		}
	}
	before := liveKeys(t, tb)
	if !strings.HasPrefix(before[0], "_p=") {
		t.Fatalf("unexpected layout %v", before)
	}
	now := time.Now()
	optimizeAt(t, tb, now)
	after := liveKeys(t, tb)
	if err := st.Put(ctx, "_q=1/hidden.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	res, err := Vacuum(ctx, tb, VacuumOptions{Now: func() time.Time { return now.Add(8 * 24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	left := listKeys(t, st)
	for _, k := range before {
		if slices.Contains(left, k) {
			t.Errorf("%s in a _p= partition directory was not vacuumed", k)
		}
	}
	for _, k := range append(after, "_q=1/hidden.parquet") {
		if !slices.Contains(left, k) {
			t.Errorf("%s deleted", k)
		}
	}
	if res.FilesDeleted != len(before) {
		t.Errorf("deleted %d, want %d", res.FilesDeleted, len(before))
	}
}

// A converted file-sink directory: files named by _spark_metadata stay.
func TestVacuumKeepsSparkMetadataFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tb, err := table.OpenStore(st)
	if err != nil {
		t.Fatal(err)
	}
	appendRows(t, tb, flightsRows(0, 10, origins))
	named := "part-00000-sink.c000.snappy.parquet"
	if err := st.Put(ctx, named, []byte("parquet")); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "orphan.parquet", []byte("parquet")); err != nil {
		t.Fatal(err)
	}
	entry := filesink.SinkFileStatus{Path: strings.TrimSuffix(st.URL(), "/") + "/" + named, Size: 7, ModificationTime: time.Now().UnixMilli(), BlockReplication: 1, BlockSize: 33554432, Action: filesink.ActionAdd}
	data, err := filesink.EncodeLog([]filesink.SinkFileStatus{entry})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, filesink.MetadataDir+"/0", data); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }
	if _, err := Vacuum(ctx, tb, VacuumOptions{Now: later}); !errors.Is(err, ErrUnconvertedBatches) {
		t.Fatalf("vacuum with an unconverted batch: %v", err)
	}
	if got := listKeys(t, st); !slices.Contains(got, "orphan.parquet") {
		t.Fatal("refused vacuum deleted files")
	}
	res, err := Vacuum(ctx, tb, VacuumOptions{Now: later, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	left := listKeys(t, st)
	if !slices.Contains(left, named) || slices.Contains(left, "orphan.parquet") || !slices.Contains(left, filesink.MetadataDir+"/0") {
		t.Fatalf("left %v (result %+v)", left, res)
	}
	_ = txlog.LogDir
}

// Validate names each option in words, not by its Go field or a CLI flag.
func TestVacuumOptionsValidateWording(t *testing.T) {
	err := VacuumOptions{Retention: -time.Hour, UntrackedMinAge: -time.Hour}.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Validate: %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"retention -1h0m0s is negative", "untracked-file minimum age -1h0m0s is negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %q lacks %q", err, want)
		}
	}
	for _, bad := range []string{"UntrackedMinAge", "Retention", "--"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("Validate: %q names %q", err, bad)
		}
	}
}
