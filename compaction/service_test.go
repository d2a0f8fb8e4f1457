package compaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
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

// TestServiceRunStopsOnCancel runs in a synctest bubble (its clock moves only
// when every goroutine in it is blocked), so the 10 ms interval and the
// bounds below are the bubble's time, not the machine's.
func TestServiceRunStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		deadline := time.Now().Add(time.Minute)
		for {
			synctest.Wait()
			snap, err := tb.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if snap.NumFiles() == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("service did not compact in a minute of 10 ms passes: %d files", snap.NumFiles())
			}
			svc.Trigger()
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		synctest.Wait() // Run is blocked again: returned, or stuck
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run returned %v", err)
			}
		default:
			t.Fatal("Run did not return after cancel")
		}
	})
	goleak.VerifyNone(t)
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

// lockedBuffer is an io.Writer safe for the service's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A table that fails every pass is retried with exponential back-off, not at
// every Interval. In a synctest bubble the passes fall exactly at 0, 40,
// 120, 280 and 440 ms of its clock (back-off 40, 80, 160, 160 ms) before the
// 500 ms deadline; without back-off there would be ~500.
func TestServiceBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := storage.Open(context.Background(), fmt.Sprintf("mem://compaction-%d/missing", memSeq.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		missing, err := table.OpenStore(st)
		if err != nil {
			t.Fatal(err)
		}
		var logs lockedBuffer
		svc, err := NewService([]*table.Table{missing}, ServiceOptions{
			Interval: time.Millisecond, BackoffMin: 40 * time.Millisecond, BackoffMax: 160 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if err := svc.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run: %v", err)
		}
		if failures := strings.Count(logs.String(), "maintenance step failed"); failures != 5 {
			t.Fatalf("%d failed passes in 500ms with back-off 40ms..160ms, want 5", failures)
		}
	})
	goleak.VerifyNone(t)
}

// A cancel between passes is a plain context.Canceled (the CLI's exit 0); a
// cancel that cuts a pass short is ErrPassInterrupted naming the table (and
// context.Canceled), the CLI's exit 130. The second table's store delays
// every call by an hour of the synctest bubble's clock, so its first pass
// is in progress when the cancel comes.
func TestServiceRunReportsAnInterruptedPass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb, st := newTable(t, nil, nil)
		appendRows(t, tb, flightsRows(0, 10, origins))
		run := func(tb *table.Table) error {
			svc, err := NewService([]*table.Table{tb}, ServiceOptions{Interval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- svc.Run(ctx) }()
			synctest.Wait() // the first pass is done (idle) or blocked in a call
			cancel()
			return <-done
		}
		if err := run(tb); !errors.Is(err, context.Canceled) || errors.Is(err, ErrPassInterrupted) {
			t.Fatalf("cancel between passes: %v, want context.Canceled alone", err)
		}
		slow, err := faultstore.New(st, faultstore.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := slow.Add(faultstore.Rule{Ops: faultstore.OpAll, Mode: faultstore.Delay, Latency: time.Hour}); err != nil {
			t.Fatal(err)
		}
		slowTable, err := table.OpenStore(slow)
		if err != nil {
			t.Fatal(err)
		}
		err = run(slowTable)
		if !errors.Is(err, ErrPassInterrupted) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), slowTable.URL()) {
			t.Fatalf("cancel during a pass: %v, want ErrPassInterrupted and context.Canceled naming %s", err, slowTable.URL())
		}
	})
}
