package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakesink/lakesink/schema"
)

// Issue 22: a partitioned batch is shredded once in row order and each
// file copies its rows' values out (preShred, writeLanePre). Its files must
// be those of the row-by-row shredder: the same rows and the same Delta
// statistics (nulls, NaN, min/max of strings, longs, integers, doubles,
// timestamps with and without zone), chunk after chunk.
func TestPreShreddedPartitionsMatchRowShredder(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "p", Type: schema.TypeString, Nullable: true},
		{Name: "l", Type: schema.TypeLong, Nullable: true},
		{Name: "i", Type: schema.TypeInteger, Nullable: true},
		{Name: "d", Type: schema.TypeDouble, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	}}
	zone := time.FixedZone("x", 3600)
	base := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 3000
	rows := make([][]any, n)
	for k := range rows {
		row := []any{fmt.Sprintf("v%04d", (k*7919)%n), fmt.Sprintf("P%d", k%7), int64(k*31%1000 - 500), int32(k % 97),
			float64(k%13) / 3, base.Add(time.Duration(k) * time.Second), base.Add(time.Duration(k) * time.Hour).In(zone)}
		if k%5 == 0 {
			row[0], row[2], row[4] = nil, nil, nil
		}
		if k%11 == 0 {
			row[3], row[5], row[6] = nil, nil, nil
		}
		if k == 17 {
			row[4] = math.NaN()
		}
		rows[k] = row
	}
	write := func(pre bool) []WrittenFile {
		bw, err := NewBatchWriter(newMemStore(), sch, WriteOptions{PartitionColumns: []string{"p"}})
		if err != nil {
			t.Fatal(err)
		}
		if bw.pre == nil {
			t.Fatal("a partitioned batch of primitive columns is not pre-shredded")
		}
		if !pre {
			bw.pre = nil
		}
		for _, chunk := range [][][]any{rows[:1000], rows[1000:1001], rows[1001:]} {
			if err := bw.Write(ctx, chunk); err != nil {
				t.Fatal(err)
			}
		}
		files, err := bw.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	got, want := write(true), write(false)
	if len(got) != 7 || len(want) != 7 {
		t.Fatalf("%d and %d files, want 7", len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if !reflect.DeepEqual(g.PartitionValues, w.PartitionValues) || g.NumRecords != w.NumRecords || g.Stats != w.Stats {
			t.Errorf("file %d: %v %d %s\nwant %v %d %s", k, g.PartitionValues, g.NumRecords, g.Stats, w.PartitionValues, w.NumRecords, w.Stats)
		}
	}
}

// Issue 22: a batch spread over many partitions shares the dictionary and
// page budgets among its open files: with 20 partitions and a budget of 20
// minimal shares, a column whose dictionary passes 16 KiB (2,048 longs) in
// each file falls back to PLAIN there, which it would not under one file's
// 1 MiB; the rows read back.
func TestManyPartitionsShareDictionaryBudget(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong, Nullable: true},
		{Name: "v", Type: schema.TypeLong, Nullable: true},
	}}
	const parts, perPart = 20, 5000
	rows := make([][]any, 0, parts*perPart)
	for k := range parts * perPart {
		// v repeats over the first 2,000 rows of each partition (the
		// sample keeps the dictionary), then is distinct: 3,000 values.
		v := int64(k)
		if k < 2000*parts {
			v = int64(k % 3)
		}
		rows = append(rows, []any{int64(k % parts), v})
	}
	st := newMemStore()
	bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	if dict, page := bw.columnShares(); dict != dictionaryPageBytes || page != pageBufferSize {
		t.Fatalf("one partition's shares %d, %d; want %d, %d", dict, page, dictionaryPageBytes, pageBufferSize)
	}
	bw.dictBudget, bw.pageBudget = parts*minDictionaryBytes, parts*minPageBytes
	if err := bw.Write(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if dict, page := bw.columnShares(); dict != minDictionaryBytes || page != minPageBytes {
		t.Errorf("%d partitions' shares %d, %d; want %d, %d", parts, dict, page, minDictionaryBytes, minPageBytes)
	}
	files, err := bw.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != parts {
		t.Fatalf("%d files", len(files))
	}
	data, err := st.Read(ctx, files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[0].Columns[0].MetaData
	var dictPages, plainPages int
	for _, es := range md.EncodingStats {
		if es.PageType == format.DataPage && es.Encoding == format.Plain {
			plainPages += int(es.Count)
		}
		if es.PageType == format.DataPage && es.Encoding == format.RLEDictionary {
			dictPages += int(es.Count)
		}
	}
	if dictPages == 0 || plainPages == 0 {
		t.Errorf("v pages %v: want dictionary pages, then PLAIN ones", md.EncodingStats)
	}
	f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.ReadAll(ctx, &schema.StructType{Fields: sch.Fields[1:]}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != perPart {
		t.Fatalf("%d rows back", len(back))
	}
	for j, r := range back {
		if want := rows[j*parts][1]; r[0] != want {
			t.Fatalf("row %d: %v, want %v", j, r[0], want)
		}
	}
}

// TestLeafStatsMatchesValueByValue: leafStats (least and greatest of a
// chunk found first) gives the statistics the values added one by one give,
// for every kind, with nulls, a chunk of nulls only, one value, NaN, and
// strings that share 8-byte prefixes.
func TestLeafStatsMatchesValueByValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, leaf := range []leafKind{lkString, lkLong, lkInt, lkTimestamp, lkTimestampNTZ, lkDouble} {
		for _, size := range []int{0, 1, 2, 143, 512} {
			for _, nullEvery := range []int{0, 1, 3} {
				vals := make([]parquet.Value, size)
				want := colStats{}
				for i := range vals {
					if nullEvery > 0 && i%nullEvery == 0 {
						want.nulls++
						continue
					}
					switch leaf {
					case lkString:
						s := fmt.Sprintf("s%d", rng.IntN(50))
						if rng.IntN(2) == 0 {
							s = tieStrings[rng.IntN(len(tieStrings))] // 8-byte prefixes shared
						}
						vals[i] = parquet.ByteArrayValue([]byte(s))
						want.addString(s)
					case lkInt:
						x := int32(rng.Uint32())
						vals[i] = parquet.Int32Value(x)
						want.addInt(int64(x))
					case lkDouble:
						x := rng.NormFloat64()
						if rng.IntN(40) == 0 {
							x = math.NaN()
						}
						vals[i] = parquet.DoubleValue(x)
						want.addFloat(x)
					default:
						x := int64(rng.Uint64())
						vals[i] = parquet.Int64Value(x)
						want.addInt(x)
					}
				}
				s := &shredder{stats: make([]colStats, 1)}
				s.leafStats(&wnode{leaf: leaf, stat: 0}, vals[:size/2])
				s.leafStats(&wnode{leaf: leaf, stat: 0}, vals[size/2:])
				if got := s.stats[0]; !reflect.DeepEqual(got, want) {
					t.Errorf("leaf %d, %d values, null every %d: leafStats %+v, value by value %+v", leaf, size, nullEvery, got, want)
				}
			}
		}
	}
}
