package reader

import (
	"context"
	"fmt"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

// Deletion vectors (PROTOCOL.md, "Deletion Vectors", "Deletion Vector
// Format", "Deletion Vector File Storage Format").

// dvMagic starts every serialized deletion vector (little endian).
const dvMagic = parquetio.DVMagic

// deletionVector is a set of deleted row indexes (parquetio's codec).
type deletionVector = parquetio.DeletionVector

func z85Decode(s string) ([]byte, error) { return parquetio.Z85Decode(s) }

// dvDescriptor is d for parquetio's deletion-vector loader.
func dvDescriptor(d *txlog.DeletionVector) parquetio.DVDescriptor {
	return parquetio.DVDescriptor{StorageType: d.StorageType, PathOrInlineDV: d.PathOrInlineDV, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
}

// dvFileKey is the storage key of an on-disk DV (parquetio.DVFileKey; a
// 'p' path is resolved inside the table root).
func dvFileKey(tableURL string, d *txlog.DeletionVector) (string, error) {
	key, _, err := parquetio.DVFileKey(dvDescriptor(d), func(p string) (string, error) { return txlog.ResolvePath(tableURL, p) })
	return key, err
}

// loadDeletionVector reads and checks the DV of a data file
// (parquetio.LoadDV). Errors wrap ErrCorruptDeletionVector and name the
// data file.
func loadDeletionVector(ctx context.Context, store storage.Store, dataPath string, d *txlog.DeletionVector) (*deletionVector, error) {
	if d == nil {
		return nil, nil
	}
	dv, err := parquetio.LoadDV(ctx, store, dvDescriptor(d), func(p string) (string, error) { return txlog.ResolvePath(store.URL(), p) })
	if err != nil {
		return nil, fmt.Errorf("%w: data file %s (%s): %w", ErrCorruptDeletionVector, dataPath, d.UniqueID(), err)
	}
	return dv, nil
}

// parseDeletionVector parses a serialized deletion vector
// (parquetio.ParseDeletionVector).
func parseDeletionVector(data []byte) (*deletionVector, error) {
	return parquetio.ParseDeletionVector(data)
}
