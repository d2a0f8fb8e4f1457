package reader

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/big"
	"reflect"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// Rows reads the snapshot's rows into values of the struct type T: the
// same path as (*Snapshot).Rows (one code path), with each dynamic record
// mapped into T by field name. A field's column is the first element of its
// `parquet:"name,..."` tag, or else the field name, matched
// case-insensitively; `parquet:"-"` and unexported fields are skipped; a
// field without a column keeps its zero value. When opts.Columns is empty,
// only the columns T uses are read. Nullable columns go into pointer fields
// (nil for null) or into plain fields (zero value for null).
//
// Supported mappings: string/[]byte, bool, all integer kinds (range
// checked), floats, time.Time (timestamps, and dates at midnight UTC),
// schema.Date, schema.Decimal (or float64, or string), nested structs
// from struct columns, slices from arrays, maps from maps, and `any` for the
// raw value. A value that does not fit ends the iteration with an error
// wrapping ErrTypeMapping.
func Rows[T any](ctx context.Context, snap *Snapshot, opts ReadOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		rt := reflect.TypeOf(zero)
		if rt == nil || rt.Kind() != reflect.Struct {
			yield(zero, fmt.Errorf("%w: Rows[%v]: T must be a struct type", ErrTypeMapping, rt))
			return
		}
		if len(opts.Columns) == 0 {
			for _, f := range structColumns(rt, snap.schema) {
				opts.Columns = append(opts.Columns, snap.schema.Fields[f.col].Name)
			}
			if len(opts.Columns) == 0 {
				yield(zero, fmt.Errorf("%w: Rows[%v]: no field of %v matches a column of the table", ErrTypeMapping, rt, rt))
				return
			}
		}
		var dec *structDecoder // built once per call, from the first record's schema
		for rec, err := range snap.Rows(ctx, opts) {
			if err != nil {
				yield(zero, err)
				return
			}
			if dec == nil {
				d, err := newStructDecoder(rt, rec.Schema)
				if err != nil {
					yield(zero, err)
					return
				}
				dec = d
			}
			var v T
			if err := dec.decode(rec.Values, reflect.ValueOf(&v).Elem()); err != nil {
				yield(zero, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// fieldCol pairs a struct field with a schema column.
type fieldCol struct {
	field []int // reflect field index
	col   int   // schema field index
	name  string
}

// structColumns matches T's fields to the columns of st.
func structColumns(rt reflect.Type, st *schema.StructType) []fieldCol {
	var out []fieldCol
	for _, sf := range reflect.VisibleFields(rt) {
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("parquet"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		idx := -1
		for i, f := range st.Fields {
			if f.Name == name {
				idx = i
				break
			}
		}
		if idx < 0 {
			for i, f := range st.Fields {
				if strings.EqualFold(f.Name, name) {
					idx = i
					break
				}
			}
		}
		if idx >= 0 {
			out = append(out, fieldCol{field: sf.Index, col: idx, name: st.Fields[idx].Name})
		}
	}
	return out
}

type decodeFunc func(v any, dst reflect.Value) error

type structDecoder struct {
	fields []fieldCol
	decs   []decodeFunc
}

func newStructDecoder(rt reflect.Type, st *schema.StructType) (*structDecoder, error) {
	d := &structDecoder{fields: structColumns(rt, st)}
	for _, fc := range d.fields {
		ft := rt.FieldByIndex(fc.field).Type
		fn, err := decoderFor(ft, st.Fields[fc.col].Type, fc.name)
		if err != nil {
			return nil, err
		}
		d.decs = append(d.decs, fn)
	}
	return d, nil
}

func (d *structDecoder) decode(vals []any, dst reflect.Value) error {
	for i, fc := range d.fields {
		var v any
		if fc.col < len(vals) {
			v = vals[fc.col]
		}
		if err := d.decs[i](v, dst.FieldByIndex(fc.field)); err != nil {
			return err
		}
	}
	return nil
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	dateType    = reflect.TypeFor[schema.Date]()
	decimalType = reflect.TypeFor[schema.Decimal]()
	bigIntType  = reflect.TypeFor[*big.Int]()
	bytesType   = reflect.TypeFor[[]byte]()
)

// decoderFor builds the conversion of values of column type src into Go
// type dst. col names the column in errors.
func decoderFor(dst reflect.Type, src schema.DataType, col string) (decodeFunc, error) {
	mismatch := func(v any) error {
		return fmt.Errorf("%w: column %s: %T value %v does not fit %v", ErrTypeMapping, col, v, v, dst)
	}
	if dst.Kind() == reflect.Pointer && dst != bigIntType {
		elem, err := decoderFor(dst.Elem(), src, col)
		if err != nil {
			return nil, err
		}
		return func(v any, out reflect.Value) error {
			if v == nil {
				out.SetZero()
				return nil
			}
			p := reflect.New(dst.Elem())
			if err := elem(v, p.Elem()); err != nil {
				return err
			}
			out.Set(p)
			return nil
		}, nil
	}
	if dst.Kind() == reflect.Interface {
		return func(v any, out reflect.Value) error {
			if v == nil {
				out.SetZero()
				return nil
			}
			rv := reflect.ValueOf(v)
			if !rv.Type().AssignableTo(dst) {
				return mismatch(v)
			}
			out.Set(rv)
			return nil
		}, nil
	}
	nullable := func(fn decodeFunc) decodeFunc {
		return func(v any, out reflect.Value) error {
			if v == nil {
				out.SetZero()
				return nil
			}
			return fn(v, out)
		}
	}
	switch st := src.(type) {
	case *schema.StructType:
		if dst.Kind() != reflect.Struct {
			return nil, fmt.Errorf("%w: column %s is a struct, field is %v", ErrTypeMapping, col, dst)
		}
		sd, err := newStructDecoder(dst, st)
		if err != nil {
			return nil, err
		}
		return nullable(func(v any, out reflect.Value) error {
			vals, ok := v.([]any)
			if !ok {
				return mismatch(v)
			}
			out.SetZero()
			return sd.decode(vals, out)
		}), nil
	case *schema.ArrayType:
		if dst.Kind() != reflect.Slice || dst == bytesType {
			return nil, fmt.Errorf("%w: column %s is an array, field is %v", ErrTypeMapping, col, dst)
		}
		elem, err := decoderFor(dst.Elem(), st.ElementType, col+"[]")
		if err != nil {
			return nil, err
		}
		return nullable(func(v any, out reflect.Value) error {
			vals, ok := v.([]any)
			if !ok {
				return mismatch(v)
			}
			s := reflect.MakeSlice(dst, len(vals), len(vals))
			for i, e := range vals {
				if err := elem(e, s.Index(i)); err != nil {
					return err
				}
			}
			out.Set(s)
			return nil
		}), nil
	case *schema.MapType:
		if dst.Kind() != reflect.Map {
			return nil, fmt.Errorf("%w: column %s is a map, field is %v", ErrTypeMapping, col, dst)
		}
		kd, err := decoderFor(dst.Key(), st.KeyType, col+".key")
		if err != nil {
			return nil, err
		}
		vd, err := decoderFor(dst.Elem(), st.ValueType, col+".value")
		if err != nil {
			return nil, err
		}
		return nullable(func(v any, out reflect.Value) error {
			entries, ok := v.([]schema.MapEntry)
			if !ok {
				return mismatch(v)
			}
			m := reflect.MakeMapWithSize(dst, len(entries))
			for _, e := range entries {
				k, val := reflect.New(dst.Key()).Elem(), reflect.New(dst.Elem()).Elem()
				if err := kd(e.Key, k); err != nil {
					return err
				}
				if err := vd(e.Value, val); err != nil {
					return err
				}
				m.SetMapIndex(k, val)
			}
			out.Set(m)
			return nil
		}), nil
	}
	return nullable(func(v any, out reflect.Value) error {
		if !setScalar(v, out) {
			return mismatch(v)
		}
		return nil
	}), nil
}

// setScalar stores a primitive value into out, converting between Go types
// where no information is lost.
func setScalar(v any, out reflect.Value) bool {
	rv := reflect.ValueOf(v)
	t := out.Type()
	if rv.Type().AssignableTo(t) {
		out.Set(rv)
		return true
	}
	switch x := v.(type) {
	case schema.Date:
		switch {
		case t == timeType:
			out.Set(reflect.ValueOf(time.Unix(int64(x)*86400, 0).UTC()))
			return true
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
			return setInt(int64(x), out)
		}
		return false
	case schema.Decimal:
		if x.Unscaled == nil {
			return false
		}
		r := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		switch {
		case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
			f, _ := r.Float64()
			out.SetFloat(f)
			return true
		case t.Kind() == reflect.String:
			out.SetString(r.FloatString(max(x.Scale, 0)))
			return true
		case t == bigIntType && x.Scale == 0:
			out.Set(reflect.ValueOf(new(big.Int).Set(x.Unscaled)))
			return true
		}
		return false
	case string:
		if t == bytesType {
			out.SetBytes([]byte(x))
			return true
		}
		if t.Kind() == reflect.String {
			out.SetString(x)
			return true
		}
		return false
	case []byte:
		if t.Kind() == reflect.String {
			out.SetString(string(x))
			return true
		}
		return false
	case time.Time:
		return false
	case bool:
		if t.Kind() == reflect.Bool {
			out.SetBool(x)
			return true
		}
		return false
	case float32, float64:
		if t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 {
			out.SetFloat(rv.Float())
			return true
		}
		return false
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return setInt(rv.Int(), out)
	}
	return false
}

func setInt(n int64, out reflect.Value) bool {
	switch out.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if out.OverflowInt(n) {
			return false
		}
		out.SetInt(n)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n < 0 || out.OverflowUint(uint64(n)) {
			return false
		}
		out.SetUint(uint64(n))
		return true
	case reflect.Float32, reflect.Float64:
		if math.Abs(float64(n)) > 1<<53 {
			return false
		}
		out.SetFloat(float64(n))
		return true
	}
	return false
}
