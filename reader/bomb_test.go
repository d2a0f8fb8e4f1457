package reader_test

// Hostile-input tests (issue #9) at the reader: tables whose schemaString is
// nested deeper than any engine writes (3,000 structs, and 100,000 which is
// past encoding/json's own limit), a file-sink directory written by a newer
// Spark ("v2"), and a Delta log with a hole. Each is a typed error naming the
// table and version or file; none may panic or exhaust memory.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

func memStore(t *testing.T) storage.Store {
	t.Helper()
	st, err := storage.Open(context.Background(), "mem://"+strings.ReplaceAll(t.Name(), "/", "_"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func deepSchemaString(depth int) string {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[{"name":"c","nullable":true,"metadata":{},"type":`)
	for range depth {
		b.WriteString(`{"type":"struct","fields":[{"name":"s","nullable":true,"metadata":{},"type":`)
	}
	b.WriteString(`"long"`)
	for range depth {
		b.WriteString(`}]}`)
	}
	b.WriteString(`}]}`)
	return b.String()
}

func TestBombDeepSchemaString(t *testing.T) {
	ctx := context.Background()
	for _, depth := range []int{3000, 100_000} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			st := memStore(t)
			proto := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
			md := txlog.Metadata{ID: "deep", Format: txlog.Format{Provider: "parquet", Options: map[string]string{}},
				SchemaString: deepSchemaString(depth), PartitionColumns: []string{}, Configuration: map[string]string{}}
			data, err := txlog.EncodeCommit([]txlog.Action{{Protocol: &proto}, {MetaData: &md}})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, txlog.CommitPath(0), data); err != nil {
				t.Fatal(err)
			}
			_, err = reader.Open(ctx, st.URL(), reader.WithStore(st))
			if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "version 0: schema") {
				t.Fatalf("Open = %v, want ErrSchema naming version 0", err)
			}
		})
	}
}

func TestBombNewerFileSinkLog(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	entry := `{"path":"part-00000.parquet","size":1,"isDir":false,"modificationTime":1,"blockReplication":1,"blockSize":1,"action":"add"}`
	if err := st.Put(ctx, filesink.MetadataDir+"/0", []byte("v2\n"+entry)); err != nil {
		t.Fatal(err)
	}
	_, err := reader.Open(ctx, st.URL(), reader.WithStore(st))
	if !errors.Is(err, filesink.ErrUnsupportedLogVersion) || !strings.Contains(err.Error(), "_spark_metadata/0 is v2") {
		t.Fatalf("Open = %v, want ErrUnsupportedLogVersion naming _spark_metadata/0", err)
	}
}

func TestBombDeltaLogHole(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	proto := txlog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	md := txlog.Metadata{ID: "hole", Format: txlog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{}, Configuration: map[string]string{}}
	data, err := txlog.EncodeCommit([]txlog.Action{{Protocol: &proto}, {MetaData: &md}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, txlog.CommitPath(0), data); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, txlog.CommitPath(5), []byte(`{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`+"\n")); err != nil {
		t.Fatal(err)
	}
	_, err = reader.Open(ctx, st.URL(), reader.WithStore(st))
	var ce *txlog.CorruptLogError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "versions not contiguous: missing 1-4") {
		t.Fatalf("Open = %v, want *CorruptLogError versions not contiguous: missing 1-4", err)
	}
	// Time travel to before the hole still works.
	snap, err := reader.Open(ctx, st.URL(), reader.WithStore(st), reader.AtVersion(0))
	if err != nil {
		t.Fatalf("Open at version 0: %v", err)
	}
	snap.Close()
}
