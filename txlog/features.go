package txlog

import (
	"slices"
	"strings"
)

// Table features (PROTOCOL.md, "Table Features", "Valid Feature Names in
// Table Features") and what this package supports.

// Feature names.
const (
	FeatureAppendOnly          = "appendOnly"
	FeatureInvariants          = "invariants"
	FeatureCheckConstraints    = "checkConstraints"
	FeatureChangeDataFeed      = "changeDataFeed"
	FeatureGeneratedColumns    = "generatedColumns"
	FeatureColumnMapping       = "columnMapping"
	FeatureIdentityColumns     = "identityColumns"
	FeatureDeletionVectors     = "deletionVectors"
	FeatureRowTracking         = "rowTracking"
	FeatureTimestampNTZ        = "timestampNtz"
	FeatureDomainMetadata      = "domainMetadata"
	FeatureV2Checkpoint        = "v2Checkpoint"
	FeatureIcebergCompatV1     = "icebergCompatV1"
	FeatureIcebergCompatV2     = "icebergCompatV2"
	FeatureClustering          = "clustering"
	FeatureVacuumProtocolCheck = "vacuumProtocolCheck"
	FeatureInCommitTimestamp   = "inCommitTimestamp"
	FeatureTypeWidening        = "typeWidening"
	FeatureTypeWideningPreview = "typeWidening-preview"
	FeatureVariantType         = "variantType"
	FeatureVariantTypePreview  = "variantType-preview"
	FeatureCatalogManaged      = "catalogManaged"
	FeatureCatalogOwnedPreview = "catalogOwned-preview"
)

// SupportedReaderFeatures are the reader features a snapshot read honours
// completely: timestampNtz (a data type), v2Checkpoint (checkpoint reading),
// vacuumProtocolCheck (only VACUUM is affected), typeWidening (and its
// preview name; Parquet files written before a type change are read in the
// current type, widened value by value, and statistics of widened columns
// are not used for skipping: PROTOCOL.md "Type Widening"). columnMapping and
// deletionVectors are replayed correctly in the log; CheckReadSupported
// refuses them when active because it guards code that reads data files by
// logical name and in full (OPTIMIZE's rewrite, for one). The reader
// package reads such tables (and variantType) through its own rule,
// reader.CheckReadable.
var SupportedReaderFeatures = []string{FeatureTimestampNTZ, FeatureV2Checkpoint, FeatureVacuumProtocolCheck,
	FeatureTypeWidening, FeatureTypeWideningPreview}

// SupportedWriterFeatures are the writer features our writers honour:
// appendOnly (refuse removes when delta.appendOnly=true), timestampNtz,
// domainMetadata (domains are preserved), v2Checkpoint (we write classic V1
// checkpoints, which are always allowed), vacuumProtocolCheck,
// inCommitTimestamp (commitInfo.inCommitTimestamp is written first),
// typeWidening (and its preview name: writes use the current types and
// never change one, so no delta.typeChanges entry is needed; PROTOCOL.md
// "Type Widening", writer requirements),
// deletionVectors (table.Merge writes them; appends do not touch them;
// OPTIMIZE refuses a snapshot with live deletion vectors,
// Snapshot.CheckReadSupported, so it never brings deleted rows back).
// Legacy features (invariants, checkConstraints, generatedColumns,
// identityColumns, changeDataFeed, columnMapping) are refused only when
// active in the metadata.
var SupportedWriterFeatures = []string{FeatureAppendOnly, FeatureTimestampNTZ, FeatureDomainMetadata,
	FeatureV2Checkpoint, FeatureVacuumProtocolCheck, FeatureInCommitTimestamp, FeatureDeletionVectors,
	FeatureTypeWidening, FeatureTypeWideningPreview}

// knownFeatures are every feature name of PROTOCOL.md this package knows,
// supported or not: a checkpoint can represent the state of such a table
// (their fields are in the checkpoint schema), but not of a table that names
// a feature we have never heard of.
var knownFeatures = []string{FeatureAppendOnly, FeatureInvariants, FeatureCheckConstraints, FeatureChangeDataFeed,
	FeatureGeneratedColumns, FeatureColumnMapping, FeatureIdentityColumns, FeatureDeletionVectors,
	FeatureRowTracking, FeatureTimestampNTZ, FeatureDomainMetadata, FeatureV2Checkpoint, FeatureIcebergCompatV1,
	FeatureIcebergCompatV2, FeatureClustering, FeatureVacuumProtocolCheck, FeatureInCommitTimestamp,
	FeatureTypeWidening, FeatureTypeWideningPreview, FeatureVariantType, FeatureVariantTypePreview}

// checkCheckpointSupported returns *UnsupportedFeatureError (Write set) when
// a checkpoint written by this package could misstate the table: a reader
// version above 3 or writer version above 7, a feature name outside
// knownFeatures (its actions or fields would be dropped), or a
// catalog-managed table (whose log only its catalog may write). Unlike
// CheckWriteSupported it accepts the known features we cannot write rows
// for (deletion vectors, column mapping, ...): their log state fits the
// checkpoint schema. PROTOCOL.md, "Table Features": writers must not write
// to a table with an unsupported writer feature.
func checkCheckpointSupported(p Protocol) error {
	if p.MinReaderVersion > 3 {
		return &UnsupportedFeatureError{Feature: "readerVersion " + itoa(p.MinReaderVersion), Write: true}
	}
	if p.MinWriterVersion > 7 {
		return &UnsupportedFeatureError{Feature: "writerVersion " + itoa(p.MinWriterVersion), Write: true}
	}
	for _, f := range slices.Concat(p.ReaderFeatures, p.WriterFeatures) {
		if !slices.Contains(knownFeatures, f) {
			return &UnsupportedFeatureError{Feature: f, Write: true}
		}
	}
	return nil
}

// columnMappingActive: delta.columnMapping.mode is id or name.
func columnMappingActive(m Metadata) bool {
	mode := parseTableProperties(m.Configuration, -1).ColumnMappingMode
	return mode != ColumnMappingNone
}

// CheckReadSupported returns *UnsupportedFeatureError when rows of a table
// with this protocol and metadata cannot be read correctly by lakesink:
// reader version > 3; reader version 2 (column mapping) with
// delta.columnMapping.mode id or name; reader version 3 with a reader
// feature outside SupportedReaderFeatures (columnMapping is accepted when
// its mode is none; deletionVectors is always refused here, see
// Snapshot.CheckReadSupported for the per-file refinement).
// PROTOCOL.md, "Reader Version Requirements".
func CheckReadSupported(p Protocol, m Metadata) error {
	return checkRead(p, m, true, false)
}

// checkRead: dvRefuse refuses deletionVectors; cmOK accepts active column
// mapping (a writer that writes by physical names).
func checkRead(p Protocol, m Metadata, dvRefuse, cmOK bool) error {
	switch p.MinReaderVersion {
	case 0, 1:
		return nil
	case 2:
		if columnMappingActive(m) && !cmOK {
			return &UnsupportedFeatureError{Feature: FeatureColumnMapping}
		}
		return nil
	case 3:
		for _, f := range p.ReaderFeatures {
			switch {
			case slices.Contains(SupportedReaderFeatures, f):
			case f == FeatureColumnMapping && (cmOK || !columnMappingActive(m)):
			case f == FeatureDeletionVectors && !dvRefuse:
			default:
				return &UnsupportedFeatureError{Feature: f}
			}
		}
		return nil
	default:
		return &UnsupportedFeatureError{Feature: "readerVersion " + itoa(p.MinReaderVersion)}
	}
}

// CheckReadSupported is CheckReadSupported refined by the snapshot's files:
// deletionVectors is refused only if a live file carries a deletion vector.
func (s *Snapshot) CheckReadSupported() error {
	if err := checkRead(s.protocol, s.metadata, false, false); err != nil {
		return err
	}
	for _, a := range s.files.all() {
		if a.DeletionVector != nil {
			return &UnsupportedFeatureError{Feature: FeatureDeletionVectors}
		}
	}
	return nil
}

// HonourableWriterFeatures are the writer features a writer may declare it
// honours (CheckWriteSupported's honoured, Transaction.Honour) beyond
// SupportedWriterFeatures:
//   - columnMapping (name and id mode): the writer writes Parquet columns by
//     their physical names with field ids, and partitionValues and stats by
//     physical names (PROTOCOL.md "Writer Requirements for Column Mapping");
//   - checkConstraints: the writer checks every new row against each
//     delta.constraints.* expression (PROTOCOL.md "CHECK Constraints");
//   - identityColumns: the writer generates the values of identity columns
//     above delta.identity.highWaterMark and moves the mark in the
//     commit's metaData, and refuses values given for GENERATED ALWAYS
//     columns (PROTOCOL.md "Identity Columns");
//   - changeDataFeed: the writer only adds new rows or removes whole files,
//     for which no change data files are needed (PROTOCOL.md "Add CDC
//     File": "If an operation only adds new data or removes existing data
//     without updating any existing rows, a writer can write only data
//     files");
//   - rowTracking: only new rows are written (no file is rewritten, which
//     would have to preserve stable row ids); Transaction.Commit assigns
//     baseRowId, defaultRowCommitVersion and the delta.rowTracking high-water
//     mark (PROTOCOL.md "Writer Requirements for Row Tracking").
//
// table.Write declares them all; OPTIMIZE and Merge declare none.
var HonourableWriterFeatures = []string{FeatureColumnMapping, FeatureCheckConstraints, FeatureIdentityColumns,
	FeatureChangeDataFeed, FeatureRowTracking}

// CheckWriteSupported returns *UnsupportedFeatureError (Write set) when
// lakesink cannot write a table with this protocol and metadata
// (PROTOCOL.md, "Writer Version Requirements", "Table Features"): writer
// version > 7; an active legacy feature we do not implement (invariants in
// the schema, CHECK constraints, generated or identity columns, change data
// feed, column mapping); under writer version 7 any writer feature outside
// SupportedWriterFeatures and the inactive legacy ones. Readers' features
// must be readable too (a writer reads the table); deletionVectors is
// accepted: a writer that rewrites files must apply or refuse their
// deletion vectors itself. honoured are the features of
// HonourableWriterFeatures the calling writer honours; they are accepted
// active or not. A refused generated or identity column is named
// (UnsupportedFeatureError.Column).
func CheckWriteSupported(p Protocol, m Metadata, honoured ...string) error {
	for _, f := range honoured {
		if !slices.Contains(HonourableWriterFeatures, f) {
			return &UnsupportedFeatureError{Feature: f, Write: true}
		}
	}
	honours := func(f string) bool { return slices.Contains(honoured, f) }
	if err := checkRead(p, m, false, honours(FeatureColumnMapping)); err != nil {
		var ufe *UnsupportedFeatureError
		if asUFE(err, &ufe) {
			ufe.Write = true
		}
		return err
	}
	if p.MinWriterVersion > 7 {
		return &UnsupportedFeatureError{Feature: "writerVersion " + itoa(p.MinWriterVersion), Write: true}
	}
	active := activeLegacyFeatures(m)
	refuse := func(f string) error {
		e := &UnsupportedFeatureError{Feature: f, Write: true}
		if f == FeatureGeneratedColumns || f == FeatureIdentityColumns {
			e.Detail = featureColumn(m, f)
		}
		return e
	}
	if p.MinWriterVersion < 7 {
		// legacy versions imply their features (writer 2: appendOnly,
		// invariants; 3: checkConstraints; 4: changeDataFeed,
		// generatedColumns; 5: columnMapping; 6: identityColumns).
		implied := map[string]int{FeatureInvariants: 2, FeatureCheckConstraints: 3, FeatureChangeDataFeed: 4,
			FeatureGeneratedColumns: 4, FeatureColumnMapping: 5, FeatureIdentityColumns: 6}
		for _, f := range active {
			if p.MinWriterVersion >= implied[f] && !honours(f) {
				return refuse(f)
			}
		}
		return nil
	}
	for _, f := range p.WriterFeatures {
		if slices.Contains(SupportedWriterFeatures, f) || honours(f) {
			continue
		}
		switch f {
		case FeatureInvariants, FeatureCheckConstraints, FeatureChangeDataFeed,
			FeatureGeneratedColumns, FeatureColumnMapping, FeatureIdentityColumns:
			if slices.Contains(active, f) {
				return refuse(f)
			}
		default:
			return refuse(f)
		}
	}
	return nil
}

// featureColumn names the first top-level column of m's schema that uses
// the generatedColumns (delta.generationExpression) or identityColumns
// (delta.identity.*) feature, with its expression or identity settings.
func featureColumn(m Metadata, feature string) string {
	st, err := m.Schema()
	if err != nil {
		return ""
	}
	for _, f := range st.Fields {
		switch feature {
		case FeatureGeneratedColumns:
			if e, ok := f.Metadata["delta.generationExpression"].(string); ok {
				return "column " + f.Name + " GENERATED ALWAYS AS (" + e + ")"
			}
		case FeatureIdentityColumns:
			if _, ok := f.Metadata["delta.identity.start"]; ok {
				how := "ALWAYS"
				if b, _ := f.Metadata["delta.identity.allowExplicitInsert"].(bool); b {
					how = "BY DEFAULT"
				}
				return "column " + f.Name + " GENERATED " + how + " AS IDENTITY"
			}
		}
	}
	return ""
}

// activeLegacyFeatures inspects metadata for the legacy writer features
// that are in use.
func activeLegacyFeatures(m Metadata) []string {
	var out []string
	if strings.Contains(m.SchemaString, "delta.invariants") {
		out = append(out, FeatureInvariants)
	}
	for k := range m.Configuration {
		if strings.HasPrefix(k, "delta.constraints.") {
			out = append(out, FeatureCheckConstraints)
			break
		}
	}
	if parseTableProperties(m.Configuration, -1).EnableChangeDataFeed {
		out = append(out, FeatureChangeDataFeed)
	}
	if strings.Contains(m.SchemaString, "delta.generationExpression") {
		out = append(out, FeatureGeneratedColumns)
	}
	if columnMappingActive(m) {
		out = append(out, FeatureColumnMapping)
	}
	if strings.Contains(m.SchemaString, "delta.identity.") {
		out = append(out, FeatureIdentityColumns)
	}
	return out
}

// IsAppendOnly reports delta.appendOnly=true (PROTOCOL.md, "Append-only
// Tables"; TableProperties.AppendOnly).
func IsAppendOnly(m Metadata) bool {
	return parseTableProperties(m.Configuration, -1).AppendOnly
}
