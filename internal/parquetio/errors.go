package parquetio

import (
	"errors"

	"github.com/lakesink/lakesink/storage"
)

var (
	// ErrCorruptFile: a Parquet file cannot be read.
	ErrCorruptFile = storage.MarkCorrupt(errors.New("corrupt or unreadable Parquet file"))
	// ErrUnsupported: a Parquet physical/logical type or encoding we cannot read.
	ErrUnsupported = storage.MarkCorrupt(errors.New("unsupported"))
	// ErrOptions: invalid WriteOptions.
	ErrOptions = errors.New("invalid options")
	// ErrPartitionPath: a directory is not a Hive-style partition path.
	ErrPartitionPath = errors.New("invalid partition path")
)
