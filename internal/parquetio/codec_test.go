package parquetio

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
)

// TestCodecsCompress is the regression test for two zero-value codecs:
// gzip stored pages uncompressed (its zero Level is NoCompression) and lz4 ran
// the unbounded-depth HC search (~20x slower than snappy). Every codec must
// make a compressible batch much smaller than "none" and read back.
func TestCodecsCompress(t *testing.T) {
	if c, _, _ := codecOf("gzip"); c.(*gzip.Codec).Level != gzip.DefaultCompression {
		t.Errorf("gzip level %d, want the default level", c.(*gzip.Codec).Level)
	}
	if c, _, _ := codecOf("lz4"); c.(*lz4.Codec).Level != lz4.Fastest {
		t.Errorf("lz4 level %v, want the fast block compressor", c.(*lz4.Codec).Level)
	}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "s", Type: schema.TypeString, Nullable: true},
	}}
	rows := make([][]any, 20_000)
	for i := range rows {
		rows[i] = []any{int64(i % 100), fmt.Sprintf("origin-%03d", i%50)}
	}
	ctx := context.Background()
	size := map[string]int64{}
	for _, codec := range []string{"none", "snappy", "gzip", "zstd", "lz4"} {
		st := newMemStore()
		files, err := WriteFiles(ctx, st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{Compression: codec})
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		size[codec] = files[0].Size
		f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		back, err := f.ReadAll(ctx, sch, ReadOptions{})
		if err != nil || len(back) != len(rows) || back[777][1] != rows[777][1] {
			t.Fatalf("%s: read back %d rows, err %v", codec, len(back), err)
		}
	}
	for _, codec := range []string{"snappy", "gzip", "zstd", "lz4"} {
		if size[codec] > size["none"]/3 {
			t.Errorf("%s file is %d bytes, uncompressed %d: not compressing", codec, size[codec], size["none"])
		}
	}
}
