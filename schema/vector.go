package schema

import (
	"fmt"
	"slices"
	"time"
)

// Columnar records: a Vector holds one column's values in the typed slice
// of its kind (no boxed value per row for longs, doubles, strings,
// booleans); a ColumnChunk is consecutive records as one Vector per field.
// Parquet readers decode into them (parquetio.File.RowGroupColumns) and a
// streamed Batch can carry them (Batch.Columns).

// VectorKind is how a Vector holds the values of a Delta type (KindOf).
type VectorKind uint8

const (
	// VecAny holds values in Vector.Any, in the Batch representation.
	VecAny VectorKind = iota
	// VecInt64 holds long, integer, short and byte values in Vector.Int64.
	VecInt64
	// VecFloat64 holds double and float values in Vector.Float64 (float
	// values widened, exactly).
	VecFloat64
	// VecString holds string values in Vector.String.
	VecString
	// VecBool holds boolean values in Vector.Bool.
	VecBool
	// VecMicros holds timestamp and timestamp_ntz values in Vector.Int64
	// as microseconds since 1970-01-01 00:00:00 UTC (timestamp_ntz: its
	// wall clock read as UTC), the int64 Delta data files store. KindOf
	// never gives it: a reader hands it out only when its caller asked for
	// it (the streamed Parquet source of an ingest does), so that a column
	// of a Parquet file stored in micros reaches a writer with no time.Time
	// per value. Value gives the time.Time (UTC) of the Batch
	// representation; Set stores a time.Time's instant.
	VecMicros
)

// KindOf is the VectorKind of Delta type t.
func KindOf(t DataType) VectorKind {
	switch t {
	case TypeLong, TypeInteger, TypeShort, TypeByte:
		return VecInt64
	case TypeDouble, TypeFloat:
		return VecFloat64
	case TypeString:
		return VecString
	case TypeBoolean:
		return VecBool
	}
	return VecAny
}

// Vector is Len consecutive values of one column: the slice of its Kind
// holds them (Len elements), Null[i] marks a null (its slot is the zero
// value; Null is nil when no value is null).
type Vector struct {
	Kind VectorKind // which slice holds the values
	Len  int        // the number of values
	Null []bool     // Null[i]: value i is null; nil: none is
	// Int64 holds the values of a VecInt64 vector.
	Int64 []int64
	// Float64 holds the values of a VecFloat64 vector.
	Float64 []float64
	// String holds the values of a VecString vector.
	String []string
	// Bool holds the values of a VecBool vector.
	Bool []bool
	// Any holds the values of a VecAny vector (Batch representation).
	Any []any
}

// NewVector is a Vector of n zero (not null) values of kind.
func NewVector(kind VectorKind, n int) Vector {
	v := Vector{Kind: kind, Len: n}
	switch kind {
	case VecInt64, VecMicros:
		v.Int64 = make([]int64, n)
	case VecFloat64:
		v.Float64 = make([]float64, n)
	case VecString:
		v.String = make([]string, n)
	case VecBool:
		v.Bool = make([]bool, n)
	default:
		v.Any = make([]any, n)
	}
	return v
}

// SetNull marks value i null.
func (v *Vector) SetNull(i int) {
	if v.Null == nil {
		v.Null = make([]bool, v.Len)
	}
	v.Null[i] = true
}

// Set stores x (the Batch representation of a value of the vector's type;
// nil: null) as value i. A value of a Go type the vector's kind does not
// hold is an error wrapping ErrRowMismatch.
func (v *Vector) Set(i int, x any) error {
	if x == nil {
		v.SetNull(i)
		return nil
	}
	ok := true
	switch v.Kind {
	case VecInt64:
		switch x := x.(type) {
		case int64:
			v.Int64[i] = x
		case int32:
			v.Int64[i] = int64(x)
		case int16:
			v.Int64[i] = int64(x)
		case int8:
			v.Int64[i] = int64(x)
		default:
			ok = false
		}
	case VecFloat64:
		switch x := x.(type) {
		case float64:
			v.Float64[i] = x
		case float32:
			v.Float64[i] = float64(x)
		default:
			ok = false
		}
	case VecString:
		v.String[i], ok = x.(string)
	case VecBool:
		v.Bool[i], ok = x.(bool)
	case VecMicros:
		var t time.Time
		if t, ok = x.(time.Time); ok {
			v.Int64[i] = t.UnixMicro()
		}
	default:
		v.Any[i] = x
	}
	if !ok {
		return fmt.Errorf("%w: a value of Go type %T in a column of kind %d", ErrRowMismatch, x, v.Kind)
	}
	return nil
}

// Value is value i in the Batch representation of Delta type t (the
// vector's kind is KindOf(t)): nil for null, int32 for integer, float32
// for float, ...
func (v *Vector) Value(i int, t DataType) any {
	if v.Null != nil && v.Null[i] {
		return nil
	}
	switch v.Kind {
	case VecInt64:
		x := v.Int64[i]
		switch t {
		case TypeInteger:
			return int32(x)
		case TypeShort:
			return int16(x)
		case TypeByte:
			return int8(x)
		}
		return x
	case VecFloat64:
		if t == TypeFloat {
			return float32(v.Float64[i])
		}
		return v.Float64[i]
	case VecString:
		return v.String[i]
	case VecBool:
		return v.Bool[i]
	case VecMicros:
		return time.UnixMicro(v.Int64[i]).UTC()
	}
	return v.Any[i]
}

// Take keeps the values at rows (ascending indexes into the vector), in
// place.
func (v *Vector) Take(rows []int32) {
	switch v.Kind {
	case VecInt64, VecMicros:
		v.Int64 = take(v.Int64, rows)
	case VecFloat64:
		v.Float64 = take(v.Float64, rows)
	case VecString:
		v.String = take(v.String, rows)
	case VecBool:
		v.Bool = take(v.Bool, rows)
	default:
		v.Any = take(v.Any, rows)
	}
	if v.Null != nil {
		v.Null = take(v.Null, rows)
		if !slices.Contains(v.Null, true) {
			v.Null = nil
		}
	}
	v.Len = len(rows)
}

func take[T any](s []T, rows []int32) []T {
	for k, r := range rows {
		s[k] = s[r]
	}
	clear(s[len(rows):]) // keep no dropped value alive
	return s[:len(rows)]
}

// ColumnChunk is Rows consecutive records as columns: Vectors[j] holds
// field j of the schema they were read against (Rows values each).
type ColumnChunk struct {
	Rows    int
	Vectors []Vector
}
