package txlog

// Parquet rows of a checkpoint (PROTOCOL.md, "Checkpoint Schema"): each row
// holds one action in its own column group, all groups optional. Optional
// scalars are pointers so that absent stays absent. The same structs read
// Spark/delta-rs checkpoints, whose schemas vary (extra columns such as
// stats_parsed are ignored; missing columns read as absent).

type ckptTxn struct {
	AppID       *string `parquet:"appId,optional"`
	Version     *int64  `parquet:"version,optional"`
	LastUpdated *int64  `parquet:"lastUpdated,optional"`
}

type ckptDV struct {
	StorageType    *string `parquet:"storageType,optional"`
	PathOrInlineDv *string `parquet:"pathOrInlineDv,optional"`
	Offset         *int32  `parquet:"offset,optional"`
	SizeInBytes    *int32  `parquet:"sizeInBytes,optional"`
	Cardinality    *int64  `parquet:"cardinality,optional"`
}

type ckptAdd struct {
	Path                    *string            `parquet:"path,optional"`
	PartitionValues         map[string]*string `parquet:"partitionValues,optional"`
	Size                    *int64             `parquet:"size,optional"`
	ModificationTime        *int64             `parquet:"modificationTime,optional"`
	DataChange              *bool              `parquet:"dataChange,optional"`
	Tags                    map[string]*string `parquet:"tags,optional"`
	DeletionVector          *ckptDV            `parquet:"deletionVector,optional"`
	BaseRowID               *int64             `parquet:"baseRowId,optional"`
	DefaultRowCommitVersion *int64             `parquet:"defaultRowCommitVersion,optional"`
	ClusteringProvider      *string            `parquet:"clusteringProvider,optional"`
	Stats                   *string            `parquet:"stats,optional"`
}

type ckptRemove struct {
	Path                    *string            `parquet:"path,optional"`
	DeletionTimestamp       *int64             `parquet:"deletionTimestamp,optional"`
	DataChange              *bool              `parquet:"dataChange,optional"`
	ExtendedFileMetadata    *bool              `parquet:"extendedFileMetadata,optional"`
	PartitionValues         map[string]*string `parquet:"partitionValues,optional"`
	Size                    *int64             `parquet:"size,optional"`
	Tags                    map[string]*string `parquet:"tags,optional"`
	DeletionVector          *ckptDV            `parquet:"deletionVector,optional"`
	BaseRowID               *int64             `parquet:"baseRowId,optional"`
	DefaultRowCommitVersion *int64             `parquet:"defaultRowCommitVersion,optional"`
}

type ckptFormat struct {
	Provider *string            `parquet:"provider,optional"`
	Options  map[string]*string `parquet:"options,optional"`
}

type ckptMetadata struct {
	ID               *string            `parquet:"id,optional"`
	Name             *string            `parquet:"name,optional"`
	Description      *string            `parquet:"description,optional"`
	Format           *ckptFormat        `parquet:"format,optional"`
	SchemaString     *string            `parquet:"schemaString,optional"`
	PartitionColumns []string           `parquet:"partitionColumns,optional,list"`
	Configuration    map[string]*string `parquet:"configuration,optional"`
	CreatedTime      *int64             `parquet:"createdTime,optional"`
}

type ckptProtocol struct {
	MinReaderVersion *int32   `parquet:"minReaderVersion,optional"`
	MinWriterVersion *int32   `parquet:"minWriterVersion,optional"`
	ReaderFeatures   []string `parquet:"readerFeatures,optional,list"`
	WriterFeatures   []string `parquet:"writerFeatures,optional,list"`
}

type ckptDomain struct {
	Domain        *string `parquet:"domain,optional"`
	Configuration *string `parquet:"configuration,optional"`
	Removed       *bool   `parquet:"removed,optional"`
}

type ckptCheckpointMetadata struct {
	Version *int64             `parquet:"version,optional"`
	Tags    map[string]*string `parquet:"tags,optional"`
}

type ckptSidecar struct {
	Path             *string            `parquet:"path,optional"`
	SizeInBytes      *int64             `parquet:"sizeInBytes,optional"`
	ModificationTime *int64             `parquet:"modificationTime,optional"`
	Tags             map[string]*string `parquet:"tags,optional"`
}

// ckptRow is one row written to a V1 checkpoint.
type ckptRow struct {
	Txn            *ckptTxn      `parquet:"txn,optional"`
	Add            *ckptAdd      `parquet:"add,optional"`
	Remove         *ckptRemove   `parquet:"remove,optional"`
	MetaData       *ckptMetadata `parquet:"metaData,optional"`
	Protocol       *ckptProtocol `parquet:"protocol,optional"`
	DomainMetadata *ckptDomain   `parquet:"domainMetadata,optional"`
}

// ckptReadRow is one row read from any checkpoint or sidecar (V2 actions too).
type ckptReadRow struct {
	Txn                *ckptTxn                `parquet:"txn,optional"`
	Add                *ckptAdd                `parquet:"add,optional"`
	Remove             *ckptRemove             `parquet:"remove,optional"`
	MetaData           *ckptMetadata           `parquet:"metaData,optional"`
	Protocol           *ckptProtocol           `parquet:"protocol,optional"`
	DomainMetadata     *ckptDomain             `parquet:"domainMetadata,optional"`
	CheckpointMetadata *ckptCheckpointMetadata `parquet:"checkpointMetadata,optional"`
	Sidecar            *ckptSidecar            `parquet:"sidecar,optional"`
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

func strMap(m map[string]*string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = deref(v)
	}
	return out
}

func (d *ckptDV) toAction() *DeletionVector {
	if d == nil || deref(d.StorageType) == "" {
		return nil
	}
	return &DeletionVector{StorageType: *d.StorageType, PathOrInlineDV: deref(d.PathOrInlineDv), Offset: d.Offset,
		SizeInBytes: deref(d.SizeInBytes), Cardinality: deref(d.Cardinality)}
}

// toAction converts a checkpoint row to an action; ok is false for a row
// holding no action (an absent group may read as an empty struct).
func (r *ckptReadRow) toAction() (Action, bool) {
	var a Action
	n := 0
	if r.Txn != nil && deref(r.Txn.AppID) != "" {
		a.Txn = &Txn{AppID: *r.Txn.AppID, Version: deref(r.Txn.Version), LastUpdated: r.Txn.LastUpdated}
		n++
	}
	if r.Add != nil && deref(r.Add.Path) != "" {
		x := r.Add
		a.Add = &Add{Path: *x.Path, PartitionValues: x.PartitionValues, Size: deref(x.Size),
			ModificationTime: deref(x.ModificationTime), DataChange: deref(x.DataChange), Stats: deref(x.Stats),
			Tags: strMap(x.Tags), DeletionVector: x.DeletionVector.toAction(), BaseRowID: x.BaseRowID,
			DefaultRowCommitVersion: x.DefaultRowCommitVersion, ClusteringProvider: deref(x.ClusteringProvider)}
		if a.Add.PartitionValues == nil {
			a.Add.PartitionValues = map[string]*string{}
		}
		n++
	}
	if r.Remove != nil && deref(r.Remove.Path) != "" {
		x := r.Remove
		a.Remove = &Remove{Path: *x.Path, DeletionTimestamp: x.DeletionTimestamp, DataChange: deref(x.DataChange),
			ExtendedFileMetadata: x.ExtendedFileMetadata, PartitionValues: x.PartitionValues, Size: x.Size,
			Tags: strMap(x.Tags), DeletionVector: x.DeletionVector.toAction(), BaseRowID: x.BaseRowID,
			DefaultRowCommitVersion: x.DefaultRowCommitVersion}
		n++
	}
	if r.MetaData != nil && deref(r.MetaData.ID) != "" {
		x := r.MetaData
		m := &Metadata{ID: *x.ID, Name: deref(x.Name), Description: deref(x.Description),
			SchemaString: deref(x.SchemaString), PartitionColumns: x.PartitionColumns,
			Configuration: strMap(x.Configuration), CreatedTime: x.CreatedTime}
		if x.Format != nil {
			m.Format = Format{Provider: deref(x.Format.Provider), Options: strMap(x.Format.Options)}
		}
		if m.PartitionColumns == nil {
			m.PartitionColumns = []string{}
		}
		if m.Configuration == nil {
			m.Configuration = map[string]string{}
		}
		a.MetaData = m
		n++
	}
	if r.Protocol != nil && deref(r.Protocol.MinReaderVersion) != 0 {
		x := r.Protocol
		a.Protocol = &Protocol{MinReaderVersion: int(deref(x.MinReaderVersion)), MinWriterVersion: int(deref(x.MinWriterVersion)),
			ReaderFeatures: x.ReaderFeatures, WriterFeatures: x.WriterFeatures}
		// PROTOCOL.md "Protocol Evolution": readerFeatures exists only
		// with minReaderVersion 3, writerFeatures only with
		// minWriterVersion 7. parquet-go reads an absent or null list as
		// an empty one, which the next checkpoint (or a commit carrying
		// the protocol) wrote as [] beside version 1/2, a protocol
		// delta-kernel-rs refuses ("Reader features must not be present
		// when minimum reader version != 3").
		switch {
		case a.Protocol.MinReaderVersion == 3 && a.Protocol.ReaderFeatures == nil:
			a.Protocol.ReaderFeatures = []string{}
		case a.Protocol.MinReaderVersion != 3 && len(a.Protocol.ReaderFeatures) == 0:
			a.Protocol.ReaderFeatures = nil
		}
		switch {
		case a.Protocol.MinWriterVersion == 7 && a.Protocol.WriterFeatures == nil:
			a.Protocol.WriterFeatures = []string{}
		case a.Protocol.MinWriterVersion != 7 && len(a.Protocol.WriterFeatures) == 0:
			a.Protocol.WriterFeatures = nil
		}
		n++
	}
	if r.DomainMetadata != nil && deref(r.DomainMetadata.Domain) != "" {
		x := r.DomainMetadata
		a.DomainMetadata = &DomainMetadata{Domain: *x.Domain, Configuration: deref(x.Configuration), Removed: deref(x.Removed)}
		n++
	}
	if r.CheckpointMetadata != nil && r.CheckpointMetadata.Version != nil {
		a.CheckpointMetadata = &CheckpointMetadata{Version: *r.CheckpointMetadata.Version, Tags: strMap(r.CheckpointMetadata.Tags)}
		n++
	}
	if r.Sidecar != nil && deref(r.Sidecar.Path) != "" {
		x := r.Sidecar
		a.Sidecar = &Sidecar{Path: *x.Path, SizeInBytes: deref(x.SizeInBytes), ModificationTime: deref(x.ModificationTime), Tags: strMap(x.Tags)}
		n++
	}
	return a, n > 0
}
