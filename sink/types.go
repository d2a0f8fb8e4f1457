package sink

import "github.com/lakesink/lakesink/internal/parquetio"

// The row model, re-exported so that programs outside this module can build
// a Batch (DESIGN.md, "Rows"): a Schema of Delta types and rows of Go values.
// The Go value of each type is documented on parquetio.Batch: string, int64
// (long), int32 (integer), int16, int8, float32, float64, bool, []byte,
// Date, time.Time (timestamp, timestamp_ntz), Decimal, []any (struct, array),
// []MapEntry (map); nil is null.
type (
	// Schema is a Delta StructType (PROTOCOL.md, "Schema Serialization Format").
	Schema = parquetio.StructType
	// Field is one column of a Schema.
	Field = parquetio.StructField
	// DataType is a Delta data type.
	DataType = parquetio.DataType
	// PrimitiveType is a primitive Delta type (TypeString, TypeLong, ...).
	PrimitiveType = parquetio.PrimitiveType
	// DecimalType is decimal(Precision, Scale).
	DecimalType = parquetio.DecimalType
	// ArrayType is array<ElementType>.
	ArrayType = parquetio.ArrayType
	// MapType is map<KeyType, ValueType>.
	MapType = parquetio.MapType
	// Date is days since 1970-01-01.
	Date = parquetio.Date
	// Decimal is Unscaled * 10^-Scale.
	Decimal = parquetio.Decimal
	// MapEntry is one key/value pair of a map value.
	MapEntry = parquetio.MapEntry
	// RowError names the row and field of a record that does not fit.
	RowError = parquetio.RowError
)

// The primitive Delta types.
const (
	TypeString       = parquetio.TypeString
	TypeLong         = parquetio.TypeLong
	TypeInteger      = parquetio.TypeInteger
	TypeShort        = parquetio.TypeShort
	TypeByte         = parquetio.TypeByte
	TypeFloat        = parquetio.TypeFloat
	TypeDouble       = parquetio.TypeDouble
	TypeBoolean      = parquetio.TypeBoolean
	TypeBinary       = parquetio.TypeBinary
	TypeDate         = parquetio.TypeDate
	TypeTimestamp    = parquetio.TypeTimestamp
	TypeTimestampNTZ = parquetio.TypeTimestampNTZ
)

// ParseSchema reads a Delta schema from its JSON form (Spark's StructType JSON).
func ParseSchema(data []byte) (*Schema, error) { return parquetio.ParseSchema(data) }
