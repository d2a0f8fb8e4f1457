package parquetio

import (
	"bufio"
	"bytes"
	"errors"
	"github.com/lakesink/lakesink/schema"
	"os"
	"reflect"
	"testing"
)

// FuzzParseSchema: ParseSchema never panics; a rejected schema is an error
// wrapping ErrSchema; an accepted schema round-trips through MarshalJSON and
// ParseSchema to an equal schema (types, names, nullability and field
// metadata), and the second encoding is byte-identical to the first.
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"struct","fields":[]}`,
		`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"d","type":"decimal(10,2)","nullable":false,"metadata":{"comment":"x","delta.columnMapping.id":3}}]}`,
		`{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[{"name":"x","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"valueContainsNull":true},"nullable":true,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"a.b","type":"date","nullable":true,"metadata":{"k":[1,{"z":null}]}}]}`,
		`{"type":"struct"}`, `null`, `{}`, `[]`, `{"type":"array"}`, `{"type":"struct","fields":[{"name":"x","type":"decimal(99,2)"}]}`,
	} {
		f.Add([]byte(s))
	}
	// the real-engine schemas kept for the schema tests
	if fh, err := os.Open("testdata/schemas.jsonl"); err == nil {
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
				f.Add(bytes.Clone(b))
			}
		}
		fh.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schema.ParseSchema(data)
		if err != nil {
			if !errors.Is(err, schema.ErrSchema) {
				t.Fatalf("error does not wrap ErrSchema: %v", err)
			}
			return
		}
		if s == nil {
			t.Fatalf("nil schema without an error for %q", data)
		}
		enc, err := s.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of an accepted schema: %v (input %q)", err, data)
		}
		s2, err := schema.ParseSchema(enc)
		if err != nil {
			t.Fatalf("re-parse of %s: %v (input %q)", enc, err, data)
		}
		if !schema.TypesEqual(s, s2) {
			t.Fatalf("round trip changed the schema:\n in: %s\nout: %s", s, s2)
		}
		if !metadataEqual(s, s2) {
			t.Fatalf("round trip changed field metadata: %s", enc)
		}
		enc2, err := s2.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// metadataEqual compares the field metadata of two structurally equal types.
func metadataEqual(a, b schema.DataType) bool {
	switch a := a.(type) {
	case *schema.StructType:
		b := b.(*schema.StructType)
		for i := range a.Fields {
			ma, mb := a.Fields[i].Metadata, b.Fields[i].Metadata
			if len(ma) != 0 || len(mb) != 0 {
				if !reflect.DeepEqual(ma, mb) {
					return false
				}
			}
			if !metadataEqual(a.Fields[i].Type, b.Fields[i].Type) {
				return false
			}
		}
	case *schema.ArrayType:
		return metadataEqual(a.ElementType, b.(*schema.ArrayType).ElementType)
	case *schema.MapType:
		bm := b.(*schema.MapType)
		return metadataEqual(a.KeyType, bm.KeyType) && metadataEqual(a.ValueType, bm.ValueType)
	}
	return true
}
