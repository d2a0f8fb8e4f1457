package source

import (
	"errors"
	"fmt"

	"github.com/lakesink/lakesink/schema"
)

// SchemaEvolutionMode says what a source does with an input field that is
// not in its schema (a new column). The names are Auto Loader's
// cloudFiles.schemaEvolutionMode values; the added columns follow Delta's
// mergeSchema (SchemaMergingUtils.mergeSchemas).
type SchemaEvolutionMode string

const (
	// SchemaEvolutionFailOnNewColumns (the default, also for "") fails the
	// record with a *RecordError naming file, line and field, wrapping
	// ErrBadRecord and ErrUnknownField (with OnBadRecord set, the record is
	// handed to it instead). Nothing is dropped silently: this is Delta's
	// write without mergeSchema, which refuses a DataFrame with a column the
	// table lacks ("A schema mismatch detected when writing to the Delta
	// table").
	SchemaEvolutionFailOnNewColumns SchemaEvolutionMode = "failOnNewColumns"
	// SchemaEvolutionAddNewColumns infers each batch's schema from its input
	// and merges it into the schema (see EvolveSchema); the batch carries the
	// merged schema, which stays the schema of the run.
	SchemaEvolutionAddNewColumns SchemaEvolutionMode = "addNewColumns"
	// SchemaEvolutionNone ignores fields that are not in the schema, as
	// Spark's readers do with a user-given schema: their values are dropped.
	SchemaEvolutionNone SchemaEvolutionMode = "none"
)

// ErrUnknownField: an input record holds a non-null value for a field that is
// not in the schema, and the SchemaEvolutionMode is failOnNewColumns. It is
// found with errors.Is through *RecordError.
var ErrUnknownField = errors.New("input field not in the schema")

// unknownFieldError is the cause inside a *RecordError for a new field.
type unknownFieldError struct{}

func (unknownFieldError) Error() string {
	// What to do is the caller's to say: an ingest can evolve the schema
	// (SchemaEvolutionAddNewColumns), a one-batch merge cannot.
	return "not in the schema (a new column)"
}
func (unknownFieldError) Is(target error) bool { return target == ErrUnknownField }

// ParseSchemaEvolutionMode reads a mode name; "" is failOnNewColumns.
func ParseSchemaEvolutionMode(s string) (SchemaEvolutionMode, error) {
	switch m := SchemaEvolutionMode(s); m {
	case "", SchemaEvolutionFailOnNewColumns:
		return SchemaEvolutionFailOnNewColumns, nil
	case SchemaEvolutionAddNewColumns, SchemaEvolutionNone:
		return m, nil
	}
	return "", fmt.Errorf("%w: schema evolution mode %q (want failOnNewColumns, addNewColumns or none)", ErrInvalidOptions, s)
}

// EvolveSchema merges an inferred input schema into base as Delta's
// mergeSchema does (SchemaMergingUtils.mergeSchemas): base's fields keep
// their order, names, types and nullability (a field's value is then read as
// base's type, and a value that does not convert is a bad record); fields
// only in inferred are appended, nullable; structs (also as array elements
// and map values) merge recursively. Names match as Delta matches them:
// exactly, then case-insensitively. A nil base returns inferred.
func EvolveSchema(base, inferred *schema.StructType) *schema.StructType {
	if base == nil {
		return inferred
	}
	if inferred == nil {
		return base
	}
	out := &schema.StructType{Fields: append([]schema.StructField(nil), base.Fields...)}
	for _, nf := range inferred.Fields {
		i := base.FieldIndex(nf.Name)
		if i < 0 {
			nf.Nullable = true
			out.Fields = append(out.Fields, nf)
			continue
		}
		out.Fields[i].Type = evolveType(base.Fields[i].Type, nf.Type)
	}
	return out
}

func evolveType(base, inferred schema.DataType) schema.DataType {
	switch b := base.(type) {
	case *schema.StructType:
		if n, ok := inferred.(*schema.StructType); ok {
			return EvolveSchema(b, n)
		}
	case *schema.ArrayType:
		if n, ok := inferred.(*schema.ArrayType); ok {
			return &schema.ArrayType{ElementType: evolveType(b.ElementType, n.ElementType), ContainsNull: b.ContainsNull}
		}
	case *schema.MapType:
		if n, ok := inferred.(*schema.MapType); ok {
			return &schema.MapType{KeyType: b.KeyType, ValueType: evolveType(b.ValueType, n.ValueType), ValueContainsNull: b.ValueContainsNull}
		}
	}
	return base
}

// unknownColumns returns the dotted paths of the fields of file that schema
// lacks (matched as the Parquet reader matches them: exactly, then
// case-insensitively), recursing into structs, array elements and map values.
func unknownColumns(sch, file *schema.StructType, path string) []string {
	var out []string
	for _, f := range file.Fields {
		fp := joinField(path, f.Name)
		i := sch.FieldIndex(f.Name)
		if i < 0 {
			out = append(out, fp)
			continue
		}
		out = append(out, unknownIn(sch.Fields[i].Type, f.Type, fp)...)
	}
	return out
}

func unknownIn(sch, file schema.DataType, path string) []string {
	switch s := sch.(type) {
	case *schema.StructType:
		if f, ok := file.(*schema.StructType); ok {
			return unknownColumns(s, f, path)
		}
	case *schema.ArrayType:
		if f, ok := file.(*schema.ArrayType); ok {
			return unknownIn(s.ElementType, f.ElementType, path+"[]")
		}
	case *schema.MapType:
		if f, ok := file.(*schema.MapType); ok {
			return unknownIn(s.ValueType, f.ValueType, path+"{}")
		}
	}
	return nil
}
