package reader

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// TestColumnMapping writes Parquet files whose columns carry physical names
// and field ids, then reads them through logs in name and id mode
// (PROTOCOL.md, "Column Mapping"). In id mode the log's physical names are
// changed (as after a rename in some engines) so that only the field ids
// can match.
func TestColumnMapping(t *testing.T) {
	ctx := context.Background()
	meta := func(id int, phys string) map[string]any {
		return map[string]any{schema.MetaColumnMappingID: id, schema.MetaColumnMappingPhysicalName: phys}
	}
	writeSchema := &schema.StructType{Fields: []schema.StructField{
		{Name: "user id", Type: schema.TypeLong, Nullable: true, Metadata: meta(1, "col-1")},
		{Name: "Region", Type: schema.TypeString, Nullable: true, Metadata: meta(2, "col-2")},
		{Name: "info", Type: &schema.StructType{Fields: []schema.StructField{
			{Name: "a b", Type: schema.TypeInteger, Nullable: true, Metadata: meta(4, "col-4")},
		}}, Nullable: true, Metadata: meta(3, "col-3")},
	}}
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			st, err := storage.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var rows [][]any
			for i := range 6 {
				rows = append(rows, []any{int64(i), []string{"eu", "us"}[i%2], []any{int32(i * 10)}})
			}
			files, err := parquetio.WriteFiles(ctx, st, &schema.Batch{Schema: writeSchema, Rows: rows},
				parquetio.WriteOptions{PartitionColumns: []string{"Region"}, PhysicalNames: true})
			if err != nil {
				t.Fatal(err)
			}
			logSchema := writeSchema
			if mode == "id" {
				// Physical names that no Parquet column has: only ids match.
				b, _ := json.Marshal(writeSchema)
				s := strings.ReplaceAll(string(b), `"col-1"`, `"renamed-1"`)
				s = strings.ReplaceAll(s, `"col-4"`, `"renamed-4"`)
				logSchema, err = schema.ParseSchema([]byte(s))
				if err != nil {
					t.Fatal(err)
				}
			}
			schemaJSON, _ := json.Marshal(logSchema)
			schemaStr, _ := json.Marshal(string(schemaJSON))
			commit := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["columnMapping"],"writerFeatures":["columnMapping"]}}` + "\n" +
				fmt.Sprintf(`{"metaData":{"id":"m","format":{"provider":"parquet","options":{}},"schemaString":%s,"partitionColumns":["Region"],"configuration":{"delta.columnMapping.mode":%q,"delta.columnMapping.maxColumnId":"4"}}}`, schemaStr, mode) + "\n"
			for _, f := range files {
				// Partition values are keyed by physical name.
				pv := map[string]*string{"col-2": f.PartitionValues["Region"]}
				if v, ok := f.PartitionValues["col-2"]; ok {
					pv["col-2"] = v
				}
				pvj, _ := json.Marshal(pv)
				statsj, _ := json.Marshal(f.Stats)
				commit += fmt.Sprintf(`{"add":{"path":%q,"partitionValues":%s,"size":%d,"modificationTime":1,"dataChange":true,"stats":%s}}`+"\n",
					f.Path, pvj, f.Size, statsj)
			}
			writeLog(t, dir, commit)
			snap, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if snap.ColumnMappingMode() != mode {
				t.Fatalf("mode %s", snap.ColumnMappingMode())
			}
			recs, err := readAll(t, snap, ReadOptions{Where: "`user id` >= 2 AND Region = 'eu'"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, canonRow(r.Values))
			}
			slices.Sort(got)
			want := []string{"int64(2) | string(eu) | [int32(20)]", "int64(4) | string(eu) | [int32(40)]"}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			if names := []string{recs[0].Schema.Fields[0].Name, recs[0].Schema.Fields[2].Name}; names[0] != "user id" || names[1] != "info" {
				t.Fatalf("logical names %v", names)
			}
			// Stats are keyed by physical names: a nested filter prunes.
			pred, err := snap.Predicate("info.`a b` > 1000")
			if err != nil {
				t.Fatal(err)
			}
			kept, err := snap.Files(ctx, pred)
			if err != nil {
				t.Fatal(err)
			}
			if mode == "name" && len(kept) != 0 {
				t.Fatalf("info.a b > 1000 kept %d files", len(kept))
			}
		})
	}
}
