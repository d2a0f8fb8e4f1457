package filesink

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// IsJSONFile reports whether a data file of a file-sink directory is a JSON
// lines file by its name, as Spark's JsonFileFormat names them: ".json", or
// ".json.gz" with gzip compression.
func IsJSONFile(key string) bool {
	return strings.HasSuffix(key, ".json") || strings.HasSuffix(key, ".json.gz")
}

// InferJSONSchema infers the schema of JSON lines data files as Spark's
// spark.read.json does with its default options (JsonInferSchema, every
// record sampled): integers are long (beyond long, decimal(p,0) up to 38
// digits, else double), other numbers double, true/false boolean, strings
// string (inferTimestamp and inferDate are off by default, so timestamps and
// dates written as text read as strings), objects structs with fields sorted
// by name, arrays arrays; conflicting types widen long to decimal to double
// and otherwise become string (compatibleType); a field that is always null
// is string. Every field is nullable. files are keys of store with their
// sizes. A line that is not a JSON object is an error wrapping
// ErrCorruptDataFile naming the file and line (Spark's PERMISSIVE mode
// would add a _corrupt_record column; lakesink's and Spark's sinks never
// write one).
func InferJSONSchema(ctx context.Context, store storage.Store, keys []string) (*schema.StructType, error) {
	var root schema.DataType = nullType{}
	for _, key := range keys {
		err := readJSONLines(ctx, store, key, func(line int, obj json.RawMessage) error {
			root = compatibleType(root, inferJSONType(obj))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	st, ok := canonicalType(root).(*schema.StructType)
	if !ok {
		return &schema.StructType{}, nil
	}
	return st, nil
}

// ReadJSONFile reads the records of the JSON lines data file key as rows of
// schema: fields are matched by name (exactly, then case-insensitively);
// fields missing from a record, JSON nulls and values that do not convert
// to the field's type are null (Spark's PERMISSIVE mode); a string field
// holding another JSON value gets its JSON text (JacksonParser). Value types
// are those of schema.Batch: long int64, double float64, decimal
// schema.Decimal, struct []any, array []any.
func ReadJSONFile(ctx context.Context, store storage.Store, key string, sch *schema.StructType) ([][]any, error) {
	var rows [][]any
	err := readJSONLines(ctx, store, key, func(line int, obj json.RawMessage) error {
		v, _ := jsonToValue(obj, sch)
		row, _ := v.([]any)
		if row == nil {
			row = make([]any, len(sch.Fields))
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// readJSONLines calls fn with every non-blank line of a JSON lines file,
// each a JSON object.
func readJSONLines(ctx context.Context, store storage.Store, key string, fn func(line int, obj json.RawMessage) error) error {
	rc, err := store.NewRangeReader(ctx, key, 0, -1)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	defer rc.Close()
	var r io.Reader = bufio.NewReaderSize(rc, 1<<20)
	if strings.HasSuffix(key, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorruptDataFile, key, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, MaxLogLineBytes)
	line := 0
	for sc.Scan() {
		line++
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		if l[0] != '{' || !json.Valid(l) {
			return fmt.Errorf("%w: %s line %d: not a JSON object", ErrCorruptDataFile, key, line)
		}
		if err := fn(line, json.RawMessage(l)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s after line %d: %w", ErrCorruptDataFile, key, line, err)
	}
	return nil
}

// nullType marks "only nulls seen so far" (Spark's NullType during
// inference).
type nullType struct{}

func (nullType) TypeName() string { return "null" }

func inferJSONType(raw json.RawMessage) schema.DataType {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nullType{}
	}
	switch raw[0] {
	case 'n':
		return nullType{}
	case 't', 'f':
		return schema.TypeBoolean
	case '"':
		return schema.TypeString
	case '{':
		dec := json.NewDecoder(bytes.NewReader(raw))
		_, _ = dec.Token()
		st := &schema.StructType{}
		idx := map[string]int{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return schema.TypeString
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return schema.TypeString
			}
			k := kt.(string)
			t := inferJSONType(v)
			if i, ok := idx[k]; ok {
				st.Fields[i].Type = compatibleType(st.Fields[i].Type, t)
				continue
			}
			idx[k] = len(st.Fields)
			st.Fields = append(st.Fields, schema.StructField{Name: k, Type: t, Nullable: true})
		}
		sort.SliceStable(st.Fields, func(i, j int) bool { return st.Fields[i].Name < st.Fields[j].Name })
		return st
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return schema.TypeString
		}
		var et schema.DataType = nullType{}
		for _, e := range elems {
			et = compatibleType(et, inferJSONType(e))
		}
		return &schema.ArrayType{ElementType: et, ContainsNull: true}
	}
	if bytes.ContainsAny(raw, ".eE") {
		return schema.TypeDouble
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return schema.TypeLong
	}
	if digits := len(strings.TrimPrefix(string(raw), "-")); digits <= 38 {
		return schema.DecimalType{Precision: digits, Scale: 0}
	}
	return schema.TypeDouble
}

// compatibleType is JsonInferSchema.compatibleType for the types inference
// produces.
func compatibleType(a, b schema.DataType) schema.DataType {
	if _, ok := a.(nullType); ok {
		return b
	}
	if _, ok := b.(nullType); ok {
		return a
	}
	switch at := a.(type) {
	case schema.PrimitiveType:
		switch bt := b.(type) {
		case schema.PrimitiveType:
			switch {
			case at == bt:
				return at
			case (at == schema.TypeLong || at == schema.TypeDouble) && (bt == schema.TypeLong || bt == schema.TypeDouble):
				return schema.TypeDouble
			}
		case schema.DecimalType:
			return widenDecimal(at, bt)
		}
	case schema.DecimalType:
		switch bt := b.(type) {
		case schema.DecimalType:
			// DecimalPrecision.widerDecimalType, capped at 38 digits.
			scale := max(at.Scale, bt.Scale)
			p := max(at.Precision-at.Scale, bt.Precision-bt.Scale) + scale
			if p > 38 {
				return schema.TypeDouble
			}
			return schema.DecimalType{Precision: p, Scale: scale}
		case schema.PrimitiveType:
			return widenDecimal(bt, at)
		}
	case *schema.StructType:
		bt, ok := b.(*schema.StructType)
		if !ok {
			break
		}
		out := &schema.StructType{}
		idx := map[string]int{}
		for _, f := range at.Fields {
			idx[f.Name] = len(out.Fields)
			out.Fields = append(out.Fields, f)
		}
		for _, f := range bt.Fields {
			if i, ok := idx[f.Name]; ok {
				out.Fields[i].Type = compatibleType(out.Fields[i].Type, f.Type)
				continue
			}
			out.Fields = append(out.Fields, f)
		}
		sort.SliceStable(out.Fields, func(i, j int) bool { return out.Fields[i].Name < out.Fields[j].Name })
		return out
	case *schema.ArrayType:
		if bt, ok := b.(*schema.ArrayType); ok {
			return &schema.ArrayType{ElementType: compatibleType(at.ElementType, bt.ElementType), ContainsNull: true}
		}
	}
	return schema.TypeString
}

// widenDecimal combines a long or double with a decimal: long widens to the
// decimal (as decimal(20,0)), double wins.
func widenDecimal(p schema.PrimitiveType, d schema.DecimalType) schema.DataType {
	switch p {
	case schema.TypeLong:
		return compatibleType(schema.DecimalType{Precision: 20, Scale: 0}, d)
	case schema.TypeDouble:
		return schema.TypeDouble
	}
	return schema.TypeString
}

// canonicalType turns "only nulls" into string (JsonInferSchema.canonicalizeType).
func canonicalType(t schema.DataType) schema.DataType {
	switch tt := t.(type) {
	case nullType:
		return schema.TypeString
	case *schema.StructType:
		out := &schema.StructType{Fields: make([]schema.StructField, len(tt.Fields))}
		for i, f := range tt.Fields {
			f.Type = canonicalType(f.Type)
			out.Fields[i] = f
		}
		return out
	case *schema.ArrayType:
		return &schema.ArrayType{ElementType: canonicalType(tt.ElementType), ContainsNull: true}
	}
	return t
}

var errNoConvert = errors.New("value does not convert")

// jsonToValue converts one JSON value to type t (nil for null).
func jsonToValue(raw json.RawMessage, t schema.DataType) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch tt := t.(type) {
	case *schema.StructType:
		var obj map[string]json.RawMessage
		if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return nil, errNoConvert
		}
		row := make([]any, len(tt.Fields))
		for i, f := range tt.Fields {
			v, ok := obj[f.Name]
			if !ok {
				for k, kv := range obj {
					if strings.EqualFold(k, f.Name) {
						v, ok = kv, true
						break
					}
				}
			}
			if ok {
				row[i], _ = jsonToValue(v, f.Type)
			}
		}
		return row, nil
	case *schema.ArrayType:
		var elems []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
			return nil, errNoConvert
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i], _ = jsonToValue(e, tt.ElementType)
		}
		return out, nil
	case schema.DecimalType:
		r, ok := new(big.Rat).SetString(string(raw))
		if !ok || raw[0] == '"' {
			return nil, errNoConvert
		}
		scaled := r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tt.Scale)), nil)))
		if !scaled.IsInt() {
			return nil, errNoConvert
		}
		return schema.Decimal{Unscaled: new(big.Int).Set(scaled.Num()), Scale: tt.Scale}, nil
	case schema.PrimitiveType:
		switch tt {
		case schema.TypeString:
			if raw[0] == '"' {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					return nil, errNoConvert
				}
				return s, nil
			}
			return string(raw), nil
		case schema.TypeBoolean:
			switch string(raw) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		case schema.TypeLong:
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return n, nil
			}
		case schema.TypeDouble:
			if raw[0] != '"' {
				if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
					return f, nil
				}
			}
		}
	}
	return nil, errNoConvert
}
