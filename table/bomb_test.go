package table_test

// Hostile-input tests (issue #9) at the table layer: creating a table with a
// schema Parquet cannot hold, and opening a table another writer created
// with a schemaString nested far deeper than any engine writes, or with a
// feature or action this package does not know. Each is a typed error naming
// the column, feature or file, and nothing is written.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

func nestedStructs(depth int) *schema.StructType {
	var typ schema.DataType = schema.TypeLong
	for range depth {
		typ = &schema.StructType{Fields: []schema.StructField{{Name: "s", Type: typ, Nullable: true}}}
	}
	return &schema.StructType{Fields: []schema.StructField{{Name: "c", Type: typ, Nullable: true}}}
}

func logKeys(t *testing.T, tb *table.Table) []string {
	t.Helper()
	var out []string
	for fi, err := range tb.Store().List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fi.Path)
	}
	slices.Sort(out)
	return out
}

// TestBombCreateRefusesUnwritableSchemas: Create validates the schema
// against Parquet's limits (schema.ValidateForWrite) before committing
// version 0.
func TestBombCreateRefusesUnwritableSchemas(t *testing.T) {
	ctx := context.Background()
	wide := &schema.StructType{}
	for g := range 66 {
		inner := &schema.StructType{}
		for i := range 1000 {
			inner.Fields = append(inner.Fields, schema.StructField{Name: fmt.Sprintf("f%d", i), Type: schema.TypeInteger, Nullable: true})
		}
		wide.Fields = append(wide.Fields, schema.StructField{Name: fmt.Sprintf("g%d", g), Type: inner, Nullable: true})
	}
	for _, tc := range []struct {
		name   string
		schema *schema.StructType
		want   string
	}{
		{"255 nested structs", nestedStructs(255), "256 Parquet levels deep"},
		{"66,000 leaf columns", wide, "more than 65535 leaf columns"},
		{"deepest writable", nestedStructs(254), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := "mem://" + strings.ReplaceAll(t.Name(), "/", "_")
			tb, err := table.Create(ctx, url, table.CreateOptions{Schema: tc.schema})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				tb.Close()
				return
			}
			if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Create = %v, want ErrSchema %q", err, tc.want)
			}
			tb, err = table.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if ok, err := tb.Exists(ctx); ok || err != nil {
				t.Fatalf("refused create left a table (exists %v, err %v)", ok, err)
			}
		})
	}
}

// TestBombForeignDeepSchemaString: version 0 written by another writer has
// a schemaString of 3,000 nested structs (9,000 nested JSON values, under
// encoding/json's 10,000 limit). The log replays (its schema is not needed
// for that), the schema is refused with ErrSchema (deeper than
// schema.MaxSchemaDepth), and a write is refused before anything is
// written.
func TestBombForeignDeepSchemaString(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[{"name":"c","nullable":true,"metadata":{},"type":`)
	for range 3000 {
		b.WriteString(`{"type":"struct","fields":[{"name":"s","nullable":true,"metadata":{},"type":`)
	}
	b.WriteString(`"long"`)
	for range 3000 {
		b.WriteString(`}]}`)
	}
	b.WriteString(`}]}`)
	tb, err := table.Open(ctx, "mem://"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	proto := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	md := txlog.Metadata{ID: "foreign", Format: txlog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: b.String(), PartitionColumns: []string{}, Configuration: map[string]string{}}
	data, err := txlog.EncodeCommit([]txlog.Action{{Protocol: &proto}, {MetaData: &md}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Store().Put(ctx, txlog.CommitPath(0), data); err != nil {
		t.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if _, err := snap.Schema(); !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "nested deeper than 1000") {
		t.Fatalf("Schema() = %v, want ErrSchema nested deeper than 1000", err)
	}
	before := logKeys(t, tb)
	batch := &schema.Batch{Schema: nestedStructs(3), Rows: [][]any{{[]any{[]any{[]any{int64(1)}}}}}}
	if _, err := tb.Write(ctx, batch, table.WriteOptions{}); !errors.Is(err, schema.ErrSchema) {
		t.Fatalf("Write = %v, want ErrSchema", err)
	}
	if after := logKeys(t, tb); !slices.Equal(before, after) {
		t.Fatalf("refused write changed the table: %v -> %v", before, after)
	}
}

// TestBombForeignUnknownFeatureAndAction: a table whose protocol names an
// unknown writer feature, or whose log holds an unknown action type, opens
// and replays; a write is refused (*txlog.UnsupportedFeatureError) and a
// checkpoint too (*txlog.UnsupportedFeatureError, *txlog.UnknownActionError),
// and nothing is written.
func TestBombForeignUnknownFeatureAndAction(t *testing.T) {
	ctx := context.Background()
	sch := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
	md := fmt.Sprintf(`{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":%q,"partitionColumns":[],"configuration":{}}}`, sch)
	for _, tc := range []struct {
		name     string
		v0, v1   string
		writeErr bool
	}{
		{"unknown writer feature", `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["futureFeature"]}}` + "\n" + md + "\n", "", true},
		{"unknown action", `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" + md + "\n", `{"futureAction":{"k":1}}` + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := table.Open(ctx, "mem://"+strings.ReplaceAll(t.Name(), "/", "_"))
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if err := tb.Store().Put(ctx, txlog.CommitPath(0), []byte(tc.v0)); err != nil {
				t.Fatal(err)
			}
			if tc.v1 != "" {
				if err := tb.Store().Put(ctx, txlog.CommitPath(1), []byte(tc.v1)); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			before := logKeys(t, tb)
			sch, _ := schema.ParseSchema([]byte(sch))
			_, werr := tb.Write(ctx, &schema.Batch{Schema: sch, Rows: [][]any{{int64(1)}}}, table.WriteOptions{})
			var ufe *txlog.UnsupportedFeatureError
			if tc.writeErr && (!errors.As(werr, &ufe) || ufe.Feature != "futureFeature") {
				t.Fatalf("Write = %v, want *UnsupportedFeatureError futureFeature", werr)
			}
			if tc.writeErr {
				if after := logKeys(t, tb); !slices.Equal(before, after) {
					t.Fatalf("refused write changed the table: %v -> %v", before, after)
				}
			} else if werr != nil {
				t.Fatalf("Write over an unknown action: %v", werr)
			}
			if !tc.writeErr {
				if snap, err = tb.Snapshot(ctx); err != nil {
					t.Fatal(err)
				}
				before = logKeys(t, tb)
			}
			_, cerr := tb.Log().Checkpoint(ctx, snap)
			if !errors.Is(cerr, txlog.ErrUnsupportedFeature) {
				t.Fatalf("Checkpoint = %v, want ErrUnsupportedFeature", cerr)
			}
			if after := logKeys(t, tb); !slices.Equal(before, after) {
				t.Fatalf("refused checkpoint changed the table: %v -> %v", before, after)
			}
		})
	}
}
