package txlog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
)

// The shared interop tables (../shared/testdata, found by package corpus)
// are absent on a clean checkout: the tests that need them skip, or fail
// under LAKESINK_REQUIRE_CORPUS=1. The small cases are copied into
// testdata/tables.

func openDir(t *testing.T, dir string) (*Log, *memStore) {
	t.Helper()
	abs, _ := filepath.Abs(dir)
	st, err := loadDir(abs)
	if err != nil {
		t.Fatal(err)
	}
	return newTestLog(t, st, Options{}), st
}

// Expected values come from delta-rs's own tests (crates/core/tests:
// read_delta_2_0_table_without_version: version 3, 3 files, 4 tombstones;
// read_simple_table: version 4, 5 files; read_delta_8_0_table_without_version
// / with_load_version: version 1 with 2 files, version 0 with 2 files) and,
// for the others, from the file names in the log (latest commit version).
func TestInteropTables(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		table      string
		at         int64 // -1 latest
		version    int64
		files      int
		tombstones int // -1: not checked
		checkpoint int64
	}{
		{"delta-0.2.0", -1, 3, 3, 4, 3},
		{"simple_table", -1, 4, 5, -1, -1},
		{"delta-0.8.0", -1, 1, 2, 1, -1},
		{"delta-0.8.0", 0, 0, 2, 0, -1},
		{"table-with-dv-small", -1, 1, 1, 1, -1},
		{"checkpoint-v2-table", -1, 9, 8, -1, 8},
		{"checkpoint-v2-table", 6, 6, -1, -1, 6},
		{"table_failed_last_checkpoint_update", -1, 3, -1, -1, 3},
		{"with_checkpoint_no_last_checkpoint", -1, 3, -1, -1, 2},
	} {
		t.Run(tc.table, func(t *testing.T) {
			l, _ := openDir(t, filepath.Join("testdata/tables", tc.table))
			var s *Snapshot
			var err error
			if tc.at < 0 {
				s, err = l.Snapshot(ctx)
			} else {
				s, err = l.SnapshotAt(ctx, tc.at)
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Version() != tc.version || (tc.files >= 0 && s.NumFiles() != tc.files) ||
				(tc.tombstones >= 0 && len(s.Tombstones()) != tc.tombstones) || s.CheckpointVersion() != tc.checkpoint {
				t.Errorf("got version %d files %d tombstones %d checkpoint %d", s.Version(), s.NumFiles(), len(s.Tombstones()), s.CheckpointVersion())
			}
			// a checkpoint replay must equal a JSON-only replay
			if s.CheckpointVersion() >= 0 {
				assertSameAsJSONReplay(t, l, s)
			}
		})
	}
}

// assertSameAsJSONReplay replays commits 0..v without checkpoints and
// compares the live files and txns.
func assertSameAsJSONReplay(t *testing.T, l *Log, s *Snapshot) {
	t.Helper()
	ls, err := l.list(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	ls.checkpoints = map[int64][]checkpointRef{}
	seg, err := ls.segmentFor(s.Version(), false)
	if err != nil {
		t.Skipf("no complete JSON history: %v", err)
	}
	js, err := l.replay(context.Background(), seg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Files(), js.Files()
	if len(a) != len(b) {
		t.Fatalf("checkpoint replay has %d files, JSON replay %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || a[i].Size != b[i].Size || a[i].Stats != b[i].Stats {
			t.Errorf("file %d: %s/%d vs %s/%d", i, a[i].Path, a[i].Size, b[i].Path, b[i].Size)
		}
	}
	if s.Metadata().ID != js.Metadata().ID || s.Protocol().MinWriterVersion != js.Protocol().MinWriterVersion {
		t.Errorf("metadata/protocol differ")
	}
}

// DAT: the sum of numRecords over live files equals the number of rows in
// expected/latest (counted from the expected Parquet files, not by us).
func TestInteropDAT(t *testing.T) {
	cases := map[string]string{"with_checkpoint (copy)": "testdata/tables/dat-with_checkpoint"}
	if dat, err := corpus.Find(corpus.Testdata, "dat"); err == nil {
		entries, err := os.ReadDir(dat)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			cases[e.Name()] = filepath.Join(dat, e.Name())
		}
	} else if corpus.Required() {
		t.Fatalf("%v (%s=1)", err, corpus.RequireEnv)
	} else {
		t.Logf("only the copied case: %v", err)
	}
	for name, dir := range cases {
		t.Run(name, func(t *testing.T) {
			logDir, expDir := filepath.Join(dir, "delta"), filepath.Join(dir, "expected", "latest", "table_content.parquet")
			if _, err := os.Stat(logDir); err != nil {
				logDir, expDir = dir, filepath.Join(dir, "expected")
			}
			l, _ := openDir(t, logDir)
			mdPath := filepath.Join(dir, "expected", "latest", "table_version_metadata.json")
			if !fileExists(mdPath) {
				mdPath = filepath.Join(expDir, "table_version_metadata.json")
			}
			b, err := os.ReadFile(mdPath)
			if err != nil {
				t.Fatal(err)
			}
			var md struct{ Version int64 }
			if err := json.Unmarshal(b, &md); err != nil {
				t.Fatal(err)
			}
			s, err := l.SnapshotAt(context.Background(), md.Version)
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			files, _ := filepath.Glob(filepath.Join(expDir, "*.parquet"))
			if len(files) == 0 {
				t.Fatalf("no expected parquet in %s", expDir)
			}
			for _, f := range files {
				want += parquetRows(t, f)
			}
			var got int64
			for _, a := range s.Files() {
				var st struct{ NumRecords int64 }
				if err := json.Unmarshal([]byte(a.Stats), &st); err != nil {
					t.Fatalf("stats of %s: %v", a.Path, err)
				}
				got += st.NumRecords
			}
			if got != want {
				t.Errorf("numRecords sum %d, expected rows %d", got, want)
			}
		})
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func parquetRows(t *testing.T, p string) int64 {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf.NumRows()
}

// Every delta-rs table opens (or is reported as not a table).
func TestSmokeAllDeltaRSTables(t *testing.T) {
	root := corpus.Dir(t, corpus.Testdata, "delta-rs")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(root, e.Name())
			l, _ := openDir(t, dir)
			s, err := l.Snapshot(context.Background())
			if !fileExists(filepath.Join(dir, LogDir)) {
				if !errors.Is(err, ErrTableNotFound) {
					t.Fatalf("no _delta_log: want ErrTableNotFound, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// latest version = newest commit or checkpoint file name
			names, _ := filepath.Glob(filepath.Join(dir, LogDir, "*"))
			var maxV int64 = -1
			for _, n := range names {
				if lf, ok := parseLogName(filepath.Base(n)); ok && lf.kind != kindChecksum && lf.kind != kindCompaction {
					maxV = max(maxV, lf.version)
				}
			}
			if s.Version() != maxV {
				t.Errorf("version %d, newest log file %d", s.Version(), maxV)
			}
		})
	}
}
