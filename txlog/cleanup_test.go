package txlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCleanup(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		retention string            // delta.logRetentionDuration, "" default 30 days
		ageDays   func(v int64) int // age of commit v in days
		cps       []int64
		wantCP    int64
		wantFirst int64 // first retained commit
	}{
		// commit 30 is 30.5 days old: newer than midnight of the cutoff day, so
		// the cutoff commit is 29 and the cutoff checkpoint 20.
		{"default 30 days", "", func(v int64) int { return 60 - int(v) }, []int64{10, 20, 30, 40}, 20, 20},
		{"no checkpoint old enough", "", func(v int64) int { return 60 - int(v) }, []int64{40}, -1, 0},
		{"short retention", "interval 2 days", func(v int64) int { return 60 - int(v) }, []int64{10, 20, 30, 40}, 40, 40},
		{"nothing expired", "", func(v int64) int { return 0 }, []int64{10, 20}, -1, 0},
		// clock skew: times are monotonized as Delta's cleanup adjusts them.
		// Commit 45 of a writer whose clock is 400 days behind counts as
		// commit 44's time + 1 ms: it expires nothing (the raw time made it
		// the cutoff commit and deleted the 40 commits before checkpoint 40).
		{"one commit's clock behind", "", func(v int64) int { return map[bool]int{true: 400}[v == 45] }, []int64{10, 20, 40}, -1, 0},
		// commit 5 dated 10 days ahead: the later commits count as after it,
		// so only commits 0..4 can have expired (no checkpoint there).
		{"one commit's clock ahead", "", func(v int64) int { return map[bool]int{true: -10, false: 60 - int(v)}[v == 5] }, []int64{10, 20, 30, 40}, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			buildLog(t, st, 50)
			if tc.retention != "" {
				md := Metadata{ID: "big", Format: Format{Provider: "parquet"}, SchemaString: testSchema,
					Configuration: map[string]string{"delta.logRetentionDuration": tc.retention}}
				b, _ := EncodeCommit([]Action{{MetaData: &md}})
				st.put(CommitPath(50), string(b))
			}
			l := newTestLog(t, st, Options{Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }})
			for _, v := range tc.cps {
				s, err := l.SnapshotAt(ctx, v)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := l.Checkpoint(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			// age the commit files
			for k := range st.objects(LogDir + "/") {
				if lf, ok := parseLogName(strings.TrimPrefix(k, LogDir+"/")); ok {
					st.SetModTime(k, now.Add(-time.Duration(tc.ageDays(lf.version))*day))
				}
			}
			before, _ := l.Snapshot(ctx)
			dry, err := l.Cleanup(ctx, CleanupOptions{DryRun: true, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range dry.Delete {
				if !st.has(k) {
					t.Fatalf("dry run deleted %s", k)
				}
			}
			plan, err := l.Cleanup(ctx, CleanupOptions{Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dry.Delete, plan.Delete) || dry.CheckpointVersion != plan.CheckpointVersion {
				t.Fatalf("dry run planned %v (checkpoint %d), cleanup deleted %v (checkpoint %d)", dry.Delete, dry.CheckpointVersion, plan.Delete, plan.CheckpointVersion)
			}
			if plan.CheckpointVersion != tc.wantCP {
				t.Fatalf("cutoff checkpoint %d, want %d", plan.CheckpointVersion, tc.wantCP)
			}
			for v := range int64(51) {
				exists := st.has(CommitPath(v))
				if wantExists := v >= tc.wantFirst; exists != wantExists && v < 50 {
					t.Errorf("commit %d exists=%v", v, exists)
				}
			}
			after, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			assertSameSnapshot(t, after, before)
			// every retained version is still reconstructible
			for _, v := range []int64{tc.wantFirst, tc.wantFirst + 1, after.Version() - 1} {
				if _, err := l.SnapshotAt(ctx, v); err != nil {
					t.Errorf("version %d: %v", v, err)
				}
			}
			if tc.wantFirst > 0 {
				if _, err := l.SnapshotAt(ctx, tc.wantFirst-1); !errors.Is(err, ErrVersionNotFound) {
					t.Errorf("version %d after cleanup: %v", tc.wantFirst-1, err)
				}
			}
		})
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"interval 30 days": 30 * 24 * time.Hour, "interval 1 week": 7 * 24 * time.Hour,
		"168 hours": 168 * time.Hour, "INTERVAL 2 DAYS 3 HOURS": 51 * time.Hour,
	} {
		got, err := ParseInterval(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "interval", "30", "interval x days", "interval 3 fortnights"} {
		if _, err := ParseInterval(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	_ = fmt.Sprint()
}

// V2 checkpoints with sidecars (delta-rs checkpoint-v2-table): cleaning up
// to the checkpoint at 8 deletes the checkpoint at 6 and its sidecar, keeps
// the sidecar that checkpoint 8 references, and the table still loads.
func TestCleanupV2Sidecars(t *testing.T) {
	ctx := context.Background()
	l, st := openDir(t, "testdata/tables/checkpoint-v2-table")
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range st.objects("") {
		st.SetModTime(k, old)
	}
	before, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := l.Cleanup(ctx, CleanupOptions{Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if plan.CheckpointVersion != 8 {
		t.Fatalf("cutoff checkpoint %d", plan.CheckpointVersion)
	}
	var sidecarsLeft []string
	for k := range st.objects(SidecarDir + "/") {
		sidecarsLeft = append(sidecarsLeft, strings.TrimPrefix(k, SidecarDir+"/"))
	}
	if len(sidecarsLeft) != 1 || !strings.HasPrefix(sidecarsLeft[0], "00000000000000000008.") {
		t.Errorf("sidecars left: %v", sidecarsLeft)
	}
	if st.has(CommitPath(7)) || !st.has(CommitPath(8)) {
		t.Errorf("commit 7 kept=%v, commit 8 kept=%v", st.has(CommitPath(7)), st.has(CommitPath(8)))
	}
	after, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, after, before)
}
