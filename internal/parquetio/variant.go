package parquetio

import (
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go/variant"

	"github.com/lakesink/lakesink/schema"
)

// Variant columns (PROTOCOL.md "Variant Data Type", "Variant data in
// Parquet"): a group of two binary fields, metadata and value, in the
// Parquet variant binary encoding (parquet-format VariantEncoding.md). A
// shredded variant (PROTOCOL.md "Variant Shredding") has a typed_value
// field besides; it is refused as unsupported rather than read without the
// shredded part.

var variantParts = &schema.StructType{Fields: []schema.StructField{
	{Name: "metadata", Type: schema.TypeBinary, Nullable: true},
	{Name: "value", Type: schema.TypeBinary, Nullable: true},
}}

// bindVariant binds a variant group: a struct of its metadata and value
// columns whose assembled value is decoded into a schema.Variant.
func (f *File) bindVariant(n *fnode, p *readPlan, opts ReadOptions) (*rnode, error) {
	var meta, val bool
	for _, c := range n.children {
		switch c.name {
		case "metadata":
			meta = true
		case "value":
			val = true
		case "typed_value":
			return nil, fmt.Errorf("%w: shredded variant column %s (typed_value, PROTOCOL.md \"Variant Shredding\")", ErrUnsupported, n.name)
		}
	}
	if !meta || !val {
		return nil, fmt.Errorf("%w: variant column %s has no metadata and value fields", ErrCorruptFile, n.name)
	}
	opts.ByFieldID, opts.ByPhysicalName = false, false
	r, err := f.bind(n, variantParts, p, opts, false)
	if err != nil {
		return nil, err
	}
	r.variant = true
	return r, nil
}

// decodeVariant decodes the assembled [metadata, value] of a variant.
func decodeVariant(parts []any) (any, error) {
	meta, _ := parts[0].([]byte)
	val, _ := parts[1].([]byte)
	if meta == nil || val == nil {
		return nil, fmt.Errorf("%w: variant without metadata or value", ErrCorruptFile)
	}
	m, err := variant.DecodeMetadata(meta)
	if err != nil {
		return nil, fmt.Errorf("%w: variant metadata: %w", ErrCorruptFile, err)
	}
	v, err := variant.Decode(m, val)
	if err != nil {
		return nil, fmt.Errorf("%w: variant value: %w", ErrCorruptFile, err)
	}
	if v.Basic() == variant.BasicPrimitive && v.Type() == variant.PrimitiveTimestampNTZ {
		return schema.Variant{Value: time.UnixMicro(v.Int()).UTC(), NTZ: true}, nil
	}
	return schema.Variant{Value: variantGo(v)}, nil
}

// variantGo is a decoded variant value as the Go values of schema.Variant.
func variantGo(v variant.Value) any {
	switch v.Basic() {
	case variant.BasicObject:
		fields := v.ObjectValue().Fields
		m := make(map[string]any, len(fields))
		for _, f := range fields {
			m[f.Name] = variantGo(f.Value)
		}
		return m
	case variant.BasicArray:
		elems := v.ArrayValue().Elements
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = variantGo(e)
		}
		return out
	case variant.BasicShortString:
		return v.Str()
	}
	switch v.Type() {
	case variant.PrimitiveNull:
		return nil
	case variant.PrimitiveTrue:
		return true
	case variant.PrimitiveFalse:
		return false
	case variant.PrimitiveInt8, variant.PrimitiveInt16, variant.PrimitiveInt32, variant.PrimitiveInt64:
		return v.Int()
	case variant.PrimitiveFloat:
		return float32(v.FloatValue())
	case variant.PrimitiveDouble:
		return v.FloatValue()
	case variant.PrimitiveDecimal4, variant.PrimitiveDecimal8:
		return schema.Decimal{Unscaled: big.NewInt(v.Int()), Scale: int(v.Scale())}
	case variant.PrimitiveDecimal16:
		le := v.Decimal16Value()
		be := slices.Clone(le[:])
		slices.Reverse(be) // little-endian in the encoding
		return schema.Decimal{Unscaled: fromTwosComplement(be), Scale: int(v.Scale())}
	case variant.PrimitiveString:
		return v.Str()
	case variant.PrimitiveBinary:
		return v.Bytes()
	case variant.PrimitiveDate:
		return schema.Date(v.Int())
	case variant.PrimitiveTimestamp:
		return time.UnixMicro(v.Int()).UTC()
	case variant.PrimitiveTimestampNTZ:
		return schema.VariantNTZ(time.UnixMicro(v.Int()).UTC())
	case variant.PrimitiveTimestampNanos:
		return time.Unix(0, v.Int()).UTC()
	case variant.PrimitiveTimestampNTZNanos:
		return schema.VariantNTZ(time.Unix(0, v.Int()).UTC())
	case variant.PrimitiveTime:
		return v.Int() // microseconds since midnight
	case variant.PrimitiveUUID:
		return v.UUIDValue().String()
	}
	return nil
}
