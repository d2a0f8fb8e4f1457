package compaction

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

func TestCheckpointAndCleanupLog(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, []string{"origin"}, nil)
	var want [][]any
	for i := range 11 {
		rows := flightsRows(int64(i*10), 10, origins)
		v := appendRows(t, tb, rows)
		want = append(want, rows...)
		if v == 5 || v == 10 {
			cp, err := Checkpoint(ctx, tb)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Version != v {
				t.Fatalf("checkpoint version %d, want %d", cp.Version, v)
			}
		}
	}
	// Nothing has expired yet.
	res, err := CleanupLog(ctx, tb, CleanupLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 0 {
		t.Fatalf("deleted %v before expiry", res.Files)
	}
	in31Days := func() time.Time { return time.Now().Add(31 * 24 * time.Hour) }
	dry, err := CleanupLog(ctx, tb, CleanupLogOptions{DryRun: true, Now: in31Days})
	if err != nil || dry.FilesDeleted != 21 || !dry.DryRun {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	if keys := listKeysUnder(t, st, "_delta_log/"); !slices.Contains(keys, txlog.CommitPath(0)) {
		t.Fatal("dry run deleted files")
	}
	res, err = CleanupLog(ctx, tb, CleanupLogOptions{Now: in31Days})
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckpointVersion != 10 {
		t.Fatalf("cleanup kept checkpoint %d, want 10", res.CheckpointVersion)
	}
	// commits 0..9, their .crc files and checkpoint 5 are gone.
	if res.FilesDeleted != 21 {
		t.Fatalf("deleted %d files: %v", res.FilesDeleted, res.Files)
	}
	keys := listKeysUnder(t, st, "_delta_log/")
	for _, k := range []string{txlog.CommitPath(10), txlog.CommitPath(11), txlog.CheckpointPath(10), txlog.LastCheckpointPath} {
		if !slices.Contains(keys, k) {
			t.Errorf("%s deleted", k)
		}
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshot(ctx, st, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !equalRowSets(rowSet(got), rowSet(want)) {
		t.Fatal("rows changed")
	}
	if _, err := tb.SnapshotAt(ctx, 10); err != nil {
		t.Fatalf("version 10 unreadable: %v", err)
	}
	if _, err := tb.SnapshotAt(ctx, 3); !errors.Is(err, txlog.ErrVersionNotFound) {
		t.Fatalf("version 3: %v", err)
	}
}

func TestParseInterval(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"interval 7 days", 7 * 24 * time.Hour, false},
		{"interval 1 week", 7 * 24 * time.Hour, false},
		{"INTERVAL 1 day 12 hours", 36 * time.Hour, false},
		{"168 hours", 168 * time.Hour, false},
		{"168h", 168 * time.Hour, false},
		{"interval 2 months", 0, true},
		{"interval", 0, true},
		{"interval x days", 0, true},
	} {
		got, err := ParseInterval(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseInterval(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// CleanupLog deletes log files: a table with a writer feature lakesink does
// not know is refused, with nothing deleted (it cleaned such a table up).
func TestCleanupLogRefusesUnsupportedWriterFeature(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, nil, nil)
	var last int64
	for i := range 4 {
		last = appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
	}
	if _, err := Checkpoint(ctx, tb); err != nil {
		t.Fatal(err)
	}
	commit, err := txlog.EncodeCommit([]txlog.Action{{Protocol: &txlog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{}, WriterFeatures: []string{"fancyWriterFeature"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutIfAbsent(ctx, txlog.CommitPath(last+1), commit); err != nil {
		t.Fatal(err)
	}
	before := logKeys(t, st)
	_, err = CleanupLog(ctx, tb, CleanupLogOptions{Now: func() time.Time { return time.Now().Add(60 * 24 * time.Hour) }})
	if !errors.Is(err, txlog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "fancyWriterFeature") {
		t.Fatalf("CleanupLog of a table with an unknown writer feature: %v, want ErrUnsupportedFeature naming it", err)
	}
	if after := logKeys(t, st); !slices.Equal(before, after) {
		t.Fatalf("log files changed: %v -> %v", before, after)
	}
}

func logKeys(t *testing.T, st storage.Store) []string {
	t.Helper()
	var keys []string
	for fi, err := range st.List(context.Background(), "_delta_log/", "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, fi.Path)
	}
	return keys
}
