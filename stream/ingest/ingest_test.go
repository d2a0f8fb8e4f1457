package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/ingest"
)

// memURLs returns fresh mem:// URLs for the source, the checkpoint and the
// sink of one test, with n input files of two rows each in the source.
func memURLs(t *testing.T, n int) (src, chk, out string) {
	t.Helper()
	base := "mem://" + strings.NewReplacer("/", "-", "#", "-").Replace(t.Name())
	src, chk, out = base+"/in", base+"/chk", base+"/out"
	st, err := storage.Open(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range n {
		body := fmt.Sprintf("{\"id\":%d}\n{\"id\":%d}\n", 2*i, 2*i+1)
		if err := st.Put(context.Background(), fmt.Sprintf("f%03d.json", i), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	return src, chk, out
}

func countRows(t *testing.T, url string) int {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	n := 0
	for _, err := range snap.Rows(ctx, reader.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// A fresh checkpoint over a source the table already ingested is refused
// (the history guard), a restart on the original checkpoint is not, and
// AllowReset writes a second copy on purpose.
func TestSecondFreshRunIsRefused(t *testing.T) {
	ctx := context.Background()
	src, chk, out := memURLs(t, 3)
	o := ingest.DefaultOptions()
	o.Source, o.Checkpoint, o.Table = src, chk, out
	sum, err := ingest.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Batches != 1 || sum.NumInputRows != 6 || sum.QueryID == "" || sum.SinkKind != "delta" {
		t.Fatalf("first run: %+v", sum)
	}
	if again, err := ingest.Run(ctx, o); err != nil || again.Batches != 0 || again.QueryID != sum.QueryID {
		t.Fatalf("restart on the same checkpoint: %+v, %v; want no batch, same query", again, err)
	}

	fresh := o
	fresh.Checkpoint = chk + "-fresh"
	_, err = ingest.Run(ctx, fresh)
	var dup *ingest.DuplicateSourceError
	if !errors.Is(err, ingest.ErrDuplicateSource) || !errors.As(err, &dup) || dup.OtherQueryID != sum.QueryID || dup.Version != 0 {
		t.Fatalf("fresh checkpoint: %v; want a DuplicateSourceError naming query %s at version 0", err, sum.QueryID)
	}
	if strings.Contains(err.Error(), "--") {
		t.Fatalf("library error names a CLI flag: %v", err)
	}
	if n := countRows(t, out); n != 6 {
		t.Fatalf("table has %d rows after the refused run, want 6", n)
	}
	fresh.AllowReset = true
	if _, err := ingest.Run(ctx, fresh); err != nil {
		t.Fatalf("AllowReset: %v", err)
	}
	if n := countRows(t, out); n != 12 {
		t.Fatalf("table has %d rows after AllowReset, want 12 (a second copy)", n)
	}
}

// The source claim refuses a fresh query that has not committed yet: the
// history guard alone cannot see it.
func TestClaimRefusesAQueryBeforeItsFirstCommit(t *testing.T) {
	ctx := context.Background()
	src, chk, out := memURLs(t, 0) // no input: the first run claims, commits nothing
	o := ingest.DefaultOptions()
	o.Source, o.Checkpoint, o.Table = src, chk, out
	sum, err := ingest.Run(ctx, o)
	if err != nil || sum.Batches != 0 {
		t.Fatalf("empty run: %+v, %v", sum, err)
	}
	fresh := o
	fresh.Checkpoint = chk + "-fresh"
	_, err = ingest.Run(ctx, fresh)
	var dup *ingest.DuplicateSourceError
	if !errors.As(err, &dup) || dup.Version != -1 || dup.ClaimPath == "" || dup.OtherQueryID != sum.QueryID {
		t.Fatalf("second fresh query: %v; want the claim's DuplicateSourceError", err)
	}
}

// A fresh checkpoint against a file-sink log that is ahead is refused;
// AllowReset continues numbering after the log's latest batch.
func TestFileSinkAheadOfAFreshCheckpoint(t *testing.T) {
	ctx := context.Background()
	src, chk, out := memURLs(t, 2)
	o := ingest.DefaultOptions()
	o.Source, o.Checkpoint, o.FileSink = src, chk, out
	o.MaxFilesPerTrigger = 1
	if sum, err := ingest.Run(ctx, o); err != nil || sum.Batches != 2 || sum.SinkKind != "filesink" {
		t.Fatalf("first run: %+v, %v", sum, err)
	}
	fresh := o
	fresh.Checkpoint = chk + "-fresh"
	_, err := ingest.Run(ctx, fresh)
	var ahead *ingest.FileSinkAheadError
	if !errors.As(err, &ahead) || !errors.Is(err, ingest.ErrFileSinkAhead) || ahead.LatestBatchID != 1 {
		t.Fatalf("fresh checkpoint: %v; want FileSinkAheadError at batch 1", err)
	}
	fresh.AllowReset = true
	var first int64 = -1
	fresh.Progress = func(p stream.Progress) {
		if first < 0 {
			first = p.BatchID
		}
	}
	if _, err := ingest.Run(ctx, fresh); err != nil || first != 2 {
		t.Fatalf("AllowReset: first batch %d, %v; want batch 2", first, err)
	}
}

// Partition columns that differ from the table's are refused.
func TestPartitioningCannotChange(t *testing.T) {
	ctx := context.Background()
	src, chk, out := memURLs(t, 1)
	o := ingest.DefaultOptions()
	o.Source, o.Checkpoint, o.Table = src, chk, out
	if _, err := ingest.Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.PartitionColumns = []string{"id"}
	_, err := ingest.Run(ctx, o)
	var pe *ingest.PartitioningError
	if !errors.As(err, &pe) || !errors.Is(err, ingest.ErrPartitioningChanged) || len(pe.Have) != 0 {
		t.Fatalf("err = %v, want a PartitioningError", err)
	}
}

// Validate lists every problem, naming fields, never flags.
func TestValidateListsEveryProblem(t *testing.T) {
	o := ingest.DefaultOptions()
	o.Format = "xml"
	o.MaxFilesPerTrigger = -1
	o.CDCFormat = "maxwell"
	err := o.Validate()
	if !errors.Is(err, ingest.ErrInvalidOptions) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"Format \"xml\"", "Source is required", "MaxFilesPerTrigger", "Checkpoint is required",
		"exactly one of Table and FileSink", "CDCFormat \"maxwell\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("Validate names a CLI flag: %v", err)
	}
}
