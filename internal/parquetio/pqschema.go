package parquetio

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// SchemaOptions selects how Delta columns are named in Parquet.
type SchemaOptions struct {
	// PhysicalNames names Parquet columns by their column-mapping physical
	// name (field metadata delta.columnMapping.physicalName) and sets the
	// Parquet field_id from delta.columnMapping.id, as Delta does for tables
	// with column mapping (PROTOCOL.md, "Column Mapping"). Default false:
	// logical names, no field ids.
	PhysicalNames bool
}

// sparkRootName is the name Spark gives the Parquet root message.
const sparkRootName = "spark_schema"

// ParquetSchema maps a Delta schema to the Parquet schema Spark writes
// (Spark's ParquetSchemaConverter with writeLegacyParquetFormat=false):
// string→BYTE_ARRAY (STRING), long→INT64, integer→INT32, short→INT32
// (INT(16)), byte→INT32 (INT(8)), float→FLOAT, double→DOUBLE,
// boolean→BOOLEAN, binary→BYTE_ARRAY, date→INT32 (DATE),
// timestamp→INT64 (TIMESTAMP(MICROS,true)), timestamp_ntz→INT64
// (TIMESTAMP(MICROS,false)), decimal(p,s)→INT32 (p<=9), INT64 (p<=18) or
// FIXED_LEN_BYTE_ARRAY of the minimal width, annotated DECIMAL(p,s);
// struct→group, array→3-level LIST (list/element), map→MAP
// (key_value/key/value). Nullable fields are optional, others required. Field
// order is kept. Errors wrap ErrSchema and name the column.
func ParquetSchema(s *schema.StructType, opts SchemaOptions) (*parquet.Schema, error) {
	if err := schema.ValidateForWrite(s); err != nil {
		return nil, err
	}
	root, err := structNode(s, opts, "")
	if err != nil {
		return nil, err
	}
	return parquet.NewSchema(sparkRootName, root), nil
}

func structNode(s *schema.StructType, opts SchemaOptions, path string) (parquet.Node, error) {
	g := &groupNode{fields: make([]parquet.Field, 0, len(s.Fields))}
	for _, f := range s.Fields {
		fp := joinPath(path, f.Name)
		n, err := typeNode(f.Type, opts, fp)
		if err != nil {
			return nil, err
		}
		if f.Nullable {
			n = parquet.Optional(n)
		} else {
			n = parquet.Required(n)
		}
		name := f.Name
		if opts.PhysicalNames {
			name = f.PhysicalName()
			if id, ok := f.ColumnMappingID(); ok {
				n = parquet.FieldID(n, int(id))
			}
		}
		g.fields = append(g.fields, &namedField{Node: n, name: name})
	}
	return g, nil
}

func typeNode(t schema.DataType, opts SchemaOptions, path string) (parquet.Node, error) {
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.TypeString:
			return parquet.String(), nil
		case schema.TypeLong:
			return parquet.Leaf(parquet.Int64Type), nil
		case schema.TypeInteger:
			return parquet.Leaf(parquet.Int32Type), nil
		case schema.TypeShort:
			return parquet.Int(16), nil
		case schema.TypeByte:
			return parquet.Int(8), nil
		case schema.TypeFloat:
			return parquet.Leaf(parquet.FloatType), nil
		case schema.TypeDouble:
			return parquet.Leaf(parquet.DoubleType), nil
		case schema.TypeBoolean:
			return parquet.Leaf(parquet.BooleanType), nil
		case schema.TypeBinary:
			return parquet.Leaf(parquet.ByteArrayType), nil
		case schema.TypeDate:
			return parquet.Date(), nil
		case schema.TypeTimestamp:
			return parquet.TimestampAdjusted(parquet.Microsecond, true), nil
		case schema.TypeTimestampNTZ:
			return parquet.TimestampAdjusted(parquet.Microsecond, false), nil
		}
		return nil, fmt.Errorf("%w: column %s: type %s cannot be written to Parquet", schema.ErrSchema, path, string(t))
	case schema.DecimalType:
		if err := schema.ValidateDecimal(t); err != nil {
			return nil, fmt.Errorf("column %s: %w", path, err)
		}
		switch {
		case t.Precision <= 9:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int32Type), nil
		case t.Precision <= 18:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int64Type), nil
		default:
			return parquet.Decimal(t.Scale, t.Precision, parquet.FixedLenByteArrayType(decimalBytes(t.Precision))), nil
		}
	case *schema.StructType:
		return structNode(t, opts, path)
	case *schema.ArrayType:
		en, err := typeNode(t.ElementType, opts, joinPath(path, "element"))
		if err != nil {
			return nil, err
		}
		if t.ContainsNull {
			en = parquet.Optional(en)
		} else {
			en = parquet.Required(en)
		}
		return parquet.List(en), nil
	case *schema.MapType:
		kn, err := typeNode(t.KeyType, opts, joinPath(path, "key"))
		if err != nil {
			return nil, err
		}
		vn, err := typeNode(t.ValueType, opts, joinPath(path, "value"))
		if err != nil {
			return nil, err
		}
		if t.ValueContainsNull {
			vn = parquet.Optional(vn)
		} else {
			vn = parquet.Required(vn)
		}
		return parquet.Map(kn, vn), nil
	}
	return nil, fmt.Errorf("%w: column %s: unknown type %T", schema.ErrSchema, path, t)
}

// decimalBytes is the minimal FIXED_LEN_BYTE_ARRAY width holding any unscaled
// value of the precision in two's complement (Spark's
// Decimal.minBytesForPrecision).
func decimalBytes(precision int) int {
	n := 1
	for {
		// 2^(8n-1) > 10^precision - 1  <=>  8n-1 >= precision*log2(10)
		if float64(8*n-1) >= float64(precision)*3.321928094887362 {
			return n
		}
		n++
	}
}

// groupNode is a Parquet group whose fields keep the Delta schema order
// (parquet.Group sorts fields by name; Spark keeps declaration order).
type groupNode struct {
	fields []parquet.Field
}

var groupGoType = reflect.TypeOf(map[string]any(nil))

func (g *groupNode) ID() int                         { return 0 }
func (g *groupNode) Type() parquet.Type              { return parquet.Group{}.Type() }
func (g *groupNode) Optional() bool                  { return false }
func (g *groupNode) Repeated() bool                  { return false }
func (g *groupNode) Required() bool                  { return true }
func (g *groupNode) Leaf() bool                      { return false }
func (g *groupNode) Fields() []parquet.Field         { return g.fields }
func (g *groupNode) GoType() reflect.Type            { return groupGoType }
func (g *groupNode) Encoding() (e encoding.Encoding) { return nil }
func (g *groupNode) Compression() (c compress.Codec) { return nil }
func (g *groupNode) String() string {
	var b strings.Builder
	b.WriteString("group {")
	for i, f := range g.fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Name())
	}
	b.WriteString("}")
	return b.String()
}

type namedField struct {
	parquet.Node
	name string
}

func (f *namedField) Name() string                      { return f.name }
func (f *namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
