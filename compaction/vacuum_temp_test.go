package compaction

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// putAged writes a file of size bytes at key under dir with modification
// time mod, bypassing the store (which refuses temporary names).
func putAged(t *testing.T, dir, key string, size int, mod time.Time) {
	t.Helper()
	name := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, make([]byte, size), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(name, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func exists(t *testing.T, dir, key string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func newLocalTable(t *testing.T) (*table.Table, storage.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := storage.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tb, err := table.OpenStore(st, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
	if err != nil {
		t.Fatal(err)
	}
	return tb, st, dir
}

// A writer killed between writing a data file (or staging a commit) and
// its rename/link strands a ".lakesink-tmp-*" file that List hides; VACUUM
// skipped it forever. Now one older than the untracked-file rule's cutoff
// goes (dry run: reported, not deleted), a young one (a writer in flight)
// stays, and so do other hidden names and the _delta_log's temporary files.
func TestVacuumDeletesStrandedTempFiles(t *testing.T) {
	ctx := context.Background()
	tb, _, dir := newLocalTable(t)
	if _, err := tb.Write(ctx, &schema.Batch{Schema: flightsSchema(), Rows: flightsRows(0, 20, origins)}, table.WriteOptions{PartitionColumns: []string{"origin"}}); err != nil {
		t.Fatal(err)
	}
	live := liveKeys(t, tb)
	now := time.Now()
	old := now.Add(-8 * 24 * time.Hour) // past the default 7-day retention
	oldTemps := map[string]int{
		".lakesink-tmp-0123456789abcdef-part-00000-x.snappy.parquet":                   3000,
		"origin=SFO/.lakesink-tmp-fedcba9876543210-part-00001-y.snappy.parquet":        5000,
		"origin=SFO/.lakesink-tmp-00000000000000ff-part-00002-z.snappy.parquet.pieces": 7,
	}
	for k, n := range oldTemps {
		putAged(t, dir, k, n, old)
	}
	kept := []string{
		".lakesink-tmp-1111111111111111-part-00003-young.snappy.parquet", // in flight
		"origin=SFO/.part-00000.crc",
		".lakesink-tmpx-not-ours",
		".lakesink-tmp",
		"_SUCCESS",
		"_delta_log/.lakesink-tmp-2222222222222222-00000000000000000001.json",
	}
	for _, k := range kept[1:] {
		putAged(t, dir, k, 11, old)
	}
	putAged(t, dir, kept[0], 13, now.Add(-time.Minute))

	var wantFiles []string
	var wantBytes int64
	for k, n := range oldTemps {
		wantFiles = append(wantFiles, k)
		wantBytes += int64(n)
	}
	slices.Sort(wantFiles)
	check := func(res *VacuumResult) {
		t.Helper()
		var got []string
		for _, f := range res.Files {
			got = append(got, f.Path)
		}
		slices.Sort(got)
		if !slices.Equal(got, wantFiles) {
			t.Errorf("files %v, want %v", got, wantFiles)
		}
		if res.FilesDeleted != len(wantFiles) || res.BytesDeleted != wantBytes {
			t.Errorf("deleted %d files %d bytes, want %d, %d", res.FilesDeleted, res.BytesDeleted, len(wantFiles), wantBytes)
		}
		if res.UntrackedKept != 1 {
			t.Errorf("untracked kept %d, want 1 (the young temporary file)", res.UntrackedKept)
		}
	}
	res, err := Vacuum(ctx, tb, VacuumOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	check(res)
	for k := range oldTemps {
		if !exists(t, dir, k) {
			t.Errorf("dry run deleted %s", k)
		}
	}
	res, err = Vacuum(ctx, tb, VacuumOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check(res)
	if res.StartVersion < 0 || res.EndVersion < 0 {
		t.Errorf("start/end versions %d/%d: want commits", res.StartVersion, res.EndVersion)
	}
	for k := range oldTemps {
		if exists(t, dir, k) {
			t.Errorf("%s survived VACUUM", k)
		}
	}
	for _, k := range kept {
		if !exists(t, dir, k) {
			t.Errorf("VACUUM deleted %s", k)
		}
	}
	if got := liveKeys(t, tb); !slices.Equal(got, live) {
		t.Errorf("live files %v, want %v", got, live)
	}
	for _, k := range live {
		if !exists(t, dir, k) {
			t.Errorf("VACUUM deleted live %s", k)
		}
	}

}

// Log cleanup deletes the temporary files under _delta_log older than the
// log retention cutoff (and TempMinAge); younger ones and other files stay.
func TestCleanupLogDeletesStrandedTempFiles(t *testing.T) {
	ctx := context.Background()
	tb, _, dir := newLocalTable(t)
	if _, err := tb.Write(ctx, &schema.Batch{Schema: flightsSchema(), Rows: flightsRows(0, 5, origins)}, table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(40 * 24 * time.Hour) // cutoff: ~10 days from the real now
	oldTemp := "_delta_log/.lakesink-tmp-0123456789abcdef-00000000000000000001.json"
	youngTemp := "_delta_log/.lakesink-tmp-fedcba9876543210-00000000000000000002.json"
	other := "_delta_log/.00000000000000000000.json.crc"
	putAged(t, dir, oldTemp, 10, time.Now())
	putAged(t, dir, youngTemp, 10, now.Add(-20*24*time.Hour))
	putAged(t, dir, other, 10, time.Now())
	res, err := CleanupLog(ctx, tb, CleanupLogOptions{DryRun: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Files, []string{oldTemp}) || !exists(t, dir, oldTemp) {
		t.Fatalf("dry run: files %v (want %s, not deleted)", res.Files, oldTemp)
	}
	res, err = CleanupLog(ctx, tb, CleanupLogOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Files, []string{oldTemp}) || res.FilesDeleted != 1 {
		t.Errorf("files %v, %d deleted; want [%s]", res.Files, res.FilesDeleted, oldTemp)
	}
	if exists(t, dir, oldTemp) {
		t.Errorf("%s survived log cleanup", oldTemp)
	}
	for _, k := range []string{youngTemp, other, "_delta_log/00000000000000000000.json"} {
		if !exists(t, dir, k) {
			t.Errorf("log cleanup deleted %s", k)
		}
	}
}
