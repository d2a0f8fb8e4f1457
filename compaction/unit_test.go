package compaction

import (
	"context"
	"errors"
	"testing"
)

func TestHiddenKey(t *testing.T) {
	part := []string{"_p", "origin", "a b"}
	for _, tc := range []struct {
		key    string
		hidden bool
	}{
		{"part-0.parquet", false},
		{"origin=SFO/part-0.parquet", false},
		{"_p=1/part-0.parquet", false},
		{"_p=1/origin=SFO/part-0.parquet", false},
		{"a%20b=1/x.parquet", false}, // escaped column name
		{"_q=1/part-0.parquet", true},
		{"_delta_log/00000000000000000000.json", true},
		{"_spark_metadata/0", true},
		{".hidden/part-0.parquet", true},
		{"origin=SFO/.part-0.parquet.crc", true},
		{"origin=SFO/_SUCCESS", true},
		{"_p=1", true}, // a file, not a directory
		{"_change_data/cdc-0.parquet", false},
		{"origin=SFO/_tmp/x.parquet", true},
	} {
		if got := hiddenKey(tc.key, part); got != tc.hidden {
			t.Errorf("hiddenKey(%q) = %v, want %v", tc.key, got, tc.hidden)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"134217728", 128 << 20, false},
		{"128MiB", 128 << 20, false},
		{"128mb", 128 << 20, false},
		{"1g", 1 << 30, false},
		{"10 KB", 10 << 10, false},
		{"", 0, true},
		{"12 parsecs", 0, true},
		{"-5", 0, true},
		{"99999999999999t", 0, true},
	} {
		got, err := ParseByteSize(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("ParseByteSize(%q) error %v is not ErrInvalidOptions", tc.in, err)
		}
	}
}

// Cancelling an OPTIMIZE mid-rewrite commits nothing and leaves no new file.
func TestExecuteCancelled(t *testing.T) {
	tb, st := newTable(t, []string{"origin"}, nil)
	for i := range 3 {
		appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
	}
	before := listKeys(t, st)
	snap, _ := tb.Snapshot(context.Background())
	plan, err := NewPlan(snap, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = Execute(ctx, tb, plan, ExecOptions{Workers: 1, Progress: func(e ProgressEvent) {
		if e.FilesDone == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute after cancel: %v", err)
	}
	after, _ := tb.Snapshot(context.Background())
	if after.Version() != snap.Version() {
		t.Fatalf("committed version %d after cancel", after.Version())
	}
	if got := listKeys(t, st); len(got) != len(before) {
		t.Fatalf("files left behind: before %d, after %d", len(before), len(got))
	}
}
