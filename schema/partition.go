package schema

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
