package table_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/table"
)

// TestWriteTxnsCommitsSeveralTxnsAndRefusesStaleRead: one commit carries a
// txn per appId (as kafka-delta-ingest writes one per Kafka partition); a
// write that continues from a version the table no longer has commits
// nothing and reports a *TxnMismatchError.
func TestWriteTxnsCommitsSeveralTxnsAndRefusesStaleRead(t *testing.T) {
	ctx := context.Background()
	tb := open(t)
	res, err := tb.Write(ctx, rows(0, 10), table.WriteOptions{Txns: []table.Txn{
		{AppID: "g-t-0", Version: 4, Read: table.NoTxn}, {AppID: "g-t-1", Version: 9, Read: table.NoTxn}}})
	if err != nil || res.Skipped {
		t.Fatalf("write: %+v %v", res, err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Txns(); len(got) != 2 || got["g-t-0"] != 4 || got["g-t-1"] != 9 {
		t.Fatalf("txns %v, want g-t-0=4 g-t-1=9", got)
	}
	// Continue partition 0 from 4: fine. Partition 1 from none: stale.
	_, err = tb.Write(ctx, rows(10, 10), table.WriteOptions{Txns: []table.Txn{
		{AppID: "g-t-0", Version: 7, Read: 4}, {AppID: "g-t-1", Version: 12, Read: table.NoTxn}}})
	var me *table.TxnMismatchError
	if !errors.Is(err, table.ErrTxnMismatch) || !errors.As(err, &me) || me.AppID != "g-t-1" || me.Have != 9 || me.Want != table.NoTxn {
		t.Fatalf("stale write: %v, want a TxnMismatchError for g-t-1 (have 9, want none)", err)
	}
	if _, n := numRecords(t, tb); n != 10 {
		t.Fatalf("rows = %d after a refused write, want 10", n)
	}
	if _, err := tb.Write(ctx, rows(10, 10), table.WriteOptions{Txns: []table.Txn{
		{AppID: "g-t-0", Version: 7, Read: 4}, {AppID: "g-t-1", Version: 12, Read: 9}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Write(ctx, nil, table.WriteOptions{Txns: []table.Txn{{AppID: "a", Version: 1, Read: table.NoTxn}, {AppID: "a", Version: 2, Read: table.NoTxn}}}); !errors.Is(err, table.ErrInvalidOptions) {
		t.Fatalf("duplicate appIds: %v, want ErrInvalidOptions", err)
	}
}

// TestWriteTxnsConcurrentWritersOneWinnerPerAppID: writers racing from the
// same read of one appId (two workers that both think they own a Kafka
// partition) commit once; the others fail with ErrTxnMismatch, either at
// the pre-commit check or through the log's ConcurrentTransaction
// conflict. Writers of distinct appIds all commit.
func TestWriteTxnsConcurrentWritersOneWinnerPerAppID(t *testing.T) {
	ctx := context.Background()
	url := "file://" + t.TempDir()
	const writers = 4
	type result struct {
		app string
		err error
	}
	errs := make(chan result, 2*writers)
	for w := range writers {
		for _, app := range []string{"shared", fmt.Sprintf("own-%d", w)} {
			go func() {
				tb, err := table.Open(ctx, url)
				if err != nil {
					errs <- result{app, err}
					return
				}
				defer tb.Close()
				_, err = tb.Write(ctx, rows(w*10, 10), table.WriteOptions{Txns: []table.Txn{{AppID: app, Version: int64(w), Read: table.NoTxn}}})
				errs <- result{app, err}
			}()
		}
	}
	won := 0
	for range 2 * writers {
		r := <-errs
		switch {
		case r.err == nil && r.app == "shared":
			won++
		case r.err == nil:
		case r.app == "shared" && errors.Is(r.err, table.ErrTxnMismatch):
		default:
			t.Fatalf("writer of %s: %v", r.app, r.err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers of appId shared committed, want 1", won)
	}
	tb, _ := table.Open(ctx, url)
	defer tb.Close()
	if _, n := numRecords(t, tb); n != (writers+1)*10 {
		t.Fatalf("rows = %d, want %d", n, (writers+1)*10)
	}
}
