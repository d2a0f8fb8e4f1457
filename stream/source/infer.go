package source

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// inferrer builds a schema from sample records the way Spark's JSON and CSV
// inference does (JsonInferSchema, CSVInferSchema): integral numbers are
// long, other numbers double, true/false boolean, objects structs (JSON
// fields sorted by name), arrays arrays; text is string, or timestamp when a
// TimestampFormat is set and every value parses with it. Conflicting types
// widen long→double, and otherwise fall back to string; a column that is
// always null is string. Every field is nullable.
type inferrer struct {
	tp       timeParser
	useTS    bool
	jsonRoot *parquetio.StructType
	csvCols  []string
	csvTypes []parquetio.DataType
}

// nullType marks "only nulls seen so far".
type nullType struct{}

func (nullType) TypeName() string { return "null" }

func (in *inferrer) addJSON(raw json.RawMessage) {
	t := in.jsonType(raw)
	st, ok := t.(*parquetio.StructType)
	if !ok {
		return // not an object: reported as a bad record at decode time
	}
	if in.jsonRoot == nil {
		in.jsonRoot = st
		return
	}
	in.jsonRoot = mergeInferred(in.jsonRoot, st).(*parquetio.StructType)
}

func (in *inferrer) jsonType(raw json.RawMessage) parquetio.DataType {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nullType{}
	}
	switch raw[0] {
	case 'n':
		return nullType{}
	case 't', 'f':
		return parquetio.TypeBoolean
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return in.textType(s, false)
	case '{':
		entries, err := objectEntries(raw)
		if err != nil {
			return parquetio.TypeString
		}
		st := &parquetio.StructType{}
		seen := map[string]int{}
		for _, e := range entries {
			t := in.jsonType(e.value)
			if i, ok := seen[e.key]; ok {
				st.Fields[i].Type = mergeInferred(st.Fields[i].Type, t)
				continue
			}
			seen[e.key] = len(st.Fields)
			st.Fields = append(st.Fields, parquetio.StructField{Name: e.key, Type: t, Nullable: true})
		}
		sort.SliceStable(st.Fields, func(i, j int) bool { return st.Fields[i].Name < st.Fields[j].Name })
		return st
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return parquetio.TypeString
		}
		var et parquetio.DataType = nullType{}
		for _, e := range elems {
			et = mergeInferred(et, in.jsonType(e))
		}
		return &parquetio.ArrayType{ElementType: et, ContainsNull: true}
	}
	if bytes.ContainsAny(raw, ".eE") {
		return parquetio.TypeDouble
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
		return parquetio.TypeDouble // beyond long
	}
	return parquetio.TypeLong
}

// textType infers the type of a text value: for CSV cells numbers and
// booleans are recognised; for JSON strings only timestamps (when asked).
func (in *inferrer) textType(s string, csvCell bool) parquetio.DataType {
	if csvCell {
		if s == "" {
			return nullType{}
		}
		t := strings.TrimSpace(s)
		if _, err := strconv.ParseInt(t, 10, 64); err == nil {
			return parquetio.TypeLong
		}
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			return parquetio.TypeDouble
		}
		if strings.EqualFold(t, "true") || strings.EqualFold(t, "false") {
			return parquetio.TypeBoolean
		}
	}
	if in.useTS {
		if _, err := in.tp.timestamp(s); err == nil {
			return parquetio.TypeTimestamp
		}
	}
	return parquetio.TypeString
}

func (in *inferrer) addCSV(header, fields []string) {
	if in.csvCols == nil {
		in.csvCols = header
		in.csvTypes = make([]parquetio.DataType, len(header))
		for i := range in.csvTypes {
			in.csvTypes[i] = nullType{}
		}
	}
	for i, f := range fields {
		if i < len(in.csvTypes) {
			in.csvTypes[i] = mergeInferred(in.csvTypes[i], in.textType(f, true))
		}
	}
}

// schema returns the inferred schema ("only nulls" becomes string).
func (in *inferrer) schema() *parquetio.StructType {
	if in.csvCols != nil {
		st := &parquetio.StructType{}
		for i, c := range in.csvCols {
			st.Fields = append(st.Fields, parquetio.StructField{Name: c, Type: finalType(in.csvTypes[i]), Nullable: true})
		}
		return st
	}
	if in.jsonRoot == nil {
		return &parquetio.StructType{}
	}
	return finalType(in.jsonRoot).(*parquetio.StructType)
}

func finalType(t parquetio.DataType) parquetio.DataType {
	switch tt := t.(type) {
	case nullType:
		return parquetio.TypeString
	case *parquetio.StructType:
		out := &parquetio.StructType{Fields: make([]parquetio.StructField, len(tt.Fields))}
		for i, f := range tt.Fields {
			f.Type = finalType(f.Type)
			out.Fields[i] = f
		}
		return out
	case *parquetio.ArrayType:
		return &parquetio.ArrayType{ElementType: finalType(tt.ElementType), ContainsNull: true}
	}
	return t
}

// mergeInferred widens two inferred types to one.
func mergeInferred(a, b parquetio.DataType) parquetio.DataType {
	if _, ok := a.(nullType); ok {
		return b
	}
	if _, ok := b.(nullType); ok {
		return a
	}
	switch at := a.(type) {
	case parquetio.PrimitiveType:
		bt, ok := b.(parquetio.PrimitiveType)
		if !ok {
			return parquetio.TypeString
		}
		if at == bt {
			return at
		}
		if (at == parquetio.TypeLong && bt == parquetio.TypeDouble) || (at == parquetio.TypeDouble && bt == parquetio.TypeLong) {
			return parquetio.TypeDouble
		}
		return parquetio.TypeString
	case *parquetio.StructType:
		bt, ok := b.(*parquetio.StructType)
		if !ok {
			return parquetio.TypeString
		}
		out := &parquetio.StructType{}
		idx := map[string]int{}
		for _, f := range at.Fields {
			idx[f.Name] = len(out.Fields)
			out.Fields = append(out.Fields, f)
		}
		for _, f := range bt.Fields {
			if i, ok := idx[f.Name]; ok {
				out.Fields[i].Type = mergeInferred(out.Fields[i].Type, f.Type)
				continue
			}
			out.Fields = append(out.Fields, f)
		}
		sort.SliceStable(out.Fields, func(i, j int) bool { return out.Fields[i].Name < out.Fields[j].Name })
		return out
	case *parquetio.ArrayType:
		bt, ok := b.(*parquetio.ArrayType)
		if !ok {
			return parquetio.TypeString
		}
		return &parquetio.ArrayType{ElementType: mergeInferred(at.ElementType, bt.ElementType), ContainsNull: true}
	}
	return parquetio.TypeString
}
