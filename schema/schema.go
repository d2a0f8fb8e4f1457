package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TypeVariant is the Delta variant type. It can be parsed and reported, but
// WriteFiles refuses it (ErrSchema).
const TypeVariant PrimitiveType = "variant"

// Column mapping metadata keys (PROTOCOL.md, "Column Mapping").
const (
	MetaColumnMappingID           = "delta.columnMapping.id"
	MetaColumnMappingPhysicalName = "delta.columnMapping.physicalName"
	// MetaTypeChanges lists the type changes of a field (or of its nested
	// fields, with a fieldPath) on a table with type widening (PROTOCOL.md
	// "Type Widening", "Type Change Metadata").
	MetaTypeChanges = "delta.typeChanges"
)

// TypeName is "decimal(p,s)".
func (d DecimalType) TypeName() string {
	return "decimal(" + strconv.Itoa(d.Precision) + "," + strconv.Itoa(d.Scale) + ")"
}

// ParseSchema parses a Delta/Spark schema string (the metaData.schemaString of
// a Delta table; PROTOCOL.md, "Schema Serialization Format"). Errors wrap
// ErrSchema.
func ParseSchema(data []byte) (*StructType, error) {
	s := new(StructType)
	if err := s.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return s, nil
}

// MustParseSchema is not provided: no panics in this package.

// MarshalJSON writes the schema as Spark does: {"type":"struct","fields":[...]}
// with every field as name, type, nullable, metadata (metadata {} when empty).
func (s *StructType) MarshalJSON() ([]byte, error) {
	j, err := toJSONType(s)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, fmt.Errorf("%w: encode schema: %v", ErrSchema, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// UnmarshalJSON parses a struct type; see ParseSchema.
func (s *StructType) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%w: parse schema JSON: %v", ErrSchema, err)
	}
	t, err := parseJSONType(raw, "", 0)
	if err != nil {
		return err
	}
	st, ok := t.(*StructType)
	if !ok {
		return fmt.Errorf("%w: schema is a %s, not a struct", ErrSchema, t.TypeName())
	}
	*s = *st
	return nil
}

// String is the schema's JSON form.
func (s *StructType) String() string {
	b, err := s.MarshalJSON()
	if err != nil {
		return "<invalid schema: " + err.Error() + ">"
	}
	return string(b)
}

// Field returns the field named name (exact match first, then
// case-insensitive as Spark resolves columns) and whether it exists.
func (s *StructType) Field(name string) (StructField, bool) {
	i := s.FieldIndex(name)
	if i < 0 {
		return StructField{}, false
	}
	return s.Fields[i], true
}

// FieldIndex returns the index of the field named name (exact match first,
// then case-insensitive), or -1.
func (s *StructType) FieldIndex(name string) int {
	if s == nil {
		return -1
	}
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return i
		}
	}
	for i := range s.Fields {
		if strings.EqualFold(s.Fields[i].Name, name) {
			return i
		}
	}
	return -1
}

// PhysicalName is the field's column-mapping physical name
// (delta.columnMapping.physicalName), or its logical name when absent.
func (f StructField) PhysicalName() string {
	if v, ok := f.Metadata[MetaColumnMappingPhysicalName].(string); ok && v != "" {
		return v
	}
	return f.Name
}

// TypeChanged reports a delta.typeChanges entry in the field's metadata:
// the field, or a field nested in it, was widened, so files written before
// the change hold values (and statistics) of the older type.
func (f StructField) TypeChanged() bool {
	v, ok := f.Metadata[MetaTypeChanges]
	return ok && v != nil
}

// ColumnMappingID is the field's delta.columnMapping.id, if any.
func (f StructField) ColumnMappingID() (int64, bool) {
	switch v := f.Metadata[MetaColumnMappingID].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		return int64(v), true
	case int:
		return int64(v), true
	case int64:
		return v, true
	case int32:
		return int64(v), true
	}
	return 0, false
}

type jsonStruct struct {
	Type   string      `json:"type"`
	Fields []jsonField `json:"fields"`
}

type jsonField struct {
	Name     string         `json:"name"`
	Type     any            `json:"type"`
	Nullable bool           `json:"nullable"`
	Metadata map[string]any `json:"metadata"`
}

type jsonArray struct {
	Type         string `json:"type"`
	ElementType  any    `json:"elementType"`
	ContainsNull bool   `json:"containsNull"`
}

type jsonMap struct {
	Type              string `json:"type"`
	KeyType           any    `json:"keyType"`
	ValueType         any    `json:"valueType"`
	ValueContainsNull bool   `json:"valueContainsNull"`
}

func toJSONType(t DataType) (any, error) {
	switch t := t.(type) {
	case PrimitiveType:
		if !knownPrimitive(t) {
			return nil, fmt.Errorf("%w: unknown type %q", ErrSchema, string(t))
		}
		return string(t), nil
	case DecimalType:
		if err := ValidateDecimal(t); err != nil {
			return nil, err
		}
		return t.TypeName(), nil
	case *StructType:
		if t == nil {
			return nil, fmt.Errorf("%w: nil struct type", ErrSchema)
		}
		js := jsonStruct{Type: "struct", Fields: make([]jsonField, 0, len(t.Fields))}
		for _, f := range t.Fields {
			ft, err := toJSONType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			md := f.Metadata
			if md == nil {
				md = map[string]any{}
			}
			js.Fields = append(js.Fields, jsonField{Name: f.Name, Type: ft, Nullable: f.Nullable, Metadata: md})
		}
		return js, nil
	case *ArrayType:
		if t == nil {
			return nil, fmt.Errorf("%w: nil array type", ErrSchema)
		}
		et, err := toJSONType(t.ElementType)
		if err != nil {
			return nil, err
		}
		return jsonArray{Type: "array", ElementType: et, ContainsNull: t.ContainsNull}, nil
	case *MapType:
		if t == nil {
			return nil, fmt.Errorf("%w: nil map type", ErrSchema)
		}
		kt, err := toJSONType(t.KeyType)
		if err != nil {
			return nil, err
		}
		vt, err := toJSONType(t.ValueType)
		if err != nil {
			return nil, err
		}
		return jsonMap{Type: "map", KeyType: kt, ValueType: vt, ValueContainsNull: t.ValueContainsNull}, nil
	case nil:
		return nil, fmt.Errorf("%w: missing type", ErrSchema)
	default:
		return nil, fmt.Errorf("%w: unknown type %T", ErrSchema, t)
	}
}

func knownPrimitive(t PrimitiveType) bool {
	switch t {
	case TypeString, TypeLong, TypeInteger, TypeShort, TypeByte, TypeFloat, TypeDouble,
		TypeBoolean, TypeBinary, TypeDate, TypeTimestamp, TypeTimestampNTZ, TypeVariant:
		return true
	}
	return false
}

// ValidateDecimal checks Spark's bounds of decimal(p,s): precision 1..38
// and 0 <= scale <= precision. Errors wrap ErrSchema.
func ValidateDecimal(d DecimalType) error {
	if d.Precision < 1 || d.Precision > 38 || d.Scale < 0 || d.Scale > d.Precision {
		return fmt.Errorf("%w: invalid decimal(%d,%d): precision must be 1..38 and 0 <= scale <= precision", ErrSchema, d.Precision, d.Scale)
	}
	return nil
}

// ParseTypeName parses a primitive or decimal type name as it appears in
// schema JSON ("long", "decimal(10,2)", "decimal"). Errors wrap ErrSchema.
func ParseTypeName(name string) (DataType, error) {
	n := strings.TrimSpace(name)
	if n == "decimal" {
		return DecimalType{Precision: 10, Scale: 0}, nil // Spark's DecimalType.USER_DEFAULT
	}
	if strings.HasPrefix(n, "decimal(") && strings.HasSuffix(n, ")") {
		inner := n[len("decimal(") : len(n)-1]
		ps, ss, ok := strings.Cut(inner, ",")
		if !ok {
			return nil, fmt.Errorf("%w: unknown type %q", ErrSchema, name)
		}
		p, err1 := strconv.Atoi(strings.TrimSpace(ps))
		s, err2 := strconv.Atoi(strings.TrimSpace(ss))
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: unknown type %q", ErrSchema, name)
		}
		d := DecimalType{Precision: p, Scale: s}
		if err := ValidateDecimal(d); err != nil {
			return nil, err
		}
		return d, nil
	}
	p := PrimitiveType(n)
	if !knownPrimitive(p) {
		return nil, fmt.Errorf("%w: unknown type %q", ErrSchema, name)
	}
	return p, nil
}

// MaxSchemaDepth is how deeply types may nest in a parsed schema (a struct,
// array or map inside another counts one level; a top-level column of the
// root struct is at depth 1). Deeper schemas are refused with ErrSchema
// before their column paths are built: each level's path names every level
// above it, so parsing and validating a schema 10,000 arrays deep (a 500 KB
// schemaString) allocated 1.2 GB. No engine writes such schemas: Parquet
// itself stops at 255 levels (see MaxColumnDepth), and serde_json,
// under delta-rs, stops reading JSON nested deeper than 128.
const MaxSchemaDepth = 1000

func parseJSONType(raw any, path string, depth int) (DataType, error) {
	if _, ok := raw.(map[string]any); ok && depth > MaxSchemaDepth {
		return nil, fmt.Errorf("%w: %s: types nested deeper than %d levels", ErrSchema, orRoot(path), MaxSchemaDepth)
	}
	switch v := raw.(type) {
	case string:
		t, err := ParseTypeName(v)
		if err != nil && path != "" {
			return nil, fmt.Errorf("column %s: %w", path, err)
		}
		return t, err
	case map[string]any:
		typ, _ := v["type"].(string)
		switch typ {
		case "struct":
			fields, ok := v["fields"].([]any)
			if !ok && v["fields"] != nil {
				return nil, fmt.Errorf("%w: %s: struct fields is not an array", ErrSchema, orRoot(path))
			}
			st := &StructType{Fields: make([]StructField, 0, len(fields))}
			for i, fr := range fields {
				fm, ok := fr.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%w: %s: field %d is not an object", ErrSchema, orRoot(path), i)
				}
				name, ok := fm["name"].(string)
				if !ok {
					return nil, fmt.Errorf("%w: %s: field %d has no name", ErrSchema, orRoot(path), i)
				}
				fp := joinPath(path, name)
				if _, ok := fm["type"]; !ok {
					return nil, fmt.Errorf("%w: column %s has no type", ErrSchema, fp)
				}
				ft, err := parseJSONType(fm["type"], fp, depth+1)
				if err != nil {
					return nil, err
				}
				nullable := true
				if nb, ok := fm["nullable"].(bool); ok {
					nullable = nb
				}
				var md map[string]any
				if m, ok := fm["metadata"].(map[string]any); ok && len(m) > 0 {
					md = m
				}
				st.Fields = append(st.Fields, StructField{Name: name, Type: ft, Nullable: nullable, Metadata: md})
			}
			return st, nil
		case "array":
			et, err := parseJSONType(v["elementType"], joinPath(path, "element"), depth+1)
			if err != nil {
				return nil, err
			}
			cn, _ := v["containsNull"].(bool)
			return &ArrayType{ElementType: et, ContainsNull: cn}, nil
		case "map":
			kt, err := parseJSONType(v["keyType"], joinPath(path, "key"), depth+1)
			if err != nil {
				return nil, err
			}
			vt, err := parseJSONType(v["valueType"], joinPath(path, "value"), depth+1)
			if err != nil {
				return nil, err
			}
			vcn, _ := v["valueContainsNull"].(bool)
			return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vcn}, nil
		default:
			return nil, fmt.Errorf("%w: %s: unknown type %q", ErrSchema, orRoot(path), typ)
		}
	default:
		return nil, fmt.Errorf("%w: %s: type is neither a name nor an object", ErrSchema, orRoot(path))
	}
}

func orRoot(path string) string {
	if path == "" {
		return "schema root"
	}
	return "column " + path
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// TypesEqual reports whether two data types are the same (field metadata is
// ignored; field names, nullability and order count).
func TypesEqual(a, b DataType) bool {
	switch a := a.(type) {
	case PrimitiveType:
		b, ok := b.(PrimitiveType)
		return ok && a == b
	case DecimalType:
		b, ok := b.(DecimalType)
		return ok && a == b
	case *StructType:
		b, ok := b.(*StructType)
		if !ok || len(a.Fields) != len(b.Fields) {
			return false
		}
		for i := range a.Fields {
			fa, fb := a.Fields[i], b.Fields[i]
			if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !TypesEqual(fa.Type, fb.Type) {
				return false
			}
		}
		return true
	case *ArrayType:
		b, ok := b.(*ArrayType)
		return ok && a.ContainsNull == b.ContainsNull && TypesEqual(a.ElementType, b.ElementType)
	case *MapType:
		b, ok := b.(*MapType)
		return ok && a.ValueContainsNull == b.ValueContainsNull && TypesEqual(a.KeyType, b.KeyType) && TypesEqual(a.ValueType, b.ValueType)
	}
	return false
}

// MergeSchema merges new into old for schema evolution by adding columns
// (Delta's mergeSchema): old's fields keep their order and metadata; fields
// only in new are appended and must be nullable; a field in both must have the
// same type (structs merge recursively; nullability becomes the OR of both).
// Errors wrap ErrSchema and name the column.
func MergeSchema(old, new *StructType) (*StructType, error) {
	if old == nil {
		return new, nil
	}
	if new == nil {
		return old, nil
	}
	return mergeStruct(old, new, "")
}

func mergeStruct(old, new *StructType, path string) (*StructType, error) {
	out := &StructType{Fields: make([]StructField, 0, len(old.Fields)+len(new.Fields))}
	used := make([]bool, len(new.Fields))
	for _, of := range old.Fields {
		j := new.FieldIndex(of.Name)
		if j < 0 {
			out.Fields = append(out.Fields, of)
			continue
		}
		used[j] = true
		nf := new.Fields[j]
		fp := joinPath(path, of.Name)
		t, err := mergeType(of.Type, nf.Type, fp)
		if err != nil {
			return nil, err
		}
		m := of
		m.Type = t
		m.Nullable = of.Nullable || nf.Nullable
		out.Fields = append(out.Fields, m)
	}
	for j, nf := range new.Fields {
		if used[j] {
			continue
		}
		if !nf.Nullable {
			return nil, fmt.Errorf("%w: new column %s is not nullable (only nullable columns can be added)", ErrSchema, joinPath(path, nf.Name))
		}
		out.Fields = append(out.Fields, nf)
	}
	return out, nil
}

func mergeType(old, new DataType, path string) (DataType, error) {
	switch o := old.(type) {
	case *StructType:
		if n, ok := new.(*StructType); ok {
			return mergeStruct(o, n, path)
		}
	case *ArrayType:
		if n, ok := new.(*ArrayType); ok {
			et, err := mergeType(o.ElementType, n.ElementType, joinPath(path, "element"))
			if err != nil {
				return nil, err
			}
			return &ArrayType{ElementType: et, ContainsNull: o.ContainsNull || n.ContainsNull}, nil
		}
	case *MapType:
		if n, ok := new.(*MapType); ok {
			kt, err := mergeType(o.KeyType, n.KeyType, joinPath(path, "key"))
			if err != nil {
				return nil, err
			}
			vt, err := mergeType(o.ValueType, n.ValueType, joinPath(path, "value"))
			if err != nil {
				return nil, err
			}
			return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: o.ValueContainsNull || n.ValueContainsNull}, nil
		}
	default:
		if TypesEqual(old, new) {
			return old, nil
		}
	}
	return nil, fmt.Errorf("%w: column %s changes type from %s to %s", ErrSchema, path, FormatType(old), FormatType(new))
}

// FormatType renders t as the schema JSON writes it: a primitive or decimal
// type by its name ("long", "decimal(10,2)"), a nested type as its JSON.
func FormatType(t DataType) string {
	if t == nil {
		return "<nil>"
	}
	j, err := toJSONType(t)
	if err != nil {
		return t.TypeName()
	}
	if s, ok := j.(string); ok {
		return s
	}
	b, err := json.Marshal(j)
	if err != nil {
		return t.TypeName()
	}
	return string(b)
}

// Parquet limits on a written schema, as parquet-go enforces them (it panics
// beyond them, in the goroutine writing the file, and refuses to open such a
// file): a leaf column lies at most MaxColumnDepth elements below the root
// of the Parquet schema, which also bounds its definition and repetition
// levels (one per optional or repeated element) to 255, and a file has at
// most MaxLeafColumns leaf columns. In Spark's layout (see ParquetSchema) a
// struct field is one element, an array two (the repeated "list" group and
// its "element") and a map two ("key_value" and its "key" or "value"): so at
// most 254 nested structs under a column, or 127 nested arrays or maps.
const (
	MaxColumnDepth = 255   // parquet-go's MaxColumnDepth
	MaxLeafColumns = 65535 // parquet-go's MaxColumnIndex + 1
)

// ValidateForWrite checks that every type of s can be written to Parquet
// (variant cannot), that types nest at most MaxSchemaDepth deep, that no
// leaf column lies deeper than MaxColumnDepth Parquet elements and that
// there are at most MaxLeafColumns leaves. Errors wrap ErrSchema and
// name the column.
func ValidateForWrite(s *StructType) error {
	if s == nil {
		return fmt.Errorf("%w: nil schema", ErrSchema)
	}
	// The cheap structural checks run first, so that the column paths of
	// validateWriteStruct are only built for a schema of bounded depth.
	leaves := 0
	if err := checkLevels(s, &leaves); err != nil {
		return err
	}
	return validateWriteStruct(s, "")
}

// levelErr is a level or width violation found by checkLevels; the column
// path is built (outermost first) only on the way out of the recursion.
type levelErr struct {
	names []string // innermost first
	msg   string
}

func (e *levelErr) err() error {
	slices.Reverse(e.names)
	p := strings.Join(e.names, ".")
	if p == "" {
		p = "schema root"
	} else {
		p = "column " + p
	}
	return fmt.Errorf("%w: %s: %s", ErrSchema, p, e.msg)
}

// checkLevels walks t counting nesting depth, the Parquet elements above
// each leaf in Spark's layout, and the leaves.
func checkLevels(t DataType, leaves *int) error {
	var walk func(t DataType, depth, elems int) *levelErr
	walk = func(t DataType, depth, elems int) *levelErr {
		switch t.(type) {
		case *StructType, *ArrayType, *MapType:
			if depth > MaxSchemaDepth {
				return &levelErr{msg: fmt.Sprintf("types nested deeper than %d levels", MaxSchemaDepth)}
			}
		}
		switch t := t.(type) {
		case *StructType:
			if t == nil {
				return nil // reported by validateWriteStruct
			}
			for _, f := range t.Fields {
				if e := walk(f.Type, depth+1, elems+1); e != nil {
					e.names = append(e.names, f.Name)
					return e
				}
			}
		case *ArrayType:
			if t == nil {
				return nil
			}
			if e := walk(t.ElementType, depth+1, elems+2); e != nil {
				e.names = append(e.names, "element")
				return e
			}
		case *MapType:
			if t == nil {
				return nil
			}
			if e := walk(t.KeyType, depth+1, elems+2); e != nil {
				e.names = append(e.names, "key")
				return e
			}
			if e := walk(t.ValueType, depth+1, elems+2); e != nil {
				e.names = append(e.names, "value")
				return e
			}
		default: // a leaf
			*leaves++
			switch {
			case elems > MaxColumnDepth:
				return &levelErr{msg: fmt.Sprintf("lies %d Parquet levels deep, more than the %d a Parquet file supports (nesting too deep)", elems, MaxColumnDepth)}
			case *leaves > MaxLeafColumns:
				return &levelErr{msg: fmt.Sprintf("schema has more than %d leaf columns, the most a Parquet file supports", MaxLeafColumns)}
			}
		}
		return nil
	}
	if le := walk(t, 0, 0); le != nil {
		return le.err()
	}
	return nil
}

func validateWriteStruct(s *StructType, path string) error {
	seen := make(map[string]bool, len(s.Fields))
	for _, f := range s.Fields {
		fp := joinPath(path, f.Name)
		if f.Name == "" {
			return fmt.Errorf("%w: empty column name in %s", ErrSchema, orRoot(path))
		}
		k := strings.ToLower(f.Name)
		if seen[k] {
			return fmt.Errorf("%w: duplicate column %s", ErrSchema, fp)
		}
		seen[k] = true
		if err := validateWriteType(f.Type, fp); err != nil {
			return err
		}
	}
	return nil
}

func validateWriteType(t DataType, path string) error {
	switch t := t.(type) {
	case PrimitiveType:
		if t == TypeVariant {
			return fmt.Errorf("%w: column %s: writing type variant is not supported", ErrSchema, path)
		}
		if !knownPrimitive(t) {
			return fmt.Errorf("%w: column %s: unknown type %q", ErrSchema, path, string(t))
		}
	case DecimalType:
		if err := ValidateDecimal(t); err != nil {
			return fmt.Errorf("column %s: %w", path, err)
		}
	case *StructType:
		if t == nil {
			return fmt.Errorf("%w: column %s: nil struct", ErrSchema, path)
		}
		return validateWriteStruct(t, path)
	case *ArrayType:
		if t == nil {
			return fmt.Errorf("%w: column %s: nil array", ErrSchema, path)
		}
		return validateWriteType(t.ElementType, joinPath(path, "element"))
	case *MapType:
		if t == nil {
			return fmt.Errorf("%w: column %s: nil map", ErrSchema, path)
		}
		if err := validateWriteType(t.KeyType, joinPath(path, "key")); err != nil {
			return err
		}
		return validateWriteType(t.ValueType, joinPath(path, "value"))
	default:
		return fmt.Errorf("%w: column %s: unknown type %T", ErrSchema, path, t)
	}
	return nil
}
