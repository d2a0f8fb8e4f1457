package tests

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/table"
)

// TestS3CompactAndVacuumWhileAppending: a sink process appends 100 small
// batches to a table on the S3 server while this process runs OPTIMIZE and
// VACUUM (retention 4 s, forced; a data file takes far less than that from
// write to commit) over and over. Afterwards the rows read
// back equal the rows written, every file of the latest snapshot exists
// after each vacuum, and the maintenance really did compact and delete.
func TestS3CompactAndVacuumWhileAppending(t *testing.T) {
	srv := s3test.Start(t)
	const batches, rows = 100, 20
	const retention = 4 * time.Second
	tableURL := srv.URL("maint/t")
	createWriterTable(t, tableURL)
	wait := startWriters(t, []writerSpec{{Table: tableURL, QueryID: "appender", Batches: batches, Rows: rows}})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	tb, err := table.Open(ctx, tableURL)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()

	var (
		mu                  sync.Mutex
		compactions, vacuum int
		deleted             int
		loopErr             error
	)
	// checkLive stats every file of the latest snapshot.
	checkLive := func(ctx context.Context) error {
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			return err
		}
		for _, a := range snap.Files() {
			p, err := url.PathUnescape(a.Path)
			if err != nil {
				return err
			}
			if _, err := tb.Store().Stat(ctx, p); err != nil {
				return fmt.Errorf("version %d references %s: %w", snap.Version(), p, err)
			}
		}
		return nil
	}
	maintain := func(ctx context.Context) error {
		_, res, err := compaction.Optimize(ctx, tb, compaction.PlanOptions{}, compaction.DefaultExecOptions())
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("optimize: %w", err)
		}
		if res != nil && res.Version >= 0 {
			mu.Lock()
			compactions++
			mu.Unlock()
		}
		vr, err := compaction.Vacuum(ctx, tb, compaction.VacuumOptions{Retention: retention, Force: true})
		if err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		mu.Lock()
		vacuum++
		deleted += vr.FilesDeleted
		mu.Unlock()
		if err := checkLive(ctx); err != nil {
			return fmt.Errorf("after vacuum: %w", err)
		}
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := maintain(ctx); err != nil {
				if ctx.Err() == nil {
					mu.Lock()
					loopErr = err
					mu.Unlock()
				}
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	results := wait()
	cancel()
	<-done
	if loopErr != nil {
		t.Fatalf("maintenance while appending: %v", loopErr)
	}
	duringCompactions, duringDeleted := compactions, deleted

	// Once more after the appends, past the retention, so that the files the
	// last OPTIMIZE removed are deleted too.
	time.Sleep(retention + 500*time.Millisecond)
	if err := maintain(t.Context()); err != nil {
		t.Fatal(err)
	}

	want := map[string]int{}
	for _, r := range results[0] {
		if r.Skipped {
			t.Errorf("batch %d skipped", r.BatchID)
		}
		for s := range int64(rows) {
			want[writerKey("appender", r.BatchID, s)] = 1
		}
	}
	if len(results[0]) != batches {
		t.Fatalf("writer reported %d batches, want %d", len(results[0]), batches)
	}
	compareKeys(t, writerTableKeys(t, tableURL), want)
	t.Logf("while appending: %d OPTIMIZE commits, %d VACUUM runs deleting %d files; total deleted %d", duringCompactions, vacuum, duringDeleted, deleted)
	if compactions == 0 || deleted == 0 {
		t.Fatalf("maintenance did nothing (%d compactions, %d files deleted): the test proves nothing", compactions, deleted)
	}
}
