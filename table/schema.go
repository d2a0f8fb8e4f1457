package table

import (
	"fmt"

	"github.com/lakesink/lakesink/schema"
)

// fitSchema checks that a batch's schema fits the table's: every batch column
// exists in the table with the same type, or is new and nullable and merge is
// on; with merge, a struct column (also inside arrays and maps) may also gain
// nested fields, when the batch's type is the merged one (schema.MergeSchema:
// the table's fields first, in order, then the new ones), as Delta's
// mergeSchema evolves nested structs. Table columns missing from the batch
// must be nullable (written as null). It returns the schema to write with
// (the merged one when columns were added).
func fitSchema(tableSchema, batchSchema *schema.StructType, merge bool) (*schema.StructType, bool, error) {
	for _, f := range tableSchema.Fields {
		if _, ok := batchSchema.Field(f.Name); !ok && !f.Nullable {
			return nil, false, fmt.Errorf("%w: column %q is not nullable and missing from the batch", ErrSchemaMismatch, f.Name)
		}
	}
	added := false
	for _, f := range batchSchema.Fields {
		tf, ok := tableSchema.Field(f.Name)
		if !ok {
			if !merge {
				return nil, false, fmt.Errorf("%w: column %q (%s) is not in the table schema (set MergeSchema to add it)", ErrSchemaMismatch, f.Name, f.Type.TypeName())
			}
			added = true
			continue
		}
		if !schema.TypesEqual(tf.Type, f.Type) {
			if merge {
				added = true // nested fields added: checked against the merged type below
				continue
			}
			return nil, false, fmt.Errorf("%w: column %q is %s in the table but %s in the batch", ErrSchemaMismatch, f.Name, tf.Type.TypeName(), f.Type.TypeName())
		}
	}
	if !added {
		return tableSchema, false, nil
	}
	merged, err := schema.MergeSchema(tableSchema, batchSchema)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrSchemaMismatch, err)
	}
	for _, f := range batchSchema.Fields {
		if mf, _ := merged.Field(f.Name); !schema.TypesEqual(mf.Type, f.Type) {
			return nil, false, fmt.Errorf("%w: column %q is %s after merging the table's schema but %s in the batch (nested fields must follow the table's, new ones last)",
				ErrSchemaMismatch, f.Name, mf.Type.TypeName(), f.Type.TypeName())
		}
	}
	return merged, true, nil
}

// sameFields reports whether the batch schema b has the fields of the
// table schema sch in the same order, with the same types and nullability
// (conform then keeps the records as they are).
func sameFields(b, sch *schema.StructType) bool {
	if len(b.Fields) != len(sch.Fields) {
		return false
	}
	for i, f := range sch.Fields {
		g := b.Fields[i]
		if g.Name != f.Name || g.Nullable != f.Nullable || schema.FormatType(g.Type) != schema.FormatType(f.Type) {
			return false
		}
	}
	return true
}

// conform returns the batch with its columns in the order of schema (missing
// columns null). The rows are shared when the order already matches.
func conform(b *schema.Batch, sch *schema.StructType) (*schema.Batch, error) {
	idx := make([]int, len(sch.Fields))
	same := len(sch.Fields) == len(b.Schema.Fields)
	for i, f := range sch.Fields {
		idx[i] = b.Schema.FieldIndex(f.Name)
		if idx[i] != i {
			same = false
		}
	}
	if same {
		return &schema.Batch{Schema: sch, Rows: b.Rows}, nil
	}
	rows := make([][]any, len(b.Rows))
	for r, row := range b.Rows {
		if len(row) != len(b.Schema.Fields) {
			return nil, &schema.RowError{Row: r, Err: fmt.Errorf("%w: row has %d values for %d columns", schema.ErrRowMismatch, len(row), len(b.Schema.Fields))}
		}
		out := make([]any, len(sch.Fields))
		for i, j := range idx {
			if j >= 0 {
				out[i] = row[j]
			}
		}
		rows[r] = out
	}
	return &schema.Batch{Schema: sch, Rows: rows}, nil
}
