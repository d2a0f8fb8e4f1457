package table_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/table"
)

// raceStore lets another writer commit just before the next put-if-absent
// of a commit file: the writer using it loses that version's race.
type raceStore struct {
	storage.Store
	before func() // run once, then cleared
}

func (s *raceStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if f := s.before; f != nil && strings.HasPrefix(p, "_delta_log/") && strings.HasSuffix(p, ".json") {
		s.before = nil
		f()
	}
	return s.Store.PutIfAbsent(ctx, p, data)
}

// TestWriteAfterConflictReadsOnlyNewCommits: a writer that lost a commit
// race (the winner wrote the same txn appId: a skip) keeps its snapshot
// and, for the conflict check and for its next write, reads only the
// commits after it: nothing in _delta_log is listed again, and the next
// write sees the winner's commit (its version follows it, the rows are all
// there). Issue 22: "re-reading only after a conflict".
func TestWriteAfterConflictReadsOnlyNewCommits(t *testing.T) {
	ctx := context.Background()
	base, err := storage.Open(ctx, "mem://"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	fs, err := faultstore.New(base, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rs := &raceStore{Store: fs}
	tb, err := table.OpenStore(rs)
	if err != nil {
		t.Fatal(err)
	}
	other, err := table.OpenStore(base)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // versions 0..2, the snapshot of 2 held
		if _, err := tb.Write(ctx, rows(i*10, 10), table.WriteOptions{AppID: "q", Version: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Batch 3 is committed by the other writer first (version 3): ours
	// loses the race at version 3, the conflict check finds txn q=3, and
	// the write is a skip.
	rs.before = func() {
		if _, err := other.Write(ctx, rows(30, 10), table.WriteOptions{AppID: "q", Version: 3}); err != nil {
			t.Error(err)
		}
	}
	res, err := tb.Write(ctx, rows(30, 10), table.WriteOptions{AppID: "q", Version: 3})
	if err != nil || !res.Skipped || res.Version != 3 {
		t.Fatalf("write that lost the race: %+v, %v; want skipped at version 3", res, err)
	}
	// A commit of the other writer's, then our next write: both foreign
	// commits are read, nothing is listed.
	if _, err := other.Write(ctx, rows(40, 10), table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	fs.ResetCounts()
	res, err = tb.Write(ctx, rows(50, 10), table.WriteOptions{AppID: "q", Version: 5})
	if err != nil || res.Skipped || res.Version != 5 {
		t.Fatalf("write after the conflict: %+v, %v; want version 5", res, err)
	}
	if c := fs.Counts(); c.List != 0 || c.PutIfAbsent != 1 {
		t.Fatalf("write after the conflict: %+v; want no list of _delta_log and one commit put", c)
	}
	if _, n := numRecords(t, tb); n != 60 {
		t.Fatalf("table holds %d rows, want 60 (batches 0-3, the other writer's 10, batch 5)", n)
	}
	// Our txn conflicts with the winner's: the write fails with
	// ErrTxnMismatch, and the next one, from the right version, again
	// lists nothing.
	rs.before = func() {
		if _, err := other.Write(ctx, rows(60, 10), table.WriteOptions{Txns: []table.Txn{{AppID: "p", Version: 1, Read: table.NoTxn}}}); err != nil {
			t.Error(err)
		}
	}
	if _, err := tb.Write(ctx, rows(60, 10), table.WriteOptions{Txns: []table.Txn{{AppID: "p", Version: 1, Read: table.NoTxn}}}); !errors.Is(err, table.ErrTxnMismatch) {
		t.Fatalf("write racing the same txn appId: %v, want ErrTxnMismatch", err)
	}
	fs.ResetCounts()
	res, err = tb.Write(ctx, rows(70, 10), table.WriteOptions{Txns: []table.Txn{{AppID: "p", Version: 2, Read: 1}}})
	if err != nil || res.Version != 7 {
		t.Fatalf("write from the winner's txn version: %+v, %v; want version 7", res, err)
	}
	if c := fs.Counts(); c.List != 0 {
		t.Fatalf("write after the txn conflict: %+v; want no list of _delta_log", c)
	}
	if _, n := numRecords(t, tb); n != 80 {
		t.Fatalf("table holds %d rows, want 80", n)
	}
}
