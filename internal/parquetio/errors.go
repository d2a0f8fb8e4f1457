package parquetio

import "errors"

var (
	// ErrCorruptFile: a Parquet file cannot be read.
	ErrCorruptFile = errors.New("parquetio: corrupt or unreadable Parquet file")
	// ErrUnsupported: a Parquet physical/logical type or encoding we cannot read.
	ErrUnsupported = errors.New("parquetio: unsupported")
	// ErrOptions: invalid WriteOptions.
	ErrOptions = errors.New("parquetio: invalid options")
	// ErrPartitionPath: a directory is not a Hive-style partition path.
	ErrPartitionPath = errors.New("parquetio: invalid partition path")
)
