package txlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/lakesink/lakesink/schema"
)

// Actions of the Delta log (PROTOCOL.md, "Actions"). Each JSON line of a
// commit file holds one action, an object with a single key naming the
// action. Every struct keeps fields it does not know in Extra, so a
// decoded commit re-encodes them: "Clients must ignore such unrecognized
// fields" (PROTOCOL.md, "Protocol Evolution"), and we also keep them. A
// Parquet checkpoint holds only the columns of the checkpoint schema, as
// Spark's do, so unknown fields of known actions are not in it; unknown
// action TYPES make Checkpoint refuse (see UnknownActionError). JSON is written without HTML escaping and with fields in the order
// Delta/Spark writes them.

// Action mirrors one JSON line of a commit file. Exactly one field is set in a
// valid line; Unknown holds top-level keys that are not known actions (kept
// raw, re-encoded verbatim).
type Action struct {
	CommitInfo         CommitInfo                 // "commitInfo": provenance of the commit (PROTOCOL.md, "Commit Provenance Information")
	Protocol           *Protocol                  // "protocol" (PROTOCOL.md, "Protocol Evolution")
	MetaData           *Metadata                  // "metaData" (PROTOCOL.md, "Change Metadata")
	Add                *Add                       // "add" (PROTOCOL.md, "Add File and Remove File")
	Remove             *Remove                    // "remove" (PROTOCOL.md, "Add File and Remove File")
	Txn                *Txn                       // "txn" (PROTOCOL.md, "Transaction Identifiers")
	DomainMetadata     *DomainMetadata            // "domainMetadata" (PROTOCOL.md, "Domain Metadata")
	CDC                *AddCDCFile                // "cdc" (PROTOCOL.md, "Add CDC File")
	CheckpointMetadata *CheckpointMetadata        // "checkpointMetadata", V2 checkpoints only (PROTOCOL.md, "Checkpoint Metadata")
	Sidecar            *Sidecar                   // "sidecar", V2 checkpoints only (PROTOCOL.md, "Sidecar File Information")
	Unknown            map[string]json.RawMessage // top-level keys that are no known action, raw
}

// Protocol is the protocol action (PROTOCOL.md, "Protocol Evolution").
// ReaderFeatures exists only for reader version 3 and WriterFeatures only for
// writer version 7; a nil slice is omitted, an empty non-nil one is written
// as [].
type Protocol struct {
	// MinReaderVersion is the lowest reader protocol version (1, 2 or 3)
	// a client must implement to read the table.
	MinReaderVersion int `json:"minReaderVersion"`
	// MinWriterVersion is the lowest writer protocol version (1 to 7) a
	// client must implement to write the table.
	MinWriterVersion int                        `json:"minWriterVersion"`
	ReaderFeatures   []string                   `json:"readerFeatures,omitzero"`
	WriterFeatures   []string                   `json:"writerFeatures,omitzero"`
	Extra            map[string]json.RawMessage `json:"-"` // unknown fields, kept raw and re-encoded
}

// Format is the metaData.format struct (PROTOCOL.md, "Format Specification").
type Format struct {
	Provider string            `json:"provider"` // the data file format: "parquet"
	Options  map[string]string `json:"options"`  // options of the format; Delta writes {}
}

// Metadata is the metaData action (PROTOCOL.md, "Change Metadata").
type Metadata struct {
	ID          string `json:"id"`                    // unique identifier of the table, a UUID; never changes
	Name        string `json:"name,omitempty"`        // user-given name of the table, "" if none
	Description string `json:"description,omitempty"` // user-given description, "" if none
	Format      Format `json:"format"`                // the data files' format
	// SchemaString is the table's schema as JSON (PROTOCOL.md, "Schema
	// Serialization Format"); Schema parses it.
	SchemaString string `json:"schemaString"`
	// PartitionColumns names the top-level columns the table is partitioned
	// by, in order; empty (written as []) for an unpartitioned table.
	PartitionColumns []string `json:"partitionColumns"`
	// Configuration holds the table properties ("delta.appendOnly", ...);
	// Snapshot.Properties parses them (PROTOCOL.md, "Table Properties").
	Configuration map[string]string `json:"configuration"`
	// CreatedTime is when the metadata was created, in milliseconds since
	// the Unix epoch; nil when absent.
	CreatedTime *int64                     `json:"createdTime,omitempty"`
	Extra       map[string]json.RawMessage `json:"-"` // unknown fields, kept raw and re-encoded
}

// DeletionVector is the deletion vector descriptor (PROTOCOL.md, "Deletion
// Vector Descriptor Schema"). Only the descriptor is modelled here.
type DeletionVector struct {
	// StorageType says where the vector is: "u" a file next to the table
	// named by a UUID (and an optional random prefix), "i" inline, "p" an
	// absolute path.
	StorageType string `json:"storageType"`
	// PathOrInlineDV is, by StorageType, the Z85-encoded prefix and UUID
	// ("u"), the Z85-encoded bitmap ("i") or the URL-encoded path ("p").
	PathOrInlineDV string `json:"pathOrInlineDv"`
	// Offset is the vector's byte offset in its file; nil for "i", which
	// has no file.
	Offset      *int32                     `json:"offset,omitempty"`
	SizeInBytes int32                      `json:"sizeInBytes"` // size of the serialized vector in bytes
	Cardinality int64                      `json:"cardinality"` // number of rows the vector marks deleted
	Extra       map[string]json.RawMessage `json:"-"`           // unknown fields, kept raw and re-encoded
}

// UniqueID is the derived uniqueId: storageType+pathOrInlineDv, plus
// "@offset" when offset is present (PROTOCOL.md, "Derived Fields").
func (dv *DeletionVector) UniqueID() string {
	if dv == nil {
		return ""
	}
	if dv.Offset == nil {
		return dv.StorageType + dv.PathOrInlineDV
	}
	return dv.StorageType + dv.PathOrInlineDV + "@" + strconv.FormatInt(int64(*dv.Offset), 10)
}

// Add is the add action (PROTOCOL.md, "Add File and Remove File").
// PartitionValues maps a partition column to its serialized value; a nil
// *string is a JSON null (a null partition value), which is kept.
// Path is the raw, URL-encoded string as written in the log.
type Add struct {
	Path             string             `json:"path"`
	PartitionValues  map[string]*string `json:"partitionValues"`
	Size             int64              `json:"size"`             // size of the data file in bytes
	ModificationTime int64              `json:"modificationTime"` // when the file was created, in milliseconds since the Unix epoch
	// DataChange is false when the file only rearranges data already in
	// the table (OPTIMIZE), so streaming readers may skip it.
	DataChange bool `json:"dataChange"`
	// Stats is the file's statistics as a JSON string (numRecords,
	// minValues, maxValues, nullCount; PROTOCOL.md, "Per-file
	// Statistics"), "" when the writer kept none.
	Stats string            `json:"stats,omitempty"`
	Tags  map[string]string `json:"tags,omitzero"` // free-form file metadata, omitted when empty
	// DeletionVector marks rows of the file as deleted; nil when none
	// (PROTOCOL.md, "Deletion Vectors").
	DeletionVector *DeletionVector `json:"deletionVector,omitempty"`
	// BaseRowID is the row ID of the file's first row (PROTOCOL.md, "Row
	// Tracking"); nil when not assigned.
	BaseRowID *int64 `json:"baseRowId,omitempty"`
	// DefaultRowCommitVersion is the version whose commit added the file,
	// the rows' commit version when they have none of their own (PROTOCOL.md,
	// "Row Tracking"); nil when not assigned.
	DefaultRowCommitVersion *int64 `json:"defaultRowCommitVersion,omitempty"`
	// ClusteringProvider names the clustering implementation that laid out
	// the file, "liquid" for Delta's (PROTOCOL.md, "Clustered Table"); ""
	// when unclustered.
	ClusteringProvider string                     `json:"clusteringProvider,omitempty"`
	Extra              map[string]json.RawMessage `json:"-"` // unknown fields, kept raw and re-encoded
}

// Remove is the remove action (PROTOCOL.md, "Add File and Remove File"):
// a tombstone for a file of an earlier add, kept in checkpoints until the
// tombstone retention (delta.deletedFileRetentionDuration) has passed.
type Remove struct {
	Path string `json:"path"` // the removed file's path, as its add wrote it (raw, URL-encoded)
	// DeletionTimestamp is when the file was removed, in milliseconds
	// since the Unix epoch; the tombstone retention
	// (delta.deletedFileRetentionDuration) counts from it.
	DeletionTimestamp *int64 `json:"deletionTimestamp,omitempty"`
	// DataChange is false when the removal only rearranges data that stays
	// in the table (OPTIMIZE).
	DataChange bool `json:"dataChange"`
	// ExtendedFileMetadata is true when PartitionValues, Size and Tags are
	// present; nil when the writer did not say.
	ExtendedFileMetadata *bool              `json:"extendedFileMetadata,omitempty"`
	PartitionValues      map[string]*string `json:"partitionValues,omitzero"` // as in the file's add; a nil *string is a null value
	Size                 *int64             `json:"size,omitempty"`           // size of the file in bytes, nil when absent
	Stats                string             `json:"stats,omitempty"`          // the file's statistics as in its add, "" when absent
	Tags                 map[string]string  `json:"tags,omitzero"`            // the file's tags as in its add
	DeletionVector       *DeletionVector    `json:"deletionVector,omitempty"` // the file's deletion vector at removal, nil when none
	BaseRowID            *int64             `json:"baseRowId,omitempty"`      // as in the file's add (PROTOCOL.md, "Row Tracking")
	// DefaultRowCommitVersion is as in the file's add (PROTOCOL.md, "Row
	// Tracking").
	DefaultRowCommitVersion *int64                     `json:"defaultRowCommitVersion,omitempty"`
	Extra                   map[string]json.RawMessage `json:"-"` // unknown fields, kept raw and re-encoded
}

// Txn is the transaction identifier action (PROTOCOL.md, "Transaction
// Identifiers"). Transactions built by this package always set LastUpdated.
type Txn struct {
	AppID string `json:"appId"` // the writing application's unique identifier
	// Version is the application's last committed version (a streaming
	// query's batchId): a writer skips data for a version at or below it.
	Version int64 `json:"version"`
	// LastUpdated is when the txn was written, in milliseconds since the
	// Unix epoch; delta.setTransactionRetentionDuration expires it.
	LastUpdated *int64                     `json:"lastUpdated,omitempty"`
	Extra       map[string]json.RawMessage `json:"-"` // unknown fields, kept raw and re-encoded
}

// DomainMetadata is the domainMetadata action (PROTOCOL.md, "Domain Metadata").
type DomainMetadata struct {
	Domain string `json:"domain"` // the domain's name; "delta." domains are the protocol's own
	// Configuration is the domain's configuration, a string (usually JSON)
	// that only the domain's owner interprets.
	Configuration string                     `json:"configuration"`
	Removed       bool                       `json:"removed"` // a tombstone: the domain was removed
	Extra         map[string]json.RawMessage `json:"-"`       // unknown fields, kept raw and re-encoded
}

// AddCDCFile is the cdc action (PROTOCOL.md, "Add CDC File").
type AddCDCFile struct {
	Path            string                     `json:"path"`            // the change data file, relative to the table root (URL-encoded)
	PartitionValues map[string]*string         `json:"partitionValues"` // the file's partition values; a nil *string is a null value
	Size            int64                      `json:"size"`            // size of the file in bytes
	DataChange      bool                       `json:"dataChange"`      // always false: the changes are also in the commit's add/remove
	Tags            map[string]string          `json:"tags,omitzero"`   // free-form file metadata, omitted when empty
	Extra           map[string]json.RawMessage `json:"-"`               // unknown fields, kept raw and re-encoded
}

// CheckpointMetadata is the V2 checkpoint's checkpointMetadata action
// (PROTOCOL.md, "Checkpoint Metadata").
type CheckpointMetadata struct {
	Version int64                      `json:"version"`       // the table version the checkpoint holds
	Tags    map[string]string          `json:"tags,omitzero"` // free-form checkpoint metadata, omitted when empty
	Extra   map[string]json.RawMessage `json:"-"`             // unknown fields, kept raw and re-encoded
}

// Sidecar is the V2 checkpoint's sidecar action (PROTOCOL.md, "Sidecar File
// Information").
type Sidecar struct {
	Path             string                     `json:"path"`             // the sidecar file, relative to _delta_log/_sidecars (URL-encoded)
	SizeInBytes      int64                      `json:"sizeInBytes"`      // size of the sidecar file in bytes
	ModificationTime int64                      `json:"modificationTime"` // when the file was written, in milliseconds since the Unix epoch
	Tags             map[string]string          `json:"tags,omitzero"`    // free-form sidecar metadata, omitted when empty
	Extra            map[string]json.RawMessage `json:"-"`                // unknown fields, kept raw and re-encoded
}

// ---- JSON helpers ----

// marshalNoEscape encodes v like json.Marshal but without HTML escaping.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// appendExtra appends the extra keys (sorted) to an encoded JSON object.
func appendExtra(obj []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return obj, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := bytes.TrimSuffix(obj, []byte{'}'})
	empty := bytes.Equal(bytes.TrimSpace(out), []byte{'{'})
	for _, k := range keys {
		if !empty {
			out = append(out, ',')
		}
		empty = false
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		out = append(out, kb...)
		out = append(out, ':')
		v := extra[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// jsonKeys lists the JSON names of the exported, tagged fields of struct type t.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		keys[name] = true
	}
	return keys
}

// splitExtra decodes data into v (a pointer to a zero alias struct) and
// returns the keys that v does not know. The common case, no unknown keys,
// costs one strict decode; only objects with unknown keys are decoded twice.
func splitExtra(data []byte, v any, known map[string]bool) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err == nil {
		return nil, nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	var extra map[string]json.RawMessage
	for k, raw := range all {
		if known[k] {
			continue
		}
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[k] = raw
	}
	return extra, nil
}

type (
	protocolJSON           Protocol
	metadataJSON           Metadata
	deletionVectorJSON     DeletionVector
	addJSON                Add
	removeJSON             Remove
	txnJSON                Txn
	domainMetadataJSON     DomainMetadata
	addCDCFileJSON         AddCDCFile
	checkpointMetadataJSON CheckpointMetadata
	sidecarJSON            Sidecar
)

// Known field names per action, derived once from the struct tags (read-only).
var (
	protocolKeys           = jsonKeys(reflect.TypeFor[protocolJSON]())
	metadataKeys           = jsonKeys(reflect.TypeFor[metadataJSON]())
	deletionVectorKeys     = jsonKeys(reflect.TypeFor[deletionVectorJSON]())
	addKeys                = jsonKeys(reflect.TypeFor[addJSON]())
	removeKeys             = jsonKeys(reflect.TypeFor[removeJSON]())
	txnKeys                = jsonKeys(reflect.TypeFor[txnJSON]())
	domainMetadataKeys     = jsonKeys(reflect.TypeFor[domainMetadataJSON]())
	addCDCFileKeys         = jsonKeys(reflect.TypeFor[addCDCFileJSON]())
	checkpointMetadataKeys = jsonKeys(reflect.TypeFor[checkpointMetadataJSON]())
	sidecarKeys            = jsonKeys(reflect.TypeFor[sidecarJSON]())
)

// MarshalJSON implements json.Marshaler.
func (p Protocol) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(protocolJSON(p))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, p.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Protocol) UnmarshalJSON(data []byte) error {
	var v protocolJSON
	extra, err := splitExtra(data, &v, protocolKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*p = Protocol(v)
	return nil
}

// MarshalJSON implements json.Marshaler. Options, partitionColumns and
// configuration are always written ({} / []), as Spark does.
func (m Metadata) MarshalJSON() ([]byte, error) {
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	b, err := marshalNoEscape(metadataJSON(m))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, m.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *Metadata) UnmarshalJSON(data []byte) error {
	var v metadataJSON
	extra, err := splitExtra(data, &v, metadataKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*m = Metadata(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d DeletionVector) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(deletionVectorJSON(d))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, d.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *DeletionVector) UnmarshalJSON(data []byte) error {
	var v deletionVectorJSON
	extra, err := splitExtra(data, &v, deletionVectorKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*d = DeletionVector(v)
	return nil
}

// MarshalJSON implements json.Marshaler. partitionValues is always written.
func (a Add) MarshalJSON() ([]byte, error) {
	if a.PartitionValues == nil {
		a.PartitionValues = map[string]*string{}
	}
	b, err := marshalNoEscape(addJSON(a))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, a.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (a *Add) UnmarshalJSON(data []byte) error {
	var v addJSON
	extra, err := splitExtra(data, &v, addKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*a = Add(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (r Remove) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(removeJSON(r))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, r.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *Remove) UnmarshalJSON(data []byte) error {
	var v removeJSON
	extra, err := splitExtra(data, &v, removeKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*r = Remove(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (t Txn) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(txnJSON(t))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, t.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Txn) UnmarshalJSON(data []byte) error {
	var v txnJSON
	extra, err := splitExtra(data, &v, txnKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*t = Txn(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d DomainMetadata) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(domainMetadataJSON(d))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, d.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *DomainMetadata) UnmarshalJSON(data []byte) error {
	var v domainMetadataJSON
	extra, err := splitExtra(data, &v, domainMetadataKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*d = DomainMetadata(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (c AddCDCFile) MarshalJSON() ([]byte, error) {
	if c.PartitionValues == nil {
		c.PartitionValues = map[string]*string{}
	}
	b, err := marshalNoEscape(addCDCFileJSON(c))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, c.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *AddCDCFile) UnmarshalJSON(data []byte) error {
	var v addCDCFileJSON
	extra, err := splitExtra(data, &v, addCDCFileKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*c = AddCDCFile(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (c CheckpointMetadata) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(checkpointMetadataJSON(c))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, c.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *CheckpointMetadata) UnmarshalJSON(data []byte) error {
	var v checkpointMetadataJSON
	extra, err := splitExtra(data, &v, checkpointMetadataKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*c = CheckpointMetadata(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (s Sidecar) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(sidecarJSON(s))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, s.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Sidecar) UnmarshalJSON(data []byte) error {
	var v sidecarJSON
	extra, err := splitExtra(data, &v, sidecarKeys)
	if err != nil {
		return err
	}
	v.Extra = extra
	*s = Sidecar(v)
	return nil
}

// ---- commitInfo ----

// OperationParameters are the parameters of a commit's operation, written
// as commitInfo.operationParameters (PROTOCOL.md, "Commit Provenance
// Information"; Spark's DeltaOperations.Operation.parameters): by key, a
// string is written as it is and any other value as its JSON text, as
// Spark stores them (e.g. {"mode": "Append", "partitionBy": []string{"day"}}
// is written {"mode":"Append","partitionBy":"[\"day\"]"}). It is the one
// type for them: Transaction.Commit, table.WriteOptions,
// table.MergeOptions and sink.Options take it.
type OperationParameters map[string]any

// CommitInfo is the open commitInfo object (PROTOCOL.md, "Commit Provenance
// Information"): any JSON object. Values are kept raw so that numbers and
// nested objects survive a round trip; helpers read the well-known fields.
// A nil CommitInfo means "no commitInfo action".
type CommitInfo map[string]json.RawMessage

// commitInfoOrder is the order in which Delta writes the known commitInfo
// fields (delta-io/delta actions.scala, CommitInfo); other keys follow sorted.
var commitInfoOrder = []string{
	"inCommitTimestamp", "timestamp", "userId", "userName", "operation",
	"operationParameters", "job", "notebook", "clusterId", "readVersion",
	"isolationLevel", "isBlindAppend", "operationMetrics", "userMetadata",
	"tags", "engineInfo", "txnId",
}

// MarshalJSON writes the known keys in Delta's order, then the rest sorted.
func (c CommitInfo) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	out := []byte{'{'}
	first := true
	write := func(k string, v json.RawMessage) error {
		if !first {
			out = append(out, ',')
		}
		first = false
		kb, err := marshalNoEscape(k)
		if err != nil {
			return err
		}
		out = append(out, kb...)
		out = append(out, ':')
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		out = append(out, v...)
		return nil
	}
	seen := make(map[string]bool, len(c))
	for _, k := range commitInfoOrder {
		if v, ok := c[k]; ok {
			seen[k] = true
			if err := write(k, v); err != nil {
				return nil, err
			}
		}
	}
	rest := make([]string, 0, len(c))
	for k := range c {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		if err := write(k, c[k]); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// Set stores v (JSON-encoded without HTML escaping) under key.
func (c CommitInfo) Set(key string, v any) error {
	b, err := marshalNoEscape(v)
	if err != nil {
		return fmt.Errorf("encode commitInfo.%s: %w", key, err)
	}
	c[key] = b
	return nil
}

// Int64 returns the integer value of key, if present and a number.
func (c CommitInfo) Int64(key string) (int64, bool) {
	raw, ok := c[key]
	if !ok {
		return 0, false
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	if f, err := n.Float64(); err == nil {
		return int64(f), true
	}
	return 0, false
}

// String returns the string value of key, if present and a string.
func (c CommitInfo) String(key string) (string, bool) {
	raw, ok := c[key]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// Timestamp is commitInfo.timestamp (ms since the epoch).
func (c CommitInfo) Timestamp() (int64, bool) { return c.Int64("timestamp") }

// InCommitTimestamp is commitInfo.inCommitTimestamp (ms since the epoch;
// PROTOCOL.md, "In-Commit Timestamps").
func (c CommitInfo) InCommitTimestamp() (int64, bool) { return c.Int64("inCommitTimestamp") }

// Operation is commitInfo.operation ("WRITE", "STREAMING UPDATE", ...).
func (c CommitInfo) Operation() string { s, _ := c.String("operation"); return s }

// TxnID is commitInfo.txnId, the unique id of the committing transaction.
func (c CommitInfo) TxnID() string { s, _ := c.String("txnId"); return s }

// ReadVersion is commitInfo.readVersion.
func (c CommitInfo) ReadVersion() (int64, bool) { return c.Int64("readVersion") }

// IsBlindAppend is commitInfo.isBlindAppend.
func (c CommitInfo) IsBlindAppend() bool {
	var b bool
	if raw, ok := c["isBlindAppend"]; ok {
		_ = json.Unmarshal(raw, &b)
	}
	return b
}

// StringMap decodes an object of key (e.g. operationParameters,
// operationMetrics) into strings; non-string values are kept as their JSON text.
func (c CommitInfo) StringMap(key string) map[string]string {
	raw, ok := c[key]
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out
}

// ---- Action ----

// actionKeys in the order Action.MarshalJSON writes them.
const (
	keyCommitInfo         = "commitInfo"
	keyProtocol           = "protocol"
	keyMetaData           = "metaData"
	keyAdd                = "add"
	keyRemove             = "remove"
	keyTxn                = "txn"
	keyDomainMetadata     = "domainMetadata"
	keyCDC                = "cdc"
	keyCheckpointMetadata = "checkpointMetadata"
	keySidecar            = "sidecar"
)

// MarshalJSON writes the set actions as one JSON object (normally exactly one
// key), without HTML escaping.
func (a Action) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	n := 0
	add := func(key string, v any) error {
		b, err := marshalNoEscape(v)
		if err != nil {
			return fmt.Errorf("encode %s: %w", key, err)
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, '"')
		out = append(out, key...)
		out = append(out, '"', ':')
		out = append(out, b...)
		return nil
	}
	type kv struct {
		key string
		set bool
		v   any
	}
	for _, e := range []kv{
		{keyCommitInfo, a.CommitInfo != nil, a.CommitInfo},
		{keyProtocol, a.Protocol != nil, a.Protocol},
		{keyMetaData, a.MetaData != nil, a.MetaData},
		{keyAdd, a.Add != nil, a.Add},
		{keyRemove, a.Remove != nil, a.Remove},
		{keyTxn, a.Txn != nil, a.Txn},
		{keyDomainMetadata, a.DomainMetadata != nil, a.DomainMetadata},
		{keyCDC, a.CDC != nil, a.CDC},
		{keyCheckpointMetadata, a.CheckpointMetadata != nil, a.CheckpointMetadata},
		{keySidecar, a.Sidecar != nil, a.Sidecar},
	} {
		if e.set {
			if err := add(e.key, e.v); err != nil {
				return nil, err
			}
		}
	}
	obj := append(out, '}')
	return appendExtra(obj, a.Unknown)
}

// errNoAction: a line that is an empty object or holds only nulls.
var errNoAction = fmt.Errorf("line holds no action")

// UnmarshalJSON decodes one line. Keys whose value is null are ignored (the
// JSON form of an absent action); unknown keys go to Unknown. A line without
// any non-null key is an error.
func (a *Action) UnmarshalJSON(data []byte) error {
	if decodeActionFast(data, a) {
		return a.validate()
	}
	return a.unmarshalSlow(data)
}

// decodeActionFast decodes the common line in one pass: every top-level
// key a known action named exactly, at most once, and every action object
// without fields its struct does not know (a strict decode, the one
// splitExtra tries first). Anything else (an unknown key, an unknown
// field, a duplicate, a null, invalid JSON) returns false with *a zeroed,
// and unmarshalSlow decides, so both paths give the same Action and the
// same errors. It saves the generic map of the top level and a second
// scan and decode of each action.
func decodeActionFast(data []byte, a *Action) bool {
	*a = Action{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var seen uint16
	ok := func() bool {
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return false
			}
			k, _ := t.(string)
			var bit uint16
			switch k {
			case keyCommitInfo:
				bit, err = 1<<0, dec.Decode(&a.CommitInfo)
				if a.CommitInfo == nil {
					return false
				}
			case keyProtocol:
				var v *protocolJSON
				bit, err = 1<<1, dec.Decode(&v)
				a.Protocol = (*Protocol)(v)
			case keyMetaData:
				var v *metadataJSON
				bit, err = 1<<2, dec.Decode(&v)
				a.MetaData = (*Metadata)(v)
			case keyAdd:
				var v *addJSON
				bit, err = 1<<3, dec.Decode(&v)
				a.Add = (*Add)(v)
			case keyRemove:
				var v *removeJSON
				bit, err = 1<<4, dec.Decode(&v)
				a.Remove = (*Remove)(v)
			case keyTxn:
				var v *txnJSON
				bit, err = 1<<5, dec.Decode(&v)
				a.Txn = (*Txn)(v)
			case keyDomainMetadata:
				var v *domainMetadataJSON
				bit, err = 1<<6, dec.Decode(&v)
				a.DomainMetadata = (*DomainMetadata)(v)
			case keyCDC:
				var v *addCDCFileJSON
				bit, err = 1<<7, dec.Decode(&v)
				a.CDC = (*AddCDCFile)(v)
			case keyCheckpointMetadata:
				var v *checkpointMetadataJSON
				bit, err = 1<<8, dec.Decode(&v)
				a.CheckpointMetadata = (*CheckpointMetadata)(v)
			case keySidecar:
				var v *sidecarJSON
				bit, err = 1<<9, dec.Decode(&v)
				a.Sidecar = (*Sidecar)(v)
			default:
				return false
			}
			if err != nil || seen&bit != 0 {
				return false
			}
			seen |= bit
		}
		return seen != 0
	}()
	if ok {
		// the closing brace, then nothing
		if t, err := dec.Token(); err != nil || t != json.Delim('}') {
			ok = false
		} else if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			ok = false
		}
	}
	if !ok {
		*a = Action{}
		return false
	}
	// A null action value decodes as a nil pointer above: the slow path
	// ignores such keys, and a line of nulls only is an error there.
	if (seen&(1<<1) != 0 && a.Protocol == nil) || (seen&(1<<2) != 0 && a.MetaData == nil) ||
		(seen&(1<<3) != 0 && a.Add == nil) || (seen&(1<<4) != 0 && a.Remove == nil) ||
		(seen&(1<<5) != 0 && a.Txn == nil) || (seen&(1<<6) != 0 && a.DomainMetadata == nil) ||
		(seen&(1<<7) != 0 && a.CDC == nil) || (seen&(1<<8) != 0 && a.CheckpointMetadata == nil) ||
		(seen&(1<<9) != 0 && a.Sidecar == nil) {
		*a = Action{}
		return false
	}
	return true
}

// unmarshalSlow decodes any line: the top level as a map, then each action.
func (a *Action) unmarshalSlow(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	if top == nil {
		return errNoAction
	}
	*a = Action{}
	n := 0
	for k, raw := range top {
		if isJSONNull(raw) {
			continue
		}
		n++
		var err error
		switch k {
		case keyCommitInfo:
			var ci CommitInfo
			if err = json.Unmarshal(raw, &ci); err == nil && ci == nil {
				err = fmt.Errorf("commitInfo is not an object")
			}
			a.CommitInfo = ci
		case keyProtocol:
			a.Protocol = new(Protocol)
			err = json.Unmarshal(raw, a.Protocol)
		case keyMetaData:
			a.MetaData = new(Metadata)
			err = json.Unmarshal(raw, a.MetaData)
		case keyAdd:
			a.Add = new(Add)
			err = json.Unmarshal(raw, a.Add)
		case keyRemove:
			a.Remove = new(Remove)
			err = json.Unmarshal(raw, a.Remove)
		case keyTxn:
			a.Txn = new(Txn)
			err = json.Unmarshal(raw, a.Txn)
		case keyDomainMetadata:
			a.DomainMetadata = new(DomainMetadata)
			err = json.Unmarshal(raw, a.DomainMetadata)
		case keyCDC:
			a.CDC = new(AddCDCFile)
			err = json.Unmarshal(raw, a.CDC)
		case keyCheckpointMetadata:
			a.CheckpointMetadata = new(CheckpointMetadata)
			err = json.Unmarshal(raw, a.CheckpointMetadata)
		case keySidecar:
			a.Sidecar = new(Sidecar)
			err = json.Unmarshal(raw, a.Sidecar)
		default:
			if a.Unknown == nil {
				a.Unknown = make(map[string]json.RawMessage)
			}
			a.Unknown[k] = raw
		}
		if err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
	}
	if n == 0 {
		return errNoAction
	}
	return a.validate()
}

// validate checks the required fields that replay depends on.
func (a *Action) validate() error {
	switch {
	case a.Add != nil && a.Add.Path == "":
		return fmt.Errorf("add without path")
	case a.Remove != nil && a.Remove.Path == "":
		return fmt.Errorf("remove without path")
	case a.Txn != nil && a.Txn.AppID == "":
		return fmt.Errorf("txn without appId")
	case a.CDC != nil && a.CDC.Path == "":
		return fmt.Errorf("cdc without path")
	case a.DomainMetadata != nil && a.DomainMetadata.Domain == "":
		return fmt.Errorf("domainMetadata without domain")
	}
	return nil
}

func isJSONNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// Schema parses SchemaString (PROTOCOL.md, "Schema Serialization Format").
func (m Metadata) Schema() (*schema.StructType, error) {
	s, err := schema.ParseSchema([]byte(m.SchemaString))
	if err != nil {
		return nil, fmt.Errorf("table %s schemaString: %w", m.ID, err)
	}
	return s, nil
}
