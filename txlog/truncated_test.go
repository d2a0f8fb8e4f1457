package txlog

import (
	"context"
	"errors"
	"testing"
)

// TestInterruptedCleanupVersionNotFound: a cleanup interrupted after it
// deleted commits 0..3 of a log whose cutoff checkpoint is 10 leaves commits
// 4..9 without a checkpoint below them. Reading version 6 is then "version
// not found" (the history was cleaned up), not a corrupt log; versions from
// the checkpoint on still read. Found by the fault soak (tests/soak_test.go).
// A gap without a later checkpoint stays corruption.
func TestInterruptedCleanupVersionNotFound(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		checkpoint bool
		wantErr    error
	}{
		{name: "checkpoint after the gap", checkpoint: true, wantErr: ErrVersionNotFound},
		{name: "no checkpoint", checkpoint: false, wantErr: ErrCorruptLog},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			buildLog(t, st, 12)
			l := newTestLog(t, st, Options{})
			if tc.checkpoint {
				s, err := l.SnapshotAt(ctx, 10)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := l.Checkpoint(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			for v := range int64(4) {
				if err := st.Delete(ctx, CommitPath(v)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := l.SnapshotAt(ctx, 6)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("version 6: %v, want %v", err, tc.wantErr)
			}
			if tc.checkpoint {
				if errors.Is(err, ErrCorruptLog) {
					t.Fatalf("version 6: %v also matches ErrCorruptLog", err)
				}
				for _, v := range []int64{10, 11} {
					if _, err := l.SnapshotAt(ctx, v); err != nil {
						t.Fatalf("version %d: %v", v, err)
					}
				}
				if _, err := l.Snapshot(ctx); err != nil {
					t.Fatalf("latest: %v", err)
				}
			}
		})
	}
}
