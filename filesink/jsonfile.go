package filesink

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// Timestamp formats of Spark's JSON data source (JSONOptions defaults:
// timestampFormat "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", timestampNTZFormat
// "yyyy-MM-dd'T'HH:mm:ss[.SSS]", dateFormat "yyyy-MM-dd"); timestamps are
// written in UTC.
const (
	jsonTimestampLayout    = "2006-01-02T15:04:05.000Z07:00"
	jsonTimestampNTZLayout = "2006-01-02T15:04:05.000"
	jsonDateLayout         = "2006-01-02"
)

// appendJSONValue appends the JSON of v of type t as Spark's JacksonGenerator
// writes it: structs as objects in field order with null fields left out
// (ignoreNullFields), arrays, maps as objects keyed by the key's string form,
// binary as base64, decimals as plain numbers, dates and timestamps as
// strings. Scalars are encoded by encoding/json.
func appendJSONValue(buf *bytes.Buffer, v any, t schema.DataType) error {
	if v == nil {
		buf.WriteString("null")
		return nil
	}
	marshal := func(x any) error {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
		return nil
	}
	switch t := t.(type) {
	case *schema.StructType:
		fields, ok := v.([]any)
		if !ok || len(fields) != len(t.Fields) {
			return fmt.Errorf("%w: struct value %T does not match %d fields", schema.ErrRowMismatch, v, len(t.Fields))
		}
		return appendJSONObject(buf, t.Fields, fields, nil)
	case *schema.ArrayType:
		elems, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%w: array value is %T", schema.ErrRowMismatch, v)
		}
		buf.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendJSONValue(buf, e, t.ElementType); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case *schema.MapType:
		entries, ok := v.([]schema.MapEntry)
		if !ok {
			return fmt.Errorf("%w: map value is %T", schema.ErrRowMismatch, v)
		}
		buf.WriteByte('{')
		for i, e := range entries {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, err := parquetio.SerializePartitionValue(e.Key, t.KeyType)
			if err != nil || k == nil {
				return fmt.Errorf("%w: map key %v: %v", schema.ErrRowMismatch, e.Key, err)
			}
			if err := marshal(*k); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := appendJSONValue(buf, e.Value, t.ValueType); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case schema.DecimalType:
		d, ok := v.(schema.Decimal)
		if !ok || d.Unscaled == nil {
			return fmt.Errorf("%w: decimal value is %T", schema.ErrRowMismatch, v)
		}
		return marshal(json.Number(d.String()))
	case schema.PrimitiveType:
		switch t {
		case schema.TypeDate:
			d, ok := v.(schema.Date)
			if !ok {
				return fmt.Errorf("%w: date value is %T", schema.ErrRowMismatch, v)
			}
			return marshal(d.Time().Format(jsonDateLayout))
		case schema.TypeTimestamp:
			ts, ok := v.(time.Time)
			if !ok {
				return fmt.Errorf("%w: timestamp value is %T", schema.ErrRowMismatch, v)
			}
			return marshal(ts.UTC().Format(jsonTimestampLayout))
		case schema.TypeTimestampNTZ:
			ts, ok := v.(time.Time)
			if !ok {
				return fmt.Errorf("%w: timestamp_ntz value is %T", schema.ErrRowMismatch, v)
			}
			wall := time.Date(ts.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), ts.Nanosecond(), time.UTC)
			return marshal(wall.Format(jsonTimestampNTZLayout))
		case schema.TypeFloat, schema.TypeDouble:
			// Jackson writes non-finite numbers as strings
			// (WRITE_NAN_AS_STRINGS); encoding/json refuses them.
			var f float64
			switch x := v.(type) {
			case float32:
				f = float64(x)
			case float64:
				f = x
			}
			switch {
			case math.IsNaN(f):
				return marshal("NaN")
			case math.IsInf(f, 1):
				return marshal("Infinity")
			case math.IsInf(f, -1):
				return marshal("-Infinity")
			}
		}
		return marshal(v)
	}
	return fmt.Errorf("%w: unsupported type %T", schema.ErrSchema, t)
}

// appendJSONObject writes the fields (skipping those in skip) as one object,
// leaving out null values.
func appendJSONObject(buf *bytes.Buffer, fields []schema.StructField, values []any, skip map[int]bool) error {
	buf.WriteByte('{')
	n := 0
	for i, f := range fields {
		if skip[i] || values[i] == nil {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		name, _ := json.Marshal(f.Name)
		buf.Write(name)
		buf.WriteByte(':')
		if err := appendJSONValue(buf, values[i], f.Type); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

// jsonFile streams JSON lines into one data file, gzip-compressed or not.
type jsonFile struct {
	key  string
	w    storage.Writer
	cw   *countWriter
	gz   *gzip.Writer
	out  io.Writer
	rows int64
	line bytes.Buffer
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newJSONFile(ctx context.Context, store storage.Store, key string, gzipped bool) (*jsonFile, error) {
	w, err := store.NewWriter(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", key, err)
	}
	f := &jsonFile{key: key, w: w, cw: &countWriter{w: w}}
	f.out = f.cw
	if gzipped {
		f.gz = gzip.NewWriter(f.cw)
		f.out = f.gz
	}
	return f, nil
}

func (f *jsonFile) writeRow(sch *schema.StructType, row []any, skip map[int]bool) error {
	f.line.Reset()
	if err := appendJSONObject(&f.line, sch.Fields, row, skip); err != nil {
		return err
	}
	f.line.WriteByte('\n')
	if _, err := f.out.Write(f.line.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", f.key, err)
	}
	f.rows++
	return nil
}

func (f *jsonFile) close() error {
	if f.gz != nil {
		if err := f.gz.Close(); err != nil {
			_ = f.w.Abort()
			return fmt.Errorf("write %s: %w", f.key, err)
		}
	}
	if err := f.w.Close(); err != nil {
		return fmt.Errorf("publish %s: %w", f.key, err)
	}
	return nil
}
