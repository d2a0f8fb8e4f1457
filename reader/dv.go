package reader

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/google/uuid"

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

// dvFileKey is the storage key of an on-disk DV: for storageType 'u' the
// pathOrInlineDv is a random prefix followed by a 20-character Z85 UUID, and
// the file is <prefix>/deletion_vector_<uuid>.bin under the table root; for
// 'p' it is an absolute path (resolved inside the table root).
func dvFileKey(tableURL string, d *txlog.DeletionVector) (string, error) {
	switch d.StorageType {
	case "u":
		s := d.PathOrInlineDV
		if len(s) < 20 {
			return "", fmt.Errorf("storageType u: %q is shorter than a Z85 UUID", s)
		}
		prefix, enc := s[:len(s)-20], s[len(s)-20:]
		raw, err := z85Decode(enc)
		if err != nil {
			return "", fmt.Errorf("storageType u: %w", err)
		}
		id, err := uuid.FromBytes(raw)
		if err != nil {
			return "", fmt.Errorf("storageType u: %w", err)
		}
		name := "deletion_vector_" + id.String() + ".bin"
		if prefix != "" {
			name = prefix + "/" + name
		}
		return name, nil
	case "p":
		return txlog.ResolvePath(tableURL, d.PathOrInlineDV)
	}
	return "", fmt.Errorf("unknown storageType %q", d.StorageType)
}

// loadDeletionVector reads and checks the DV of a data file. Errors wrap
// ErrCorruptDeletionVector and name the data file.
func loadDeletionVector(ctx context.Context, store storage.Store, dataPath string, d *txlog.DeletionVector) (*deletionVector, error) {
	if d == nil {
		return nil, nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: data file %s (%s): %s", ErrCorruptDeletionVector, dataPath, d.UniqueID(), fmt.Sprintf(format, args...))
	}
	var data []byte
	switch d.StorageType {
	case "i":
		raw, err := z85Decode(d.PathOrInlineDV)
		if err != nil {
			return nil, fail("inline: %v", err)
		}
		if int(d.SizeInBytes) > len(raw) || d.SizeInBytes < 0 {
			return nil, fail("inline: sizeInBytes %d exceeds the %d decoded bytes", d.SizeInBytes, len(raw))
		}
		data = raw[:d.SizeInBytes]
	case "u", "p":
		key, err := dvFileKey(store.URL(), d)
		if err != nil {
			return nil, fail("%v", err)
		}
		off := int64(1) // after the format version byte
		if d.Offset != nil {
			off = int64(*d.Offset)
		}
		// Check the file's format version (byte 0).
		if err := checkDVFileVersion(ctx, store, key); err != nil {
			return nil, fail("%s: %v", key, err)
		}
		// <dataSize: 4 bytes BE> <bitmapData> <CRC-32 of bitmapData: 4 bytes BE>
		n := int64(d.SizeInBytes) + 8
		rc, err := store.NewRangeReader(ctx, key, off, n)
		if err != nil {
			return nil, fmt.Errorf("%w: data file %s: read %s: %w", ErrCorruptDeletionVector, dataPath, key, err)
		}
		buf, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: data file %s: read %s: %w", ErrCorruptDeletionVector, dataPath, key, err)
		}
		if int64(len(buf)) != n {
			return nil, fail("%s: %d bytes at offset %d, want %d", key, len(buf), off, n)
		}
		if size := binary.BigEndian.Uint32(buf); int64(size) != int64(d.SizeInBytes) {
			return nil, fail("%s: dataSize %d at offset %d, descriptor says %d", key, size, off, d.SizeInBytes)
		}
		data = buf[4 : 4+d.SizeInBytes]
		if sum, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(buf[4+d.SizeInBytes:]); sum != want {
			return nil, fail("%s: checksum %08x, stored %08x", key, sum, want)
		}
	default:
		return nil, fail("unknown storageType %q", d.StorageType)
	}
	dv, err := parseDeletionVector(data)
	if err != nil {
		return nil, fail("%v", err)
	}
	if d.Cardinality >= 0 && dv.Cardinality() != d.Cardinality {
		return nil, fail("holds %d rows, descriptor cardinality %d", dv.Cardinality(), d.Cardinality)
	}
	return dv, nil
}

func checkDVFileVersion(ctx context.Context, store storage.Store, key string) error {
	rc, err := store.NewRangeReader(ctx, key, 0, 1)
	if err != nil {
		return err
	}
	defer rc.Close()
	var b [1]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return err
	}
	if b[0] != 1 {
		return fmt.Errorf("format version %d, want 1", b[0])
	}
	return nil
}

// parseDeletionVector parses a serialized deletion vector
// (parquetio.ParseDeletionVector).
func parseDeletionVector(data []byte) (*deletionVector, error) {
	return parquetio.ParseDeletionVector(data)
}
