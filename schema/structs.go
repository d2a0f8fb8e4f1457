package schema

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"
)

// SchemaOf derives a Delta schema from the Go struct type T (see
// FromStructs for the mapping).
func SchemaOf[T any]() (*StructType, error) {
	c, err := structCodecFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return c.schema, nil
}

// FromStructs turns typed Go records into a Batch, the one type every writer
// takes (docs/design.md, "Rows"). The schema comes from T's exported fields,
// named by their `parquet:"name,..."` tag (else the Go field name; "-"
// skips a field):
//
//	int64, int → long      int32 → integer   int16 → short   int8 → byte
//	float32 → float        float64 → double  bool → boolean  string → string
//	[]byte → binary        time.Time → timestamp (tag option "timestamp_ntz" for timestamp_ntz)
//	Date → date            Decimal → decimal(p,s) from tag option "decimal(p:s)" (default decimal(38:18))
//	struct → struct        []E → array<E>    map[K]V → map<K,V>
//	*X → nullable X; other fields are non-nullable unless the tag says "optional".
//
// Map values are emitted with keys in sorted order of their formatted value
// so that output is deterministic.
func FromStructs[T any](rows []T) (*Batch, error) {
	c, err := structCodecFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	out := &Batch{Schema: c.schema, Rows: make([][]any, len(rows))}
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		rec, err := c.record(v)
		if err != nil {
			return nil, &RowError{Row: i, Err: err}
		}
		out.Rows[i] = rec
	}
	return out, nil
}

type structCodec struct {
	schema *StructType
	fields []fieldCodec
}

type fieldCodec struct {
	index []int
	conv  func(reflect.Value) (any, error)
}

func (c *structCodec) record(v reflect.Value) ([]any, error) {
	rec := make([]any, len(c.fields))
	for j, f := range c.fields {
		x, err := f.conv(v.FieldByIndex(f.index))
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", c.schema.Fields[j].Name, err)
		}
		rec[j] = x
	}
	return rec, nil
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	dateType    = reflect.TypeFor[Date]()
	decimalType = reflect.TypeFor[Decimal]()
	bytesType   = reflect.TypeFor[[]byte]()
)

func structCodecFor(t reflect.Type) (*structCodec, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: FromStructs needs a struct type, got %s", ErrSchema, t)
	}
	return buildStructCodec(t, 0)
}

func buildStructCodec(t reflect.Type, depth int) (*structCodec, error) {
	if depth > 32 {
		return nil, fmt.Errorf("%w: %s nests too deeply (recursive type?)", ErrSchema, t)
	}
	c := &structCodec{schema: &StructType{}}
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		name, opts := sf.Name, ""
		if tag, ok := sf.Tag.Lookup("parquet"); ok {
			if tag == "-" {
				continue
			}
			n, o, _ := strings.Cut(tag, ",")
			if n != "" {
				name = n
			}
			opts = o
		}
		typ, nullable, conv, err := goTypeCodec(sf.Type, opts, depth)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t.Name(), sf.Name, err)
		}
		if hasOpt(opts, "optional") {
			nullable = true
		}
		c.schema.Fields = append(c.schema.Fields, StructField{Name: name, Type: typ, Nullable: nullable})
		c.fields = append(c.fields, fieldCodec{index: sf.Index, conv: conv})
	}
	return c, nil
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if strings.TrimSpace(o) == want {
			return true
		}
	}
	return false
}

func decimalOpt(opts string) (DecimalType, error) {
	for _, o := range strings.Split(opts, ",") {
		o = strings.TrimSpace(o)
		if strings.HasPrefix(o, "decimal(") && strings.HasSuffix(o, ")") {
			var p, s int
			if _, err := fmt.Sscanf(o, "decimal(%d:%d)", &p, &s); err != nil {
				return DecimalType{}, fmt.Errorf("%w: bad tag option %q (want decimal(p:s))", ErrSchema, o)
			}
			d := DecimalType{Precision: p, Scale: s}
			return d, ValidateDecimal(d)
		}
	}
	return DecimalType{Precision: 38, Scale: 18}, nil
}

// goTypeCodec maps a Go type to a Delta type, its nullability and a value
// converter.
func goTypeCodec(t reflect.Type, opts string, depth int) (DataType, bool, func(reflect.Value) (any, error), error) {
	if t.Kind() == reflect.Pointer {
		et, _, conv, err := goTypeCodec(t.Elem(), opts, depth)
		if err != nil {
			return nil, false, nil, err
		}
		return et, true, func(v reflect.Value) (any, error) {
			if v.IsNil() {
				return nil, nil
			}
			return conv(v.Elem())
		}, nil
	}
	switch t {
	case timeType:
		typ := TypeTimestamp
		if hasOpt(opts, "timestamp_ntz") {
			typ = TypeTimestampNTZ
		}
		return typ, false, func(v reflect.Value) (any, error) { return v.Interface().(time.Time), nil }, nil
	case dateType:
		return TypeDate, false, func(v reflect.Value) (any, error) { return Date(v.Int()), nil }, nil
	case decimalType:
		d, err := decimalOpt(opts)
		if err != nil {
			return nil, false, nil, err
		}
		return d, false, func(v reflect.Value) (any, error) {
			x := v.Interface().(Decimal)
			if x.Unscaled == nil {
				return Decimal{Unscaled: new(big.Int), Scale: d.Scale}, nil
			}
			return x, nil
		}, nil
	case bytesType:
		return TypeBinary, true, func(v reflect.Value) (any, error) {
			if v.IsNil() {
				return nil, nil
			}
			return v.Bytes(), nil
		}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return TypeString, false, func(v reflect.Value) (any, error) { return v.String(), nil }, nil
	case reflect.Int64, reflect.Int:
		return TypeLong, false, func(v reflect.Value) (any, error) { return v.Int(), nil }, nil
	case reflect.Int32:
		return TypeInteger, false, func(v reflect.Value) (any, error) { return int32(v.Int()), nil }, nil
	case reflect.Int16:
		return TypeShort, false, func(v reflect.Value) (any, error) { return int16(v.Int()), nil }, nil
	case reflect.Int8:
		return TypeByte, false, func(v reflect.Value) (any, error) { return int8(v.Int()), nil }, nil
	case reflect.Float32:
		return TypeFloat, false, func(v reflect.Value) (any, error) { return float32(v.Float()), nil }, nil
	case reflect.Float64:
		return TypeDouble, false, func(v reflect.Value) (any, error) { return v.Float(), nil }, nil
	case reflect.Bool:
		return TypeBoolean, false, func(v reflect.Value) (any, error) { return v.Bool(), nil }, nil
	case reflect.Struct:
		sc, err := buildStructCodec(t, depth+1)
		if err != nil {
			return nil, false, nil, err
		}
		return sc.schema, false, func(v reflect.Value) (any, error) {
			rec, err := sc.record(v)
			if err != nil {
				return nil, err
			}
			return rec, nil
		}, nil
	case reflect.Slice, reflect.Array:
		et, enull, econv, err := goTypeCodec(t.Elem(), "", depth+1)
		if err != nil {
			return nil, false, nil, err
		}
		nullable := t.Kind() == reflect.Slice
		return &ArrayType{ElementType: et, ContainsNull: enull}, nullable, func(v reflect.Value) (any, error) {
			if v.Kind() == reflect.Slice && v.IsNil() {
				return nil, nil
			}
			out := make([]any, v.Len())
			for i := range out {
				x, err := econv(v.Index(i))
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}, nil
	case reflect.Map:
		kt, _, kconv, err := goTypeCodec(t.Key(), "", depth+1)
		if err != nil {
			return nil, false, nil, err
		}
		vt, vnull, vconv, err := goTypeCodec(t.Elem(), "", depth+1)
		if err != nil {
			return nil, false, nil, err
		}
		return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vnull}, true, func(v reflect.Value) (any, error) {
			if v.IsNil() {
				return nil, nil
			}
			keys := v.MapKeys()
			sortValues(keys)
			out := make([]MapEntry, 0, len(keys))
			for _, k := range keys {
				kx, err := kconv(k)
				if err != nil {
					return nil, err
				}
				vx, err := vconv(v.MapIndex(k))
				if err != nil {
					return nil, err
				}
				out = append(out, MapEntry{Key: kx, Value: vx})
			}
			return out, nil
		}, nil
	}
	return nil, false, nil, fmt.Errorf("%w: Go type %s has no Delta type", ErrSchema, t)
}

func sortValues(keys []reflect.Value) {
	strs := make(map[int]string, len(keys))
	for i, k := range keys {
		strs[i] = fmt.Sprint(k.Interface())
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return strs[idx[a]] < strs[idx[b]] })
	cp := append([]reflect.Value(nil), keys...)
	for i, j := range idx {
		keys[i] = cp[j]
	}
}
