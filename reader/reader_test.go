package reader

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// event is the row type of the synthetic test table.
type event struct {
	ID      int64     `parquet:"id"`
	Country string    `parquet:"country"`
	TS      time.Time `parquet:"ts"`
	Score   *float64  `parquet:"score"`
	Tags    []string  `parquet:"tags"`
	Inner   inner     `parquet:"inner"`
}

type inner struct {
	X int32  `parquet:"x"`
	Y string `parquet:"y"`
}

var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func makeEvents(from, n int, country string) []event {
	out := make([]event, n)
	for i := range out {
		id := int64(from + i)
		var score *float64
		if id%5 != 0 {
			s := float64(id) / 2
			score = &s
		}
		out[i] = event{ID: id, Country: country, TS: baseTime.Add(time.Duration(id) * time.Second),
			Score: score, Tags: []string{fmt.Sprint("t", id%3)}, Inner: inner{X: int32(id), Y: country}}
	}
	return out
}

// newEventTable writes three commits: NL ids 0..99, BE ids 100..199, then
// NL ids 200..299, partitioned by country, with small row groups.
func newEventTable(t testing.TB) (string, []event) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var all []event
	for i, part := range []struct {
		from    int
		country string
	}{{0, "NL"}, {100, "BE"}, {200, "NL"}} {
		evs := makeEvents(part.from, 100, part.country)
		all = append(all, evs...)
		b, err := schema.FromStructs(evs)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := table.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.Write(ctx, b, table.WriteOptions{PartitionColumns: []string{"country"}, RowGroupSizeBytes: 1024,
			Now: func() time.Time { return baseTime.Add(time.Duration(i) * time.Hour) }})
		tb.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir, all
}

func TestRowsTypedRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dir, want := newEventTable(t)
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Version() != 2 || !slices.Equal(snap.PartitionColumns(), []string{"country"}) {
		t.Fatalf("version %d partitions %v", snap.Version(), snap.PartitionColumns())
	}
	var got []event
	for e, err := range Rows[event](ctx, snap, ReadOptions{Workers: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	slices.SortFunc(got, func(a, b event) int { return int(a.ID - b.ID) })
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Country != w.Country || !g.TS.Equal(w.TS) || !slices.Equal(g.Tags, w.Tags) || g.Inner != w.Inner ||
			(g.Score == nil) != (w.Score == nil) || (g.Score != nil && *g.Score != *w.Score) {
			t.Fatalf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestRowsDeterministicOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dir, _ := newEventTable(t)
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	seq := func(workers int) []string {
		recs, err := readAll(t, snap, ReadOptions{Workers: workers, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(recs))
		for i, r := range recs {
			out[i] = canonRow(r.Values)
		}
		return out
	}
	one := seq(1)
	for _, w := range []int{2, 3, 8} {
		if got := seq(w); !slices.Equal(got, one) {
			t.Fatalf("workers=%d: order differs from workers=1", w)
		}
	}
	// File order: the snapshot's files by path; rows in file order.
	files, err := snap.Files(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(files, func(a, b File) int { return cmpString(a.Path, b.Path) }) {
		t.Fatal("files are not in path order")
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestRowsWhereProjectionLimit(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dir, all := newEventTable(t)
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	cases := []struct {
		name      string
		where     string
		keep      func(e event) bool
		wantFiles int // files kept by pruning; -1: do not check
	}{
		{"partition eq", "country = 'BE'", func(e event) bool { return e.Country == "BE" }, 1},
		{"partition in", "country IN ('NL', 'XX')", func(e event) bool { return e.Country == "NL" }, 2},
		{"stats only", "id >= 250", func(e event) bool { return e.ID >= 250 }, 1},
		{"stats none", "id > 1000", func(e event) bool { return false }, 0},
		{"mixed", "country = 'NL' AND id < 10", func(e event) bool { return e.Country == "NL" && e.ID < 10 }, 1},
		{"null semantics", "score IS NULL", func(e event) bool { return e.Score == nil }, 3},
		{"not null compare", "NOT score > 10", func(e event) bool { return e.Score != nil && !(*e.Score > 10) }, -1},
		{"nested", "inner.x = 150", func(e event) bool { return e.Inner.X == 150 }, 1},
		{"timestamp", "ts > TIMESTAMP '2024-01-01 00:04:50'", func(e event) bool { return e.TS.After(baseTime.Add(290 * time.Second)) }, 1},
		{"or across partitions", "country = 'BE' OR id = 5", func(e event) bool { return e.Country == "BE" || e.ID == 5 }, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pred, err := snap.Predicate(tc.where)
			if err != nil {
				t.Fatal(err)
			}
			files, err := snap.Files(ctx, pred)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantFiles >= 0 && len(files) != tc.wantFiles {
				t.Errorf("Files kept %d, want %d", len(files), tc.wantFiles)
			}
			var want []string
			for _, e := range all {
				if tc.keep(e) {
					want = append(want, fmt.Sprintf("int64(%d) | string(%s)", e.ID, e.Country))
				}
			}
			recs, err := readAll(t, snap, ReadOptions{Where: tc.where, Columns: []string{"id", "Country"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				if r.Schema.Fields[1].Name != "country" {
					t.Fatalf("projected schema %v", r.Schema)
				}
				got = append(got, canonRow(r.Values))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows %v, want %d rows %v", len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
			}
		})
	}
	t.Run("limit stops early", func(t *testing.T) {
		recs, err := readAll(t, snap, ReadOptions{Limit: 7, Workers: 3})
		if err != nil || len(recs) != 7 {
			t.Fatalf("%d rows, %v", len(recs), err)
		}
	})
	t.Run("break stops readers", func(t *testing.T) {
		n := 0
		for _, err := range snap.Rows(ctx, ReadOptions{Workers: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 3 {
				break
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, o := range []ReadOptions{{Where: "id ="}, {Where: "nope = 1"}, {Columns: []string{"nope"}}, {Limit: -1}} {
			_, err := readAll(t, snap, o)
			if !errors.Is(err, expr.ErrSyntax) && !errors.Is(err, expr.ErrBind) && !errors.Is(err, ErrUnknownColumn) && !errors.Is(err, ErrOption) {
				t.Errorf("%+v: error %v", o, err)
			}
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		var err error
		for _, e := range snap.Rows(cctx, ReadOptions{}) {
			if e != nil {
				err = e
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	})
}

func TestTimeTravel(t *testing.T) {
	ctx := context.Background()
	dir, _ := newEventTable(t)
	count := func(opts ...Option) (int, error) {
		snap, err := Open(ctx, dir, opts...)
		if err != nil {
			return 0, err
		}
		defer snap.Close()
		recs, err := readAll(t, snap, ReadOptions{})
		return len(recs), err
	}
	for _, tc := range []struct {
		name string
		opt  Option
		want int
	}{
		{"version 0", AtVersion(0), 100},
		{"version 1", AtVersion(1), 200},
		{"latest", nil, 300},
	} {
		var opts []Option
		if tc.opt != nil {
			opts = append(opts, tc.opt)
		}
		if n, err := count(opts...); err != nil || n != tc.want {
			t.Errorf("%s: %d rows, %v; want %d", tc.name, n, err, tc.want)
		}
	}
	if _, err := count(AtVersion(9)); !errors.Is(err, txlog.ErrVersionNotFound) {
		t.Errorf("version 9: %v, want ErrVersionNotFound", err)
	}
	// Commit timestamps come from commitInfo; AsOf picks the latest commit at or before.
	snap, err := Open(ctx, dir, AtVersion(1))
	if err != nil {
		t.Fatal(err)
	}
	ts := snap.Timestamp()
	snap.Close()
	snap, err = Open(ctx, dir, AsOf(ts))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 1 {
		t.Errorf("AsOf(%v) = version %d, want 1", ts, snap.Version())
	}
	snap.Close()
	if _, err := count(AsOf(time.Unix(0, 0))); !errors.Is(err, txlog.ErrTimestampOutOfRange) {
		t.Errorf("AsOf(1970): %v, want ErrTimestampOutOfRange", err)
	}
	if _, err := count(AtVersion(1), AsOf(ts)); !errors.Is(err, ErrOption) {
		t.Errorf("AtVersion+AsOf: %v, want ErrOption", err)
	}
}

// writeLog writes commit files into dir/_delta_log.
func writeLog(t testing.TB, dir string, commits ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range commits {
		if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", i)), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnsupportedReaderFeature(t *testing.T) {
	for _, tc := range []struct {
		name, protocol, feature string
	}{
		{"unknown feature", `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","futureThing"],"writerFeatures":[]}}`, "futureThing"},
		{"reader version 4", `{"protocol":{"minReaderVersion":4,"minWriterVersion":7}}`, "readerVersion 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, tc.protocol+"\n"+
				`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}`+"\n")
			_, err := Open(context.Background(), dir)
			var ufe *txlog.UnsupportedFeatureError
			if !errors.As(err, &ufe) || ufe.Feature != tc.feature || !errors.Is(err, ErrUnsupportedFeature) {
				t.Fatalf("error %v, want unsupported feature %q", err, tc.feature)
			}
		})
	}
}

func TestNotATable(t *testing.T) {
	_, err := Open(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNotATable) {
		t.Fatalf("error %v, want ErrNotATable", err)
	}
}

// TestStatsSkippingRegressions are the three regressions the reader must
// never lose, on real files and logs.
func TestStatsSkippingRegressions(t *testing.T) {
	ctx := context.Background()
	type row struct {
		ID    int64     `parquet:"id"`
		TS    time.Time `parquet:"ts"`
		Score float64   `parquet:"score"`
	}
	dir := t.TempDir()
	subMS := time.Date(2001, 1, 1, 0, 47, 0, 123456000, time.UTC)
	rows := []row{{1, subMS.Add(-time.Hour), 1.0}, {2, subMS, math.NaN()}, {3, subMS.Add(-time.Minute), 2.0}}
	b, err := schema.FromStructs(rows)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	// A second file whose stats lack the column "id" (hand-written add).
	snap0, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := snap0.Files(ctx, nil)
	snap0.Close()
	f := files[0]
	data, err := os.ReadFile(filepath.Join(dir, f.Key))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "copy.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	add := fmt.Sprintf(`{"add":{"path":"copy.parquet","partitionValues":{},"size":%d,"modificationTime":0,"dataChange":true,"stats":"{\"numRecords\":3,\"minValues\":{\"score\":1.0},\"maxValues\":{\"score\":2.0},\"nullCount\":{\"score\":0}}"}}`, len(data))
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 1)), []byte(add+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	cases := []struct {
		name      string
		where     string
		wantFiles []string // kept files (copy.parquet or the original)
		wantIDs   []int64
	}{
		{"file without stats for the column is kept", "id = 2", []string{"copy.parquet"}, []int64{2, 2}},
		{"sub-millisecond timestamp at the max found by equality", "ts = TIMESTAMP '2001-01-01 00:47:00.123456'", []string{"copy.parquet", f.Path}, []int64{2, 2}},
		{"NaN in a double column is greater than everything", "score > 100", []string{"copy.parquet", f.Path}, []int64{2, 2}},
		{"NaN equals NaN", "score = 'NaN'", []string{"copy.parquet", f.Path}, []int64{2, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pred, err := snap.Predicate(tc.where)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := snap.Files(ctx, pred)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, k := range kept {
				paths = append(paths, k.Path)
			}
			slices.Sort(paths)
			want := slices.Clone(tc.wantFiles)
			slices.Sort(want)
			// the equality filter may legitimately also skip the original
			// file only when its stats exclude the value; it must keep the
			// files listed.
			for _, w := range want {
				if !slices.Contains(paths, w) {
					t.Fatalf("file %s skipped (kept %v)", w, paths)
				}
			}
			recs, err := readAll(t, snap, ReadOptions{Where: tc.where, Columns: []string{"id"}})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range recs {
				ids = append(ids, r.Values[0].(int64))
			}
			if !slices.Equal(ids, tc.wantIDs) {
				t.Fatalf("ids %v, want %v", ids, tc.wantIDs)
			}
		})
	}
	// And a filter that the stats do rule out is skipped for the file with
	// stats (so the test above is not vacuous).
	pred, _ := snap.Predicate("id = 99")
	kept, _ := snap.Files(ctx, pred)
	if len(kept) != 1 || kept[0].Path != "copy.parquet" {
		t.Fatalf("id = 99 kept %v, want only copy.parquet", kept)
	}
}

func TestOnlyPartitionColumn(t *testing.T) {
	dir, all := newEventTable(t)
	snap, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	recs, err := readAll(t, snap, ReadOptions{Columns: []string{"country"}, Where: "country = 'BE'"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range all {
		if e.Country == "BE" {
			n++
		}
	}
	if len(recs) != n || len(recs[0].Values) != 1 || recs[0].Values[0] != "BE" {
		t.Fatalf("%d records (want %d): %v", len(recs), n, recs[:1])
	}
}

func TestRowsTypedErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dir, _ := newEventTable(t)
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	first := func(seq func(func(error) bool)) error {
		var got error
		seq(func(err error) bool { got = err; return err == nil })
		return got
	}
	type wrongType struct {
		ID string `parquet:"id"` // long column into a string
	}
	type tooSmall struct {
		ID int8 `parquet:"id"` // ids up to 299 overflow int8
	}
	type noMatch struct {
		Nope int
	}
	type partial struct {
		ID      uint16 `parquet:"id"`
		Skipped string `parquet:"-"`
		Ts      *time.Time
	}
	cases := []struct {
		name string
		run  func() error
		ok   bool
	}{
		{"not a struct", func() error {
			return first(func(y func(error) bool) {
				for _, err := range Rows[int](ctx, snap, ReadOptions{}) {
					if !y(err) {
						return
					}
				}
			})
		}, false},
		{"wrong type", func() error {
			return first(func(y func(error) bool) {
				for _, err := range Rows[wrongType](ctx, snap, ReadOptions{}) {
					if !y(err) {
						return
					}
				}
			})
		}, false},
		{"overflow", func() error {
			return first(func(y func(error) bool) {
				for _, err := range Rows[tooSmall](ctx, snap, ReadOptions{}) {
					if !y(err) {
						return
					}
				}
			})
		}, false},
		{"no matching field", func() error {
			return first(func(y func(error) bool) {
				for _, err := range Rows[noMatch](ctx, snap, ReadOptions{}) {
					if !y(err) {
						return
					}
				}
			})
		}, false},
		{"partial struct, conversions", func() error {
			n := 0
			for v, err := range Rows[partial](ctx, snap, ReadOptions{Where: "id = 7"}) {
				if err != nil {
					return err
				}
				if v.ID != 7 || v.Ts == nil || !v.Ts.Equal(baseTime.Add(7*time.Second)) || v.Skipped != "" {
					return fmt.Errorf("got %+v", v)
				}
				n++
			}
			if n != 1 {
				return fmt.Errorf("%d rows", n)
			}
			return nil
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if tc.ok && err != nil {
				t.Fatal(err)
			}
			if !tc.ok && !errors.Is(err, ErrTypeMapping) {
				t.Fatalf("error %v, want ErrTypeMapping", err)
			}
		})
	}
}
