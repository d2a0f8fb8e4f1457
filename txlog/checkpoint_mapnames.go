package txlog

import (
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// Conventional names of a Parquet MAP's repeated group and its two fields
// (Parquet LogicalTypes.md, "Maps").
const (
	mapGroupName = "key_value"
	mapKeyName   = "key"
	mapValueName = "value"
)

// conventionalMapNames returns s with the repeated group of every MAP (or
// MAP_KEY_VALUE) group renamed key_value and its fields key and value, by
// position (s itself when every name is conventional). Parquet's LogicalTypes.md
// ("Maps", Backward-compatibility rules) says the names "may not be used in
// existing data and should not be enforced as errors when reading", key
// and value being identified by position; delta-rs 0.17 wrote its
// checkpoints' maps (partitionValues, tags, configuration, format.options)
// as a group named "entries", and arrow-rs names the fields "keys" and
// "values". parquet-go matches a file's columns to a Go struct by path, so
// under those names every map read as null: the partition values and the
// table properties were lost.
//
// The leaf columns keep their order and levels, so a row group of the file
// reads under the returned schema unchanged (see withSchema).
func conventionalMapNames(s *parquet.Schema) *parquet.Schema {
	fields, changed := renameMapFields(s, false)
	if !changed {
		return s
	}
	return parquet.NewSchema(s.Name(), &renamedNode{Node: s, fields: fields})
}

// renameMapFields returns n's fields with the map naming rule applied below
// n; inMap says n is a MAP group whose single field is its key/value group.
func renameMapFields(n parquet.Node, inMap bool) ([]parquet.Field, bool) {
	fields := n.Fields()
	out := make([]parquet.Field, len(fields))
	changed := false
	for i, f := range fields {
		name := f.Name()
		if inMap && len(fields) == 1 && f.Repeated() && !f.Leaf() {
			name = mapGroupName
		}
		var sub []parquet.Field
		subChanged := false
		if !f.Leaf() {
			sub, subChanged = renameMapFields(f, isMapGroup(f))
			if name == mapGroupName && inMap {
				// key first, then value (LogicalTypes.md: by position).
				for j, want := range []string{mapKeyName, mapValueName} {
					if j < len(sub) && sub[j].Name() != want {
						sub[j] = &renamedField{Field: sub[j], name: want, fields: sub[j].Fields()}
						subChanged = true
					}
				}
			}
		}
		if name != f.Name() || subChanged {
			out[i] = &renamedField{Field: f, name: name, fields: sub}
			changed = true
		} else {
			out[i] = f
		}
	}
	return out, changed
}

// isMapGroup reports whether n is annotated MAP or, in legacy files,
// MAP_KEY_VALUE (which LogicalTypes.md says to read as MAP).
func isMapGroup(n parquet.Node) bool {
	if n.Leaf() {
		return false
	}
	t := n.Type()
	if lt := t.LogicalType(); lt != nil {
		if _, ok := lt.Value.(*format.MapType); ok {
			return true
		}
	}
	ct := t.ConvertedType()
	return ct != nil && (*ct == deprecated.Map || *ct == deprecated.MapKeyValue)
}

// renamedNode is a group node with its fields replaced.
type renamedNode struct {
	parquet.Node
	fields []parquet.Field
}

func (n *renamedNode) Fields() []parquet.Field { return n.fields }

// renamedField is a field under another name (fields is nil for a leaf).
type renamedField struct {
	parquet.Field
	name   string
	fields []parquet.Field
}

func (f *renamedField) Name() string { return f.name }

func (f *renamedField) Fields() []parquet.Field {
	if f.fields == nil {
		return f.Field.Fields()
	}
	return f.fields
}

// withSchema is a row group read under a schema with the same leaf
// columns (conventionalMapNames).
type withSchema struct {
	parquet.RowGroup
	schema *parquet.Schema
}

func (g withSchema) Schema() *parquet.Schema { return g.schema }
