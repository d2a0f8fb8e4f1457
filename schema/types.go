package schema

import (
	"iter"
	"math/big"
)

// This file fixes the contracts shared by every package: the Delta/Spark schema
// model and the in-memory batch of records. Other files of the package
// implement them (JSON encoding of schemas, Parquet mapping, writing, reading).

// DataType is a Delta/Spark data type (PROTOCOL.md, "Schema Serialization
// Format"). Implementations: PrimitiveType, DecimalType, *StructType,
// *ArrayType, *MapType.
type DataType interface {
	// TypeName is the Delta name: "string", "long", "decimal(10,2)", "struct", "array", "map".
	TypeName() string
}

// PrimitiveType is one of the primitive Delta types, by its Delta name:
// string, long, integer, short, byte, float, double, boolean, binary, date,
// timestamp, timestamp_ntz (and variant, read-only).
type PrimitiveType string

// The primitive types, named as a Delta schemaString names them (PROTOCOL.md
// "Primitive Types").
const (
	TypeString       PrimitiveType = "string"
	TypeLong         PrimitiveType = "long"
	TypeInteger      PrimitiveType = "integer"
	TypeShort        PrimitiveType = "short"
	TypeByte         PrimitiveType = "byte"
	TypeFloat        PrimitiveType = "float"
	TypeDouble       PrimitiveType = "double"
	TypeBoolean      PrimitiveType = "boolean"
	TypeBinary       PrimitiveType = "binary"
	TypeDate         PrimitiveType = "date"
	TypeTimestamp    PrimitiveType = "timestamp"
	TypeTimestampNTZ PrimitiveType = "timestamp_ntz"
)

// TypeName is the type's name in a Delta schemaString (PROTOCOL.md "Schema Serialization Format").
func (p PrimitiveType) TypeName() string { return string(p) }

// DecimalType is decimal(Precision,Scale), precision 1..38.
type DecimalType struct {
	Precision int // total digits, 1..38
	Scale     int // digits after the point, 0..Precision
}

// StructField is one field of a struct. Metadata is kept verbatim (column
// mapping ids and physical names live there: delta.columnMapping.id,
// delta.columnMapping.physicalName).
type StructField struct {
	Name     string         // the column name, case-preserving
	Type     DataType       // its type
	Nullable bool           // whether values may be null
	Metadata map[string]any // the field's metadata object, verbatim
}

// StructType is a struct; a table schema is a *StructType.
type StructType struct {
	Fields []StructField // the fields, in order
}

// TypeName is the type's name in a Delta schemaString (PROTOCOL.md "Schema Serialization Format").
func (*StructType) TypeName() string { return "struct" }

// ArrayType is array<ElementType>.
type ArrayType struct {
	ElementType  DataType // the elements' type
	ContainsNull bool     // whether elements may be null
}

// TypeName is the type's name in a Delta schemaString (PROTOCOL.md "Schema Serialization Format").
func (*ArrayType) TypeName() string { return "array" }

// MapType is map<KeyType, ValueType>.
type MapType struct {
	KeyType           DataType // the keys' type (keys are never null)
	ValueType         DataType // the values' type
	ValueContainsNull bool     // whether values may be null
}

// TypeName is the type's name in a Delta schemaString (PROTOCOL.md "Schema Serialization Format").
func (*MapType) TypeName() string { return "map" }

// Batch is a batch of records that conform to Schema: the one concrete type
// that Sink.AddBatch takes (docs/design.md, "Rows"). Rows[i][j] is the value of
// Schema.Fields[j] in row i; len(Rows[i]) == len(Schema.Fields).
//
// Go value of each Delta type (nil is null everywhere):
//
//	string        string
//	long          int64
//	integer       int32
//	short         int16
//	byte          int8
//	float         float32
//	double        float64
//	boolean       bool
//	binary        []byte
//	date          Date (days since 1970-01-01)
//	timestamp     time.Time (an instant; stored as UTC micros)
//	timestamp_ntz time.Time (wall clock, read as UTC; stored as micros)
//	decimal(p,s)  Decimal
//	struct        []any, one value per field in order
//	array         []any
//	map           []MapEntry (order kept)
//
// A batch too large to hold in memory is streamed: Chunks, when not nil,
// yields its records in order, a chunk at a time, instead of Rows (nil then).
// A streamed batch is ranged over at most once; writers that need every row
// at once call Collect first. Each chunk is the consumer's to keep (a
// producer does not reuse its rows). A source sets Chunks
// only for a consumer that asked for it (e.g. the Parquet file source's
// Options.StreamChunkRows for a Delta append), so code that reads only Rows
// never sees an empty batch in place of a streamed one.
type Batch struct {
	Schema *StructType // the schema every row conforms to
	Rows   [][]any     // Rows[i][j] is the value of Schema.Fields[j] in row i
	// Chunks yields the records of a streamed batch (nil: Rows holds them),
	// or an error that ends the batch.
	Chunks iter.Seq2[[][]any, error]
	// Columns, when not nil (only beside Chunks), yields the same records
	// as Chunks, in the same order, column-wise: a consumer that writes
	// columns ranges over Columns instead of Chunks (never over both).
	// Vectors[j] holds Schema.Fields[j]. Each chunk is the consumer's.
	Columns iter.Seq2[ColumnChunk, error]
}

// Collect reads the chunks of a streamed batch into Rows and sets Chunks to
// nil; a batch that is not streamed is left
// as it is. It returns the first error the chunks yield.
func (b *Batch) Collect() error {
	if b == nil || b.Chunks == nil {
		return nil
	}
	chunks := b.Chunks
	b.Chunks, b.Columns = nil, nil
	for rows, err := range chunks {
		if err != nil {
			return err
		}
		b.Rows = append(b.Rows, rows...)
	}
	return nil
}

// Date is a calendar date as days since 1970-01-01 (Parquet DATE).
type Date int32

// MapEntry is one key/value pair of a map value.
type MapEntry struct {
	Key   any // the key (never nil)
	Value any // the value (nil: null)
}

// Decimal is a decimal value: Unscaled * 10^-Scale. Scale equals the column's
// DecimalType.Scale for values in a Batch.
type Decimal struct {
	Unscaled *big.Int // the digits as an integer
	Scale    int      // digits after the point (the column's DecimalType.Scale)
}
