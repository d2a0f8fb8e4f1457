package source

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/lakesink/lakesink/schema"
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
	jsonRoot *schema.StructType
	csvCols  []string
	csvTypes []schema.DataType
}

// nullType marks "only nulls seen so far".
type nullType struct{}

func (nullType) TypeName() string { return "null" }

func (in *inferrer) addJSON(raw json.RawMessage) {
	t := in.jsonType(raw)
	st, ok := t.(*schema.StructType)
	if !ok {
		return // not an object: reported as a bad record at decode time
	}
	if in.jsonRoot == nil {
		in.jsonRoot = st
		return
	}
	in.jsonRoot = mergeInferred(in.jsonRoot, st).(*schema.StructType)
}

func (in *inferrer) jsonType(raw json.RawMessage) schema.DataType {
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
		var s string
		_ = json.Unmarshal(raw, &s)
		return in.textType(s, false)
	case '{':
		entries, err := objectEntries(raw)
		if err != nil {
			return schema.TypeString
		}
		st := &schema.StructType{}
		seen := map[string]int{}
		for _, e := range entries {
			t := in.jsonType(e.value)
			if i, ok := seen[e.key]; ok {
				st.Fields[i].Type = mergeInferred(st.Fields[i].Type, t)
				continue
			}
			seen[e.key] = len(st.Fields)
			st.Fields = append(st.Fields, schema.StructField{Name: e.key, Type: t, Nullable: true})
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
			et = mergeInferred(et, in.jsonType(e))
		}
		return &schema.ArrayType{ElementType: et, ContainsNull: true}
	}
	if bytes.ContainsAny(raw, ".eE") {
		return schema.TypeDouble
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
		return schema.TypeDouble // beyond long
	}
	return schema.TypeLong
}

// textType infers the type of a text value: for CSV cells numbers and
// booleans are recognised; for JSON strings only timestamps (when asked).
func (in *inferrer) textType(s string, csvCell bool) schema.DataType {
	if csvCell {
		if s == "" {
			return nullType{}
		}
		t := strings.TrimSpace(s)
		if _, err := strconv.ParseInt(t, 10, 64); err == nil {
			return schema.TypeLong
		}
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			return schema.TypeDouble
		}
		if strings.EqualFold(t, "true") || strings.EqualFold(t, "false") {
			return schema.TypeBoolean
		}
	}
	if in.useTS {
		if _, err := in.tp.timestamp(s); err == nil {
			return schema.TypeTimestamp
		}
	}
	return schema.TypeString
}

func (in *inferrer) addCSV(header, fields []string) {
	if in.csvCols == nil {
		in.csvCols = header
		in.csvTypes = make([]schema.DataType, len(header))
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
func (in *inferrer) schema() *schema.StructType {
	if in.csvCols != nil {
		st := &schema.StructType{}
		for i, c := range in.csvCols {
			st.Fields = append(st.Fields, schema.StructField{Name: c, Type: finalType(in.csvTypes[i]), Nullable: true})
		}
		return st
	}
	if in.jsonRoot == nil {
		return &schema.StructType{}
	}
	return finalType(in.jsonRoot).(*schema.StructType)
}

func finalType(t schema.DataType) schema.DataType {
	switch tt := t.(type) {
	case nullType:
		return schema.TypeString
	case *schema.StructType:
		out := &schema.StructType{Fields: make([]schema.StructField, len(tt.Fields))}
		for i, f := range tt.Fields {
			f.Type = finalType(f.Type)
			out.Fields[i] = f
		}
		return out
	case *schema.ArrayType:
		return &schema.ArrayType{ElementType: finalType(tt.ElementType), ContainsNull: true}
	}
	return t
}

// mergeInferred widens two inferred types to one.
func mergeInferred(a, b schema.DataType) schema.DataType {
	if _, ok := a.(nullType); ok {
		return b
	}
	if _, ok := b.(nullType); ok {
		return a
	}
	switch at := a.(type) {
	case schema.PrimitiveType:
		bt, ok := b.(schema.PrimitiveType)
		if !ok {
			return schema.TypeString
		}
		if at == bt {
			return at
		}
		if (at == schema.TypeLong && bt == schema.TypeDouble) || (at == schema.TypeDouble && bt == schema.TypeLong) {
			return schema.TypeDouble
		}
		return schema.TypeString
	case *schema.StructType:
		bt, ok := b.(*schema.StructType)
		if !ok {
			return schema.TypeString
		}
		out := &schema.StructType{}
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
	case *schema.ArrayType:
		bt, ok := b.(*schema.ArrayType)
		if !ok {
			return schema.TypeString
		}
		return &schema.ArrayType{ElementType: mergeInferred(at.ElementType, bt.ElementType), ContainsNull: true}
	}
	return schema.TypeString
}
