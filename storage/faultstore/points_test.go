package faultstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

func TestPointOf(t *testing.T) {
	const c0 = "_delta_log/00000000000000000000.json"
	cases := []struct {
		op   faultstore.Op
		path string
		want string
	}{
		{faultstore.OpWriterClose, "part-00000-x.snappy.parquet", faultstore.PointDataFile},
		{faultstore.OpPut, "origin=SFO/part-1.parquet", faultstore.PointDataFile},
		{faultstore.OpWriterClose, "_p=1/part-1.parquet", faultstore.PointDataFile}, // partition dir
		{faultstore.OpDelete, "origin=SFO/part-1.parquet", faultstore.PointDataDelete},
		{faultstore.OpPutIfAbsent, c0, faultstore.PointCommit},
		{faultstore.OpPut, c0, "other:put"}, // a commit must be put-if-absent
		{faultstore.OpPutIfAbsent, "tables/t1/" + c0, faultstore.PointCommit},
		{faultstore.OpWriterClose, "_delta_log/00000000000000000010.checkpoint.parquet", faultstore.PointCheckpoint},
		{faultstore.OpWriterClose, "_delta_log/00000000000000000010.checkpoint.0000000001.0000000002.parquet", faultstore.PointCheckpoint},
		{faultstore.OpPut, "_delta_log/_last_checkpoint", faultstore.PointLastCheckpoint},
		{faultstore.OpPut, "_delta_log/_sidecars/abc.parquet", faultstore.PointCheckpointSide},
		{faultstore.OpPut, "_delta_log/00000000000000000003.crc", faultstore.PointChecksum},
		{faultstore.OpPut, "_delta_log/00000000000000000001.00000000000000000003.compacted.json", faultstore.PointLogCompaction},
		{faultstore.OpDelete, c0, faultstore.PointLogCleanupDelete},
		{faultstore.OpDelete, "_delta_log/00000000000000000010.checkpoint.parquet", faultstore.PointLogCleanupDelete},
		{faultstore.OpPutIfAbsent, "_delta_log/.lakesink-probe-1234", faultstore.PointConditionalProbe},
		{faultstore.OpDelete, "_delta_log/.lakesink-probe-1234", faultstore.PointConditionalProbe},
		{faultstore.OpPut, "_delta_log/notes.txt", "other:put"},
		{faultstore.OpPutIfAbsent, "_spark_metadata/7", faultstore.PointSparkBatch},
		{faultstore.OpPut, "_spark_metadata/7", "other:put"},
		{faultstore.OpPutIfAbsent, "_spark_metadata/9.compact", faultstore.PointSparkCompact},
		{faultstore.OpWriterClose, "_spark_metadata/9.compact", faultstore.PointSparkCompact},
		{faultstore.OpPutIfAbsent, "_spark_metadata/.9.compact.claim", faultstore.PointSparkClaim},
		{faultstore.OpDelete, "_spark_metadata/2", faultstore.PointSparkDelete},
		{faultstore.OpPut, "metadata", faultstore.PointStreamMetadata},
		{faultstore.OpPutIfAbsent, "metadata", faultstore.PointStreamMetadata},
		{faultstore.OpPutIfAbsent, "offsets/12", faultstore.PointStreamOffsets},
		{faultstore.OpPut, "offsets/12", "other:put"},
		{faultstore.OpPutIfAbsent, "chk/commits/3", faultstore.PointStreamCommits},
		{faultstore.OpPutIfAbsent, "sources/0/19.compact", faultstore.PointStreamSources},
		{faultstore.OpPut, "sources/0/lakesink-kafka-planned.json", faultstore.PointStreamSources},
		{faultstore.OpDelete, "offsets/0", faultstore.PointStreamLogDelete},
		{faultstore.OpDelete, "sources/0/0", faultstore.PointStreamLogDelete},
		{faultstore.OpPut, "_SUCCESS", "other:put"},
		{faultstore.OpWriterClose, ".tmp/x.parquet", "other:write"},
		{faultstore.OpRead, c0, ""},
		{faultstore.OpStat, "part-0.parquet", ""},
		{faultstore.OpPut | faultstore.OpDelete, "part-0.parquet", ""},
	}
	for _, tc := range cases {
		if got := faultstore.PointOf(tc.op, tc.path); got != tc.want {
			t.Errorf("PointOf(%v, %q) = %q, want %q", tc.op, tc.path, got, tc.want)
		}
	}
}

var storeSeq atomic.Int64

// opStore opens a fresh in-memory store for one test.
func opStore(t *testing.T) storage.Store {
	t.Helper()
	s, err := storage.Open(t.Context(), fmt.Sprintf("mem://faultstore-points-%d", storeSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// twoCommits writes two data files and commits them, twice.
func twoCommits(ctx context.Context, s storage.Store) error {
	for v := range 2 {
		for f := range 2 {
			w, err := s.NewWriter(ctx, fmt.Sprintf("part-%d-%d.parquet", v, f))
			if err != nil {
				return err
			}
			if _, err := w.Write([]byte("data")); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
		}
		if err := s.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", v), []byte("commit")); err != nil {
			return err
		}
	}
	return nil
}

func TestPointsRecorder(t *testing.T) {
	ctx := t.Context()
	fs := newFS(t, opStore(t))
	sub := fs.Sub("t")
	if err := twoCommits(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Read(ctx, "t/_delta_log/00000000000000000000.json"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range fs.Points() {
		got = append(got, p.String()+" "+p.Path)
		if p.Injected || p.Unnamed() {
			t.Errorf("%v: injected %v unnamed %v", p, p.Injected, p.Unnamed())
		}
	}
	want := []string{
		"data-file#0 t/part-0-0.parquet", "data-file#1 t/part-0-1.parquet", "commit#0 t/_delta_log/00000000000000000000.json",
		"data-file#2 t/part-1-0.parquet", "data-file#3 t/part-1-1.parquet", "commit#1 t/_delta_log/00000000000000000001.json",
	}
	if !slices.Equal(got, want) {
		t.Errorf("points %q\nwant %q", got, want)
	}
	if names := faultstore.PointNames(fs.Points()); !slices.Equal(names, []string{"commit", "data-file"}) {
		t.Errorf("names %q", names)
	}
}

func TestCrashAt(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		point string
		nth   int
		mode  faultstore.Mode
		// want: the objects in the store after the crash
		want []string
	}{
		{"data-file", 0, faultstore.FailBefore, nil},
		{"data-file", 0, faultstore.FailAfter, []string{"part-0-0.parquet"}},
		{"commit", 0, faultstore.FailBefore, []string{"part-0-0.parquet", "part-0-1.parquet"}},
		{"commit", 0, faultstore.FailAfter, []string{"_delta_log/00000000000000000000.json", "part-0-0.parquet", "part-0-1.parquet"}},
		{"data-file", 2, faultstore.FailBefore, []string{"_delta_log/00000000000000000000.json", "part-0-0.parquet", "part-0-1.parquet"}},
		{"commit", 1, faultstore.FailAfter, []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json",
			"part-0-0.parquet", "part-0-1.parquet", "part-1-0.parquet", "part-1-1.parquet"}},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s#%d/%v", tc.point, tc.nth, tc.mode)
		t.Run(name, func(t *testing.T) {
			base := opStore(t)
			fs := newFS(t, base)
			if err := fs.CrashAt(tc.point, tc.nth, tc.mode); err != nil {
				t.Fatal(err)
			}
			err := twoCommits(ctx, fs)
			if !errors.Is(err, faultstore.ErrInjected) || !fs.Crashed() {
				t.Fatalf("err %v crashed %v, want an injected crash", err, fs.Crashed())
			}
			if tc.mode == faultstore.FailAfter && tc.point == "commit" && !errors.Is(err, storage.ErrCommitStateUnknown) {
				t.Errorf("lost commit answer %v does not match ErrCommitStateUnknown", err)
			}
			var got []string
			for fi, err := range base.List(ctx, "", "") {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fi.Path)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("store holds %q, want %q", got, tc.want)
			}
			// Once crashed every write fails, reads still work.
			if err := fs.Put(ctx, "x.parquet", nil); !errors.Is(err, faultstore.ErrInjected) {
				t.Errorf("write after the crash: %v", err)
			}
			if _, err := fs.Stat(ctx, "x.parquet"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("stat after the crash: %v", err)
			}
			pts := fs.Points()
			var crashed []string
			for _, p := range pts {
				if p.Injected {
					crashed = append(crashed, p.String())
				}
			}
			if len(crashed) < 2 || crashed[0] != fmt.Sprintf("%s#%d", tc.point, tc.nth) {
				t.Errorf("injected points %q: want %s#%d first", crashed, tc.point, tc.nth)
			}
			fs.Clear()
			if err := fs.Put(ctx, "y.parquet", nil); err != nil {
				t.Errorf("write after Clear: %v", err)
			}
		})
	}
}

// An occurrence that never comes: the operation completes, Crashed is false.
func TestCrashAtUnreached(t *testing.T) {
	fs := newFS(t, opStore(t))
	if err := fs.CrashAt("commit", 2, faultstore.FailBefore); err != nil {
		t.Fatal(err)
	}
	if err := twoCommits(t.Context(), fs); err != nil || fs.Crashed() {
		t.Fatalf("err %v crashed %v", err, fs.Crashed())
	}
	// nth counts from the CrashAt call: commit#2 is the next commit.
	if err := fs.CrashAt("commit", 0, faultstore.FailBefore); err != nil {
		t.Fatal(err)
	}
	err := fs.PutIfAbsent(t.Context(), "_delta_log/00000000000000000002.json", nil)
	if !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("err %v", err)
	}
	if p := fs.Points(); p[len(p)-1].String() != "commit#2" || !p[len(p)-1].Injected {
		t.Errorf("last point %+v", p[len(p)-1])
	}
}

func TestCrashAtInvalid(t *testing.T) {
	fs := newFS(t, opStore(t))
	for _, tc := range []struct {
		point string
		nth   int
		mode  faultstore.Mode
	}{{"", 0, faultstore.FailBefore}, {"commit", -1, faultstore.FailBefore}, {"commit", 0, faultstore.Delay}} {
		if err := fs.CrashAt(tc.point, tc.nth, tc.mode); !errors.Is(err, faultstore.ErrInvalidRule) {
			t.Errorf("CrashAt(%q, %d, %v) = %v", tc.point, tc.nth, tc.mode, err)
		}
	}
}

func TestCrashesAndCheckPoints(t *testing.T) {
	fs := newFS(t, opStore(t))
	if err := twoCommits(t.Context(), fs); err != nil {
		t.Fatal(err)
	}
	pts := fs.Points()
	var names []string
	for _, c := range faultstore.Crashes(pts) {
		names = append(names, c.String())
	}
	if len(names) != 12 || names[0] != "data-file#0/before" || names[5] != "commit#0/after" {
		t.Errorf("crashes %q", names)
	}
	if err := faultstore.CheckPoints(pts, "data-file", "commit"); err != nil {
		t.Error(err)
	}
	err := faultstore.CheckPoints(pts, "commit", "checkpoint")
	if err == nil || !strings.Contains(err.Error(), `"checkpoint" was not performed`) ||
		!strings.Contains(err.Error(), "unexpected crash point data-file#0 (write part-0-0.parquet)") {
		t.Errorf("CheckPoints: %v", err)
	}
}
