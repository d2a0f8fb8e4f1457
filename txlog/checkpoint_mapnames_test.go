package txlog

import (
	"bytes"
	"context"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// withMapNames returns the checkpoint data rewritten with every MAP's
// repeated group and fields under the given names (the leaf columns and
// their levels unchanged), as delta-rs 0.17 ("entries", "key", "value")
// and arrow-rs ("entries", "keys", "values") name them.
func withMapNames(t *testing.T, data []byte, group, key, value string) []byte {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var rename func(n parquet.Node, inMap bool) []parquet.Field
	rename = func(n parquet.Node, inMap bool) []parquet.Field {
		var out []parquet.Field
		for _, fl := range n.Fields() {
			name := fl.Name()
			var sub []parquet.Field
			if !fl.Leaf() {
				sub = rename(fl, isMapGroup(fl))
				if inMap {
					name = group
					sub[0] = &renamedField{Field: sub[0], name: key}
					if len(sub) > 1 {
						sub[1] = &renamedField{Field: sub[1], name: value}
					}
				}
			}
			out = append(out, &renamedField{Field: fl, name: name, fields: sub})
		}
		return out
	}
	s := parquet.NewSchema(f.Schema().Name(), &renamedNode{Node: f.Schema(), fields: rename(f.Schema(), false)})
	if _, ok := s.Lookup("add", "partitionValues", group, key); !ok {
		t.Fatalf("renamed schema has no add.partitionValues.%s.%s", group, key)
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, s)
	for _, rg := range f.RowGroups() {
		// Row by row with no conversion: the columns keep their order.
		rows := rg.Rows()
		buf := make([]parquet.Row, 64)
		for {
			n, err := rows.ReadRows(buf)
			if _, werr := w.WriteRows(buf[:n]); werr != nil {
				t.Fatal(werr)
			}
			if err != nil {
				break
			}
		}
		rows.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCheckpointMapNamesByPosition: a checkpoint whose maps are not named
// key_value/key/value (delta-rs 0.17 wrote "entries"; arrow-rs names the
// fields "keys" and "values") reads with its partition values, tags and
// table properties. Before the fix every map read as null: the snapshot
// lost metaData.configuration and each add's partitionValues, and a
// checkpoint written after it would have lost them for good.
func TestCheckpointMapNamesByPosition(t *testing.T) {
	ctx := context.Background()
	for _, names := range [][3]string{{"entries", "key", "value"}, {"entries", "keys", "values"}, {"map", "str", "num"}} {
		t.Run(names[0]+"."+names[1], func(t *testing.T) {
			st := newMemStore()
			p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
			schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`
			md := Metadata{ID: "t", Format: Format{Provider: "parquet", Options: map[string]string{"o": "1"}}, SchemaString: schema,
				PartitionColumns: []string{"p"}, Configuration: map[string]string{"delta.appendOnly": "true", "delta.checkpointInterval": "7"}}
			a, b := "a", "b"
			acts := []Action{{Protocol: &p}, {MetaData: &md},
				{Add: &Add{Path: "p=a/f1.parquet", Size: 1, PartitionValues: map[string]*string{"p": &a}, DataChange: true, Tags: map[string]string{"k": "v"}}},
				{Add: &Add{Path: "p=b/f2.parquet", Size: 2, PartitionValues: map[string]*string{"p": &b}, DataChange: true}},
				{Add: &Add{Path: "p=__HIVE_DEFAULT_PARTITION__/f3.parquet", Size: 3, PartitionValues: map[string]*string{"p": nil}, DataChange: true}}}
			c, err := EncodeCommit(acts)
			if err != nil {
				t.Fatal(err)
			}
			st.put(CommitPath(0), string(c))
			// Rows of two per row group: the adds (column-wise) and the
			// other actions (row by row) each span row groups.
			l := newTestLog(t, st, Options{CheckpointRowsPerChunk: 2})
			want, err := l.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Checkpoint(ctx, want); err != nil {
				t.Fatal(err)
			}
			data, err := st.Read(ctx, CheckpointPath(0))
			if err != nil {
				t.Fatal(err)
			}
			st.put(CheckpointPath(0), string(withMapNames(t, data, names[0], names[1], names[2])))
			got, err := newTestLog(t, st, Options{}).Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got.CheckpointVersion() != 0 {
				t.Fatalf("not read from the checkpoint: %d", got.CheckpointVersion())
			}
			if cfg := got.Metadata().Configuration; cfg["delta.appendOnly"] != "true" || cfg["delta.checkpointInterval"] != "7" {
				t.Errorf("configuration %v", cfg)
			}
			if o := got.Metadata().Format.Options; o["o"] != "1" {
				t.Errorf("format options %v", o)
			}
			assertSameSnapshot(t, got, want)
		})
	}
}

// TestCheckpointProtocolFeaturesNullBelowV3: a protocol read from a Spark
// checkpoint without readerFeatures/writerFeatures columns (reader 1,
// writer 2) has no features (parquet-go gave empty lists), and the
// checkpoint lakesink writes of it leaves both lists null, not empty:
// delta-kernel-rs (deltalake) refused the table ("Reader features must not
// be present when minimum reader version != 3").
func TestCheckpointProtocolFeaturesNullBelowV3(t *testing.T) {
	ctx := context.Background()
	l, st := openDir(t, "testdata/tables/dat-with_checkpoint")
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.Protocol(); p.MinReaderVersion != 1 || p.ReaderFeatures != nil || p.WriterFeatures != nil {
		t.Fatalf("protocol %+v, want reader 1 and nil features", p)
	}
	if _, err := l.Checkpoint(ctx, snap); err != nil {
		t.Fatal(err)
	}
	data, ok := st.objects(LogDir + "/")[CheckpointPath(snap.Version())]
	if !ok {
		t.Fatalf("no checkpoint at %d", snap.Version())
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"readerFeatures", "writerFeatures"} {
		leaf, ok := f.Schema().Lookup("protocol", name, "list", "element")
		if !ok {
			t.Fatalf("no column protocol.%s", name)
		}
		for _, rg := range f.RowGroups() {
			pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
			for {
				p, err := pages.ReadPage()
				if err != nil {
					break
				}
				vals := make([]parquet.Value, p.NumValues())
				n, _ := p.Values().ReadValues(vals)
				for _, v := range vals[:n] {
					if v.DefinitionLevel() >= 2 { // protocol (1) and the list (2) present
						t.Fatalf("protocol.%s written as a list (definition level %d), want null", name, v.DefinitionLevel())
					}
				}
			}
			_ = pages.Close()
		}
	}
}
