package schema

import (
	"fmt"
	"strings"
)

// PartitionValue is one column=value pair of a Hive-style partition
// directory (e.g. country=FR), in the order of the directories. Value is the
// unescaped text (Spark's ExternalCatalogUtils.unescapePathName); nil is a
// null (the directory __HIVE_DEFAULT_PARTITION__).
type PartitionValue struct {
	// Column is the partition column's name.
	Column string
	// Value is the value as text, nil for null.
	Value *string
}

// PartitionProblem is what is wrong with a partition column
// (*PartitionColumnError).
type PartitionProblem int

const (
	// PartitionColumnUnknown: the column is not a top-level column of the
	// schema.
	PartitionColumnUnknown PartitionProblem = iota + 1
	// PartitionColumnNested: the column has a struct, array or map type;
	// a partition value is one primitive value (PROTOCOL.md, "Partition
	// Value Serialization").
	PartitionColumnNested
	// PartitionColumnsAll: every column of the schema is a partition column,
	// leaving the data files none (Spark refuses it: "Cannot use all
	// columns for partition columns").
	PartitionColumnsAll
)

// PartitionColumnError is a partition column that a schema cannot have. The
// table writer, the file sink and the Parquet writer return it (wrapped by
// their ErrInvalidOptions or ErrSchema), so that a caller can word it with
// its own names (a CLI flag) through errors.As.
type PartitionColumnError struct {
	Problem PartitionProblem // what is wrong with Column
	Column  string           // the partition column; "" for PartitionColumnsAll
	Type    string           // the column's type (PartitionColumnNested), as FormatType
	Columns []string         // the schema's top-level columns, in order
}

// Error implements error: `partition column "x" is not in the schema
// (columns: a, b)`, `partition column "s" has the nested type struct<...>`,
// or "every column is a partition column; at least one data column is
// needed".
func (e *PartitionColumnError) Error() string {
	switch e.Problem {
	case PartitionColumnUnknown:
		return fmt.Sprintf("partition column %q is not in the schema (columns: %s)", e.Column, strings.Join(e.Columns, ", "))
	case PartitionColumnNested:
		return fmt.Sprintf("partition column %q has the nested type %s; a partition value is one primitive value", e.Column, e.Type)
	default:
		return "every column is a partition column; at least one data column is needed"
	}
}

// CheckPartitionColumns returns a *PartitionColumnError for the first of cols
// that s cannot partition by (not one of its top-level columns, a nested
// type), or when cols name every column of s; nil otherwise. Repeated
// names are the caller's to refuse.
func CheckPartitionColumns(s *StructType, cols []string) error {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	part := map[string]bool{}
	for _, c := range cols {
		i := s.FieldIndex(c)
		if i < 0 {
			return &PartitionColumnError{Problem: PartitionColumnUnknown, Column: c, Columns: names}
		}
		switch t := s.Fields[i].Type.(type) {
		case *StructType, *ArrayType, *MapType:
			return &PartitionColumnError{Problem: PartitionColumnNested, Column: c, Type: FormatType(t), Columns: names}
		}
		part[s.Fields[i].Name] = true
	}
	if len(cols) > 0 && len(part) == len(s.Fields) {
		return &PartitionColumnError{Problem: PartitionColumnsAll, Columns: names}
	}
	return nil
}
