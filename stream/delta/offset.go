package delta

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Offset is Spark's DeltaSourceOffset (delta-io/delta
// spark/src/main/scala/org/apache/spark/sql/delta/sources/DeltaSourceOffset.scala),
// the JSON text this source stores in offsets/N:
//
//	{"sourceVersion":1,"reservoirId":"<table id>","reservoirVersion":V,"index":I,"isStartingVersion":false}
//
// It names the position just after the last file read: file I of version V,
// where I indexes the adds of commit V with dataChange=true in commit order,
// or, when IsStartingVersion, the live files of snapshot V sorted by
// (modificationTime, path) as DeltaSourceSnapshot sorts them.
// Index -1 (BaseIndex) is the position before the first file of V; an
// offset (V+1, -1, false) says everything up to and including V was read.
type Offset struct {
	SourceVersion     int    `json:"sourceVersion"`     // offset format version (1)
	ReservoirID       string `json:"reservoirId"`       // the table id (metaData.id)
	ReservoirVersion  int64  `json:"reservoirVersion"`  // the table version of the position
	Index             int64  `json:"index"`             // file index inside that version (-1: before its first file)
	IsStartingVersion bool   `json:"isStartingVersion"` // true while in the starting snapshot
}

// Offset constants of DeltaSourceOffset.scala.
const (
	// SourceVersion is the sourceVersion this package writes (VERSION_1).
	SourceVersion = 1
	// maxSourceVersion is the newest sourceVersion read (VERSION_3, which
	// adds the metadata-change indexes below).
	maxSourceVersion = 3
	// BaseIndex is the index before the first file of a version.
	BaseIndex = -1
	// metadataChangeIndex and postMetadataChangeIndex are the indexes
	// Delta 3 (sourceVersion 3) uses around a schema change of a version;
	// both lie before the version's first file.
	metadataChangeIndex     = -20
	postMetadataChangeIndex = -19
	// baseIndexV3 is Delta 3's in-memory base index (BASE_INDEX_V3),
	// written as -1 under sourceVersion 1.
	baseIndexV3 = -100
	// reservedSourceVersion is VERSION_2, which Delta refuses.
	reservedSourceVersion = 2
)

// String renders the offset as Spark's Jackson serializer does, fields in
// declaration order.
func (o Offset) String() string {
	b, _ := json.Marshal(o) // plain fields: cannot fail
	return string(b)
}

// ParseOffset reads a DeltaSourceOffset of sourceVersion 1 or 3 as Delta's
// DeltaSourceOffset.Deserializer does: sourceVersion 2 is reserved and
// refused, and so is index -1 under sourceVersion 3 (Delta asserts it: its
// version-3 base index is -100, read here as BaseIndex). Delta 3's
// metadata-change indexes (-20, -19) are read as BaseIndex: they lie before
// the version's first file. The result has SourceVersion 1, the version
// Delta's serializer writes for such a position, so String renders an
// offset Delta reads. Anything else fails with an error wrapping
// ErrBadOffset.
func ParseOffset(s string) (Offset, error) {
	var raw struct {
		SourceVersion     *int    `json:"sourceVersion"`
		ReservoirID       *string `json:"reservoirId"`
		ReservoirVersion  *int64  `json:"reservoirVersion"`
		Index             *int64  `json:"index"`
		IsStartingVersion *bool   `json:"isStartingVersion"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &raw); err != nil {
		return Offset{}, fmt.Errorf("%w: %q: %w", ErrBadOffset, s, err)
	}
	if raw.SourceVersion == nil || raw.ReservoirID == nil || raw.ReservoirVersion == nil || raw.Index == nil || raw.IsStartingVersion == nil {
		return Offset{}, fmt.Errorf("%w: %q: want sourceVersion, reservoirId, reservoirVersion, index and isStartingVersion", ErrBadOffset, s)
	}
	if *raw.SourceVersion < 1 || *raw.SourceVersion > maxSourceVersion || *raw.SourceVersion == reservedSourceVersion {
		return Offset{}, fmt.Errorf("%w: %q: sourceVersion %d (this version reads 1 and 3; 2 is reserved)", ErrBadOffset, s, *raw.SourceVersion)
	}
	if *raw.SourceVersion == maxSourceVersion && *raw.Index == BaseIndex {
		return Offset{}, fmt.Errorf("%w: %q: index -1 under sourceVersion 3 (whose base index is %d)", ErrBadOffset, s, baseIndexV3)
	}
	o := Offset{SourceVersion: SourceVersion, ReservoirID: *raw.ReservoirID, ReservoirVersion: *raw.ReservoirVersion,
		Index: *raw.Index, IsStartingVersion: *raw.IsStartingVersion}
	if o.Index == metadataChangeIndex || o.Index == postMetadataChangeIndex || o.Index == baseIndexV3 {
		o.Index = BaseIndex
	}
	if o.ReservoirVersion < 0 || o.Index < BaseIndex {
		return Offset{}, fmt.Errorf("%w: %q: reservoirVersion %d, index %d", ErrBadOffset, s, o.ReservoirVersion, o.Index)
	}
	return o, nil
}

// before reports whether position (v, i) of o comes before p's.
func (o Offset) before(p Offset) bool {
	if o.ReservoirVersion != p.ReservoirVersion {
		return o.ReservoirVersion < p.ReservoirVersion
	}
	return o.Index < p.Index
}
