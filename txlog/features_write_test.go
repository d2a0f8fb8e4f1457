package txlog

import (
	"errors"
	"strings"
	"testing"
)

// Spark-shaped protocols and metadata of the writer features of issue 17:
// what a writer honours is accepted, the rest is refused by name.
func TestCheckWriteSupportedHonoured(t *testing.T) {
	v7 := func(features ...string) Protocol {
		return Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: features}
	}
	cmSchema := `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}}]}`
	genSchema := `{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"y","type":"integer","nullable":true,"metadata":{"delta.generationExpression":"x * 2"}}]}`
	idSchema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.identity.start":1,"delta.identity.step":1,"delta.identity.allowExplicitInsert":false}}]}`
	cm := Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{FeatureColumnMapping},
		WriterFeatures: []string{FeatureColumnMapping}}
	cases := []struct {
		name     string
		p        Protocol
		m        Metadata
		honoured []string
		refused  string // feature, "" accepted
		detail   string // in the message
	}{
		{"column mapping id, not honoured", cm, Metadata{SchemaString: cmSchema, Configuration: map[string]string{PropColumnMappingMode: "id"}}, nil, FeatureColumnMapping, ""},
		{"column mapping name, honoured", cm, Metadata{SchemaString: cmSchema, Configuration: map[string]string{PropColumnMappingMode: "name"}}, []string{FeatureColumnMapping}, "", ""},
		{"legacy column mapping 2/5, honoured", Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
			Metadata{SchemaString: cmSchema, Configuration: map[string]string{PropColumnMappingMode: "name"}}, []string{FeatureColumnMapping}, "", ""},
		{"row tracking, not honoured", v7(FeatureDomainMetadata, FeatureRowTracking), Metadata{SchemaString: testSchema}, nil, FeatureRowTracking, ""},
		{"row tracking, honoured", v7(FeatureDomainMetadata, FeatureRowTracking), Metadata{SchemaString: testSchema}, []string{FeatureRowTracking}, "", ""},
		{"check constraint, honoured", v7(FeatureCheckConstraints), Metadata{SchemaString: testSchema,
			Configuration: map[string]string{"delta.constraints.c": "id > 0"}}, []string{FeatureCheckConstraints}, "", ""},
		{"check constraint, not honoured", v7(FeatureCheckConstraints), Metadata{SchemaString: testSchema,
			Configuration: map[string]string{"delta.constraints.c": "id > 0"}}, nil, FeatureCheckConstraints, ""},
		{"generated column", v7(FeatureGeneratedColumns), Metadata{SchemaString: genSchema}, []string{FeatureCheckConstraints},
			FeatureGeneratedColumns, "column y GENERATED ALWAYS AS (x * 2)"},
		{"identity column", v7(FeatureIdentityColumns), Metadata{SchemaString: idSchema}, nil,
			FeatureIdentityColumns, "column id GENERATED ALWAYS AS IDENTITY"},
		{"legacy identity 1/6", Protocol{MinReaderVersion: 1, MinWriterVersion: 6}, Metadata{SchemaString: idSchema}, nil,
			FeatureIdentityColumns, "column id GENERATED ALWAYS AS IDENTITY"},
		{"a feature no writer can declare", v7(), Metadata{SchemaString: testSchema}, []string{FeatureGeneratedColumns}, FeatureGeneratedColumns, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckWriteSupported(c.p, c.m, c.honoured...)
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ufe *UnsupportedFeatureError
			if !errors.As(err, &ufe) || ufe.Feature != c.refused || !ufe.Write || !errors.Is(err, ErrUnsupportedFeature) {
				t.Fatalf("err = %v, want a write refusal of %s", err, c.refused)
			}
			if !strings.Contains(err.Error(), `requires "`+c.refused+`"`) || !strings.Contains(err.Error(), c.detail) {
				t.Errorf("message %q should name %s and %q", err, c.refused, c.detail)
			}
		})
	}
}
