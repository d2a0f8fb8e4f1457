package reader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// TestOpenTable: a snapshot of a *table.Table reads the same version,
// timestamp and rows as Open of its URL, for the latest version, AtVersion
// and AsOf, with Open's errors.
func TestOpenTable(t *testing.T) {
	ctx := context.Background()
	dir, _ := newEventTable(t)
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	rows := func(t testing.TB, s *Snapshot) []string {
		recs, err := readAll(t, s, ReadOptions{Where: "id >= 50 AND id < 250"})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(recs))
		for i, r := range recs {
			out[i] = canonRow(r.Values)
		}
		slices.Sort(out)
		return out
	}
	v1, err := Open(ctx, dir, AtVersion(1))
	if err != nil {
		t.Fatal(err)
	}
	ts1 := v1.Timestamp()
	v1.Close()
	for _, tc := range []struct {
		name string
		opts []Option
		want int64
	}{
		{"latest", nil, 2},
		{"version 0", []Option{AtVersion(0)}, 0},
		{"as of version 1", []Option{AsOf(ts1)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Open(ctx, dir, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			got, err := OpenTable(ctx, tb, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			if got.Version() != tc.want || got.Version() != want.Version() || !got.Timestamp().Equal(want.Timestamp()) ||
				got.Kind() != KindDelta || !slices.Equal(got.PartitionColumns(), want.PartitionColumns()) {
				t.Fatalf("OpenTable: version %d at %v, partitions %v; Open: version %d at %v, partitions %v (want version %d)",
					got.Version(), got.Timestamp(), got.PartitionColumns(), want.Version(), want.Timestamp(), want.PartitionColumns(), tc.want)
			}
			g, w := rows(t, got), rows(t, want)
			if len(w) == 0 || !slices.Equal(g, w) {
				t.Fatalf("OpenTable read %d rows, Open %d; they differ", len(g), len(w))
			}
		})
	}
	// Closing the snapshot leaves the table's store open.
	if s, err := OpenTable(ctx, tb); err != nil {
		t.Fatal(err)
	} else if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Snapshot(ctx); err != nil {
		t.Fatalf("table after closing its reader snapshot: %v", err)
	}

	if _, err := OpenTable(ctx, tb, AtVersion(9)); !errors.Is(err, txlog.ErrVersionNotFound) {
		t.Errorf("version 9: %v, want ErrVersionNotFound", err)
	}
	if _, err := OpenTable(ctx, tb, AtVersion(1), AsOf(ts1)); !errors.Is(err, ErrOption) {
		t.Errorf("AtVersion+AsOf: %v, want ErrOption", err)
	}
	mem, err := storage.Open(ctx, "mem://opentable-other")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for name, opt := range map[string]Option{
		"WithStore": WithStore(mem), "WithLogOptions": WithLogOptions(txlog.DefaultOptions()),
		"SkipChecksumValidation": SkipChecksumValidation(), "WithLegacyFileSinkDeletes": WithLegacyFileSinkDeletes(),
	} {
		if _, err := OpenTable(ctx, tb, opt); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want ErrOption naming it", name, err)
		}
	}
	empty, err := table.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if _, err := OpenTable(ctx, empty); !errors.Is(err, ErrNotATable) {
		t.Errorf("table without a log: %v, want ErrNotATable", err)
	}
}

// TestOpenTableUsesTheTablesLogOptions: the snapshot is read through the
// table's own log, so a table opened with WithoutChecksumValidation reads a
// version whose .crc disagrees, which Open of the URL refuses.
func TestOpenTableUsesTheTablesLogOptions(t *testing.T) {
	ctx := context.Background()
	dir, _ := newEventTable(t)
	crc := filepath.Join(dir, "_delta_log", "00000000000000000002.crc")
	b, err := os.ReadFile(crc)
	if err != nil {
		t.Fatalf("the test table has no checksum for version 2: %v", err)
	}
	bad := strings.Replace(string(b), `"numFiles":3`, `"numFiles":4`, 1)
	if bad == string(b) {
		t.Fatalf("no numFiles 3 in %s", b)
	}
	if err := os.WriteFile(crc, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dir); !errors.Is(err, txlog.ErrCorruptLog) {
		t.Fatalf("Open with a bad .crc: %v, want ErrCorruptLog", err)
	}
	checked, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer checked.Close()
	if _, err := OpenTable(ctx, checked); !errors.Is(err, txlog.ErrCorruptLog) {
		t.Fatalf("OpenTable of a table opened with validation: %v, want ErrCorruptLog", err)
	}
	skip, err := table.Open(ctx, dir, table.WithoutChecksumValidation())
	if err != nil {
		t.Fatal(err)
	}
	defer skip.Close()
	s, err := OpenTable(ctx, skip)
	if err != nil {
		t.Fatalf("OpenTable of a table opened WithoutChecksumValidation: %v", err)
	}
	defer s.Close()
	if s.Version() != 2 {
		t.Fatalf("version %d, want 2", s.Version())
	}
}

// TestOpenedLogIsReadOnly: the Log that Open reads a Delta table through is
// read-only (txlog.Options.ReadOnly, even through WithLogOptions): it keeps
// no loaded checkpoint's bytes for a checkpoint it will never write, and a
// checkpoint through it is refused.
func TestOpenedLogIsReadOnly(t *testing.T) {
	ctx := context.Background()
	dir, _ := newEventTable(t)
	for _, opts := range [][]Option{nil, {WithLogOptions(txlog.DefaultOptions())}} {
		s, err := Open(ctx, dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.log.Checkpoint(ctx, s.Delta()); !errors.Is(err, txlog.ErrReadOnly) {
			t.Errorf("checkpoint through the Log of Open(%d options): %v, want txlog.ErrReadOnly", len(opts), err)
		}
		s.Close()
	}
}
