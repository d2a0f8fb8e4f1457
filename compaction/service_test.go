package compaction

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lakesink/lakesink/table"
)

func TestServiceRunOnce(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, []string{"origin"}, nil)
	var want [][]any
	for i := range 12 {
		rows := flightsRows(int64(i*9), 9, origins)
		appendRows(t, tb, rows)
		want = append(want, rows...)
	}
	// Each partition has 12 small files; only a threshold below 12 triggers.
	for _, tc := range []struct {
		name      string
		threshold int
		optimize  bool
	}{
		{name: "below threshold", threshold: 12, optimize: false},
		{name: "above threshold", threshold: 11, optimize: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := NewService([]*table.Table{tb}, ServiceOptions{SmallFileThreshold: tc.threshold})
			if err != nil {
				t.Fatal(err)
			}
			reps, err := svc.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rep := reps[0]
			if (rep.Optimize != nil) != tc.optimize {
				t.Fatalf("optimize ran: %+v", rep.Optimize)
			}
			if tc.optimize && (rep.Optimize.NumRemovedFiles != 36 || rep.Optimize.NumAddedFiles != 3) {
				t.Fatalf("optimize %+v", rep.Optimize)
			}
			if rep.Vacuum == nil || rep.CleanupLog == nil {
				t.Fatalf("vacuum/cleanup not run on the first pass: %+v", rep)
			}
		})
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.CheckpointVersion() < 0 {
		t.Fatalf("no checkpoint written after %d versions", snap.Version())
	}
	got, err := readSnapshot(ctx, st, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !equalRowSets(rowSet(got), rowSet(want)) {
		t.Fatal("rows changed")
	}
}

func TestServiceRunStopsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	tb, _ := newTable(t, nil, nil)
	for i := range 8 {
		appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
	}
	svc, err := NewService([]*table.Table{tb}, ServiceOptions{Interval: 10 * time.Millisecond, SmallFileThreshold: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := tb.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.NumFiles() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service did not compact: %d files", snap.NumFiles())
		}
		svc.Trigger()
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestServiceOptionsValidate(t *testing.T) {
	if _, err := NewService(nil, ServiceOptions{}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("no tables: %v", err)
	}
	err := ServiceOptions{Interval: -1, SmallFileThreshold: -1, Exec: ExecOptions{Compression: "brotli"}}.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("invalid options: %v", err)
	}
}
