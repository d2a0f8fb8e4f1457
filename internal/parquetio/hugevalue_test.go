package parquetio

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// hugeString is n bytes of pseudo-random lowercase letters (they do not
// compress away, so a copy of the value in the file shows in its size).
func hugeString(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	b.Grow(n)
	for range n {
		b.WriteByte(byte('a' + rng.IntN(26)))
	}
	return b.String()
}

// TestHugeStringValueIsStoredOnce is issue 14 item 5: one 30 MB string
// value was stored 3 to 6 times (page header statistics, column chunk
// statistics: min and max each), a 96-190 MB file for one row. The file is
// now at most the value plus a few KB, the value reads back intact, and
// the Delta stats keep Delta's 32-character prefix rule.
func TestHugeStringValueIsStoredOnce(t *testing.T) {
	const size = 30 << 20
	huge := hugeString(size, 14)
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "b", Type: schema.TypeBinary, Nullable: true},
	}}
	for _, codec := range []string{"none", "snappy"} {
		t.Run(codec, func(t *testing.T) {
			st := newMemStore()
			files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: [][]any{{int64(1), huge, []byte("tiny")}}},
				WriteOptions{Compression: codec})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 {
				t.Fatalf("%d files", len(files))
			}
			f := files[0]
			t.Logf("%s: file %d bytes for a %d-byte value (%.2fx)", codec, f.Size, size, float64(f.Size)/size)
			if limit := int64(size + 8<<10); f.Size > limit {
				t.Fatalf("file is %d bytes, want at most %d (the value plus 8 KiB)", f.Size, limit)
			}
			pf, err := OpenFile(context.Background(), st, f.Path, f.Size)
			if err != nil {
				t.Fatal(err)
			}
			defer pf.Close()
			rows, err := pf.ReadAll(context.Background(), sch, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0][1] != huge || string(rows[0][2].([]byte)) != "tiny" {
				t.Fatalf("the value did not read back intact (%d rows)", len(rows))
			}
			var stats struct {
				NumRecords int64
				MinValues  map[string]any
				MaxValues  map[string]any
			}
			if err := json.Unmarshal([]byte(f.Stats), &stats); err != nil {
				t.Fatal(err)
			}
			if stats.NumRecords != 1 || stats.MinValues["s"] != huge[:32] || stats.MaxValues["s"] != huge[:32]+"\u007f" {
				t.Fatalf("stats %s, want min the 32-character prefix and max the prefix + U+007F", f.Stats[:min(len(f.Stats), 300)])
			}
		})
	}
}

// The Delta stats of a huge string look at its head only: truncating a
// 30 MB value to its 32-character prefix allocated 180 MB (the whole value
// as runes, then as UTF-16); now a few hundred bytes.
func TestStatsTruncationOfAHugeStringAllocatesItsPrefixOnly(t *testing.T) {
	huge := hugeString(30<<20, 5)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lo := truncateMinString(huge, StatsStringPrefixLength)
	hi, ok := truncateMaxString(huge, StatsStringPrefixLength)
	runtime.ReadMemStats(&after)
	if lo != huge[:32] || !ok || hi != huge[:32]+"\u007f" {
		t.Fatalf("min %q max %q (%v)", lo, hi, ok)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("truncating a 30 MB string allocated %d bytes, want at most 64 KiB", n)
	}
}

// TestParquetStatisticsAsSparkWritesThem: column chunk statistics keep
// min/max up to parquet-mr's 4096-byte limit and drop them (null_count
// stays) past it; the column index bounds are cut to 64 bytes
// (parquet.columnindex.truncate.length), the max rounded up; data page
// headers carry no statistics (PARQUET-1365), counted in bytes: a file of
// one 3000-byte value is that value plus the 64-byte index bounds and
// its footer copy, not 5 copies more.
func TestParquetStatisticsAsSparkWritesThem(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "short", Type: schema.TypeString, Nullable: true},
		{Name: "mid", Type: schema.TypeString, Nullable: true},
		{Name: "big", Type: schema.TypeBinary, Nullable: true},
	}}
	a, b := strings.Repeat("a", 100), strings.Repeat("b", 100)
	mid := hugeString(1500, 1)
	big := []byte(hugeString(3000, 2))
	rows := [][]any{{a, mid, big}, {b, nil, nil}}
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := st.Read(context.Background(), files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	cols := md.RowGroups[0].Columns
	short, midSt, bigSt := cols[0].MetaData.Statistics, cols[1].MetaData.Statistics, cols[2].MetaData.Statistics
	if string(short.MinValue) != a || string(short.MaxValue) != b {
		t.Errorf("short: chunk min/max %q/%q, want the full values", short.MinValue, short.MaxValue)
	}
	if string(midSt.MinValue) != mid || string(midSt.MaxValue) != mid || midSt.NullCount != 1 {
		t.Errorf("mid (1500+1500 bytes <= 4096): min/max kept? %d/%d bytes, nulls %d", len(midSt.MinValue), len(midSt.MaxValue), midSt.NullCount)
	}
	if bigSt.MinValue != nil || bigSt.MaxValue != nil || bigSt.Min != nil || bigSt.Max != nil || bigSt.NullCount != 1 {
		t.Errorf("big (3000+3000 bytes > 4096): min %d max %d bytes, nulls %d; want no min/max, null_count 1", len(bigSt.MinValue), len(bigSt.MaxValue), bigSt.NullCount)
	}
	ci, _, err := pf.ReadPageIndex()
	if err != nil {
		t.Fatal(err)
	}
	if len(ci) != 3 {
		t.Fatalf("%d column indexes", len(ci))
	}
	if got := string(ci[0].MinValues[0]); got != a[:64] {
		t.Errorf("short: column index min %q, want the 64-byte prefix", got)
	}
	if got := string(ci[0].MaxValues[0]); got != b[:63]+"c" {
		t.Errorf("short: column index max %q, want the 64-byte prefix rounded up", got)
	}
	if got := len(ci[2].MinValues[0]); got != 64 {
		t.Errorf("big: column index min of %d bytes, want 64", got)
	}
	// The 3000-byte value is stored once, the 1500-byte one three times
	// (data, chunk min, chunk max): no page header copies.
	if limit := int64(3000 + 3*1500 + 4<<10); files[0].Size > limit {
		t.Errorf("file %d bytes, want at most %d", files[0].Size, limit)
	}
}
