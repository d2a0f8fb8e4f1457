// Package schema is lakesink's row model: the Delta schema types, the Batch
// of records every writer takes, and the Go value of each Delta type.
//
// Schemas (PROTOCOL.md, "Schema Serialization Format"): a table schema is a
// *StructType of StructFields; a field's Type is a PrimitiveType (TypeString,
// TypeLong, ...), a DecimalType, or a nested *StructType, *ArrayType or
// *MapType. ParseSchema reads the JSON of a table's metaData.schemaString
// (Spark's StructType JSON) and (*StructType).MarshalJSON writes it back;
// MergeSchema adds new columns as Delta's mergeSchema does; ValidateForWrite
// checks that a schema can be written to Parquet data files. Errors wrap
// ErrSchema and name the column.
//
// Rows: a *Batch is a Schema and rows of Go values, Rows[i][j] being the
// value of Schema.Fields[j] in row i (nil is null):
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
//	date          Date (days since 1970-01-01): DateOf(t), ParseDate("2024-01-31")
//	timestamp     time.Time (an instant; stored as UTC microseconds)
//	timestamp_ntz time.Time (wall clock, read as UTC; stored as microseconds)
//	decimal(p,s)  Decimal{Unscaled, Scale}: ParseDecimal("12.34", 2)
//	struct        []any, one value per field in order
//	array         []any
//	map           []MapEntry (order kept)
//
// A record that does not fit its schema is reported by writers as a
// *RowError (row index and field path), which matches ErrRowMismatch.
//
// Go structs: FromStructs[T] builds a Batch from []T and SchemaOf[T] gives
// its schema. The struct tag rules: each exported field is a column named by
// its `parquet:"name,option,..."` tag (else the Go field name; a tag name of
// "-" skips the field; embedded fields are skipped). Go types map to Delta types as
//
//	int64, int → long      int32 → integer   int16 → short   int8 → byte
//	float32 → float        float64 → double  bool → boolean  string → string
//	[]byte → binary        time.Time → timestamp
//	Date → date            Decimal → decimal(p,s)
//	struct → struct        []E → array<E>    map[K]V → map<K,V>
//
// Tag options: "optional" makes a non-pointer field nullable (a *X field is
// always nullable, other fields are not), "timestamp_ntz" stores a time.Time
// as timestamp_ntz, and "decimal(p:s)" gives a Decimal field's precision and
// scale (default decimal(38:18)). Map values are emitted with keys in sorted
// order, so that the output is deterministic.
//
// Lifecycle:
//
//	type Event struct {
//		ID  int64     `parquet:"id"`
//		Day Date      `parquet:"day"`
//		At  time.Time `parquet:"at"`
//	}
//	batch, err := schema.FromStructs(events) // then sink.AddBatch or table.Write
//
// Concurrency: the types are plain values, the functions are safe for
// concurrent use, and nothing here keeps global state.
package schema
