package txlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/lakesink/lakesink/storage"
)

// ChecksumPath is the key of the version checksum file of version v:
// _delta_log/%020d.crc (PROTOCOL.md, "Version Checksum File").
func ChecksumPath(v int64) string { return fmt.Sprintf("%s/%020d.crc", LogDir, v) }

// VersionChecksum is the content of a version checksum file
// _delta_log/N.crc (PROTOCOL.md, "Version Checksum File"; Spark's
// Checksum.scala VersionChecksum): the table state after version N, one
// JSON object. tableSizeBytes, numFiles, numMetadata, numProtocol, metadata
// and protocol are required; the rest is optional. Spark writes the file
// size histogram as "histogramOpt", PROTOCOL.md and Delta Kernel as
// "fileSizeHistogram"; both are read, lakesink writes the spec's name.
type VersionChecksum struct {
	TxnID          string `json:"txnId,omitempty"` // commitInfo.txnId of version N, "" when absent
	TableSizeBytes int64  `json:"tableSizeBytes"`  // total size in bytes of the live data files
	NumFiles       int64  `json:"numFiles"`        // number of live data files
	// NumDeletedRecords is the sum of the cardinalities of the live files'
	// deletion vectors, NumDeletionVectors how many live files have one.
	NumDeletedRecords  *int64 `json:"numDeletedRecordsOpt,omitempty"`
	NumDeletionVectors *int64 `json:"numDeletionVectorsOpt,omitempty"`
	NumMetadata        int64  `json:"numMetadata"` // number of metaData actions in the state: always 1
	NumProtocol        int64  `json:"numProtocol"` // number of protocol actions in the state: always 1
	// InCommitTimestamp is commitInfo.inCommitTimestamp of version N
	// (milliseconds since the epoch) when in-commit timestamps are enabled.
	InCommitTimestamp *int64             `json:"inCommitTimestampOpt,omitempty"`
	SetTransactions   []Txn              `json:"setTransactions,omitempty"`   // the live txn of every appId (optional)
	DomainMetadata    []DomainMetadata   `json:"domainMetadata,omitempty"`    // the live domains, no tombstones (optional)
	Metadata          *Metadata          `json:"metadata"`                    // the table's metadata at version N
	Protocol          *Protocol          `json:"protocol"`                    // the table's protocol at version N
	FileSizeHistogram *FileSizeHistogram `json:"fileSizeHistogram,omitempty"` // the live files by size (optional)
	// AllFiles is every live add (optional; Spark writes it for small
	// tables only). lakesink does not write it.
	AllFiles []Add `json:"allFiles,omitempty"`
}

// FileSizeHistogram counts the live files and their bytes per size bin
// (PROTOCOL.md, "File Size Histogram Schema"): bin i holds the files with
// SortedBinBoundaries[i] <= size < SortedBinBoundaries[i+1].
type FileSizeHistogram struct {
	SortedBinBoundaries []int64 `json:"sortedBinBoundaries"`
	FileCounts          []int64 `json:"fileCounts"` // files per bin, len(SortedBinBoundaries) entries
	TotalBytes          []int64 `json:"totalBytes"` // bytes of the files per bin, len(SortedBinBoundaries) entries
}

// defaultBinBoundaries are Spark's FileSizeHistogram default bins (0, 8 KiB,
// doubling to 4 MiB, then steps of 4, 8, 16, ... MiB up to 256 GiB), as
// Spark writes them in every .crc.
var defaultBinBoundaries = []int64{0, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152,
	4194304, 8388608, 12582912, 16777216, 20971520, 25165824, 29360128, 33554432, 37748736, 41943040,
	50331648, 58720256, 67108864, 75497472, 83886080, 92274688, 100663296, 109051904, 117440512, 125829120,
	130023424, 134217728, 138412032, 142606336, 146800640, 150994944, 167772160, 184549376, 201326592,
	218103808, 234881024, 251658240, 268435456, 285212672, 301989888, 318767104, 335544320, 352321536,
	369098752, 385875968, 402653184, 419430400, 436207616, 452984832, 469762048, 486539264, 503316480,
	520093696, 536870912, 553648128, 570425344, 587202560, 603979776, 671088640, 738197504, 805306368,
	872415232, 939524096, 1006632960, 1073741824, 1140850688, 1207959552, 1275068416, 1342177280,
	1409286144, 1476395008, 1610612736, 1744830464, 1879048192, 2013265920, 2147483648, 2415919104,
	2684354560, 2952790016, 3221225472, 3489660928, 3758096384, 4026531840, 4294967296, 8589934592,
	17179869184, 34359738368, 68719476736, 137438953472, 274877906944}

func newFileSizeHistogram() *FileSizeHistogram {
	n := len(defaultBinBoundaries)
	return &FileSizeHistogram{SortedBinBoundaries: defaultBinBoundaries,
		FileCounts: make([]int64, n), TotalBytes: make([]int64, n)}
}

func (h *FileSizeHistogram) clone() *FileSizeHistogram {
	return &FileSizeHistogram{SortedBinBoundaries: h.SortedBinBoundaries,
		FileCounts: slices.Clone(h.FileCounts), TotalBytes: slices.Clone(h.TotalBytes)}
}

// insert adds (sign 1) or takes away (sign -1) one file of size bytes.
func (h *FileSizeHistogram) insert(size int64, sign int64) {
	i := sort.Search(len(h.SortedBinBoundaries), func(i int) bool { return h.SortedBinBoundaries[i] > size }) - 1
	if i < 0 {
		i = 0
	}
	h.FileCounts[i] += sign
	h.TotalBytes[i] += sign * size
}

// maxChecksumListed bounds the txns and domains a .crc lists (Spark stops
// listing setTransactions beyond a threshold too); above it the field is
// left out.
const maxChecksumListed = 100

// checksumState is the file-level state a .crc summarises, kept by every
// Snapshot (computed once while replaying) so that a commit derives the
// next version's checksum from it and the commit's actions alone.
type checksumState struct {
	sizeBytes         int64
	hist              *FileSizeHistogram
	numDVs            int64
	numDeletedRecords int64
}

func (s *checksumState) account(a *Add, sign int64) {
	s.sizeBytes += sign * a.Size
	s.hist.insert(a.Size, sign)
	if a.DeletionVector != nil {
		s.numDVs += sign
		s.numDeletedRecords += sign * a.DeletionVector.Cardinality
	}
}

// computeChecksumState sums the live files of a replayed snapshot.
func computeChecksumState(files *fileSet[Add]) checksumState {
	st := checksumState{hist: newFileSizeHistogram()}
	for _, a := range files.all() {
		st.account(a, 1)
	}
	return st
}

// nextChecksum derives the checksum of the version written by a commit of
// acts on top of base (nil: a new table) and the winning commits between
// them, without reading the log: a live file replaced or removed is taken
// out by the size the base (or an earlier of these commits) recorded.
func (l *Log) nextChecksum(base *Snapshot, between [][]Action, acts []Action, ci CommitInfo, txnID string) (*VersionChecksum, error) {
	var st checksumState
	numFiles := int64(0)
	txns := map[string]Txn{}
	domains := map[string]*DomainMetadata{}
	var meta *Metadata
	var proto *Protocol
	var baseFiles *fileSet[Add]
	if base != nil {
		st = base.crc
		st.hist = base.crc.hist.clone()
		numFiles = int64(base.files.len())
		maps.Copy(txns, base.txns)
		maps.Copy(domains, base.domains)
		m, p := base.metadata, base.protocol
		meta, proto = &m, &p
		baseFiles = base.files
	} else {
		st.hist = newFileSizeHistogram()
	}
	overlay := map[fileKey]*Add{} // nil: removed since base
	live := func(k fileKey) *Add {
		if a, ok := overlay[k]; ok {
			return a
		}
		a, _ := baseFiles.get(k)
		return a
	}
	apply := func(a *Action) error {
		switch {
		case a.Protocol != nil:
			proto = a.Protocol
		case a.MetaData != nil:
			meta = a.MetaData
		case a.Txn != nil:
			txns[a.Txn.AppID] = *a.Txn
		case a.DomainMetadata != nil:
			if a.DomainMetadata.Removed {
				delete(domains, a.DomainMetadata.Domain)
			} else {
				domains[a.DomainMetadata.Domain] = a.DomainMetadata
			}
		case a.Add != nil:
			p, err := resolvePath(l.root, a.Add.Path)
			if err != nil {
				return err
			}
			k := fileKey{p, a.Add.DeletionVector.UniqueID()}
			if prev := live(k); prev != nil {
				st.account(prev, -1)
				numFiles--
			}
			overlay[k] = a.Add
			st.account(a.Add, 1)
			numFiles++
		case a.Remove != nil:
			p, err := resolvePath(l.root, a.Remove.Path)
			if err != nil {
				return err
			}
			k := fileKey{p, a.Remove.DeletionVector.UniqueID()}
			if prev := live(k); prev != nil {
				st.account(prev, -1)
				numFiles--
			}
			overlay[k] = nil
		}
		return nil
	}
	for _, c := range between {
		for i := range c {
			if err := apply(&c[i]); err != nil {
				return nil, err
			}
		}
	}
	for i := range acts {
		if err := apply(&acts[i]); err != nil {
			return nil, err
		}
	}
	if meta == nil || proto == nil {
		return nil, errors.New("no protocol or metaData")
	}
	return buildChecksum(st, numFiles, txns, domains, meta, proto, ci, txnID), nil
}

// Checksum is the version checksum of the snapshot's state, as lakesink
// writes it into N.crc after commit N (PROTOCOL.md, "Version Checksum
// File"): tableSizeBytes, numFiles, numMetadata and numProtocol (1 each),
// metadata, protocol, the file size histogram in Spark's default bins,
// the deletion-vector counts when the protocol has deletionVectors,
// inCommitTimestampOpt from the version's commitInfo, and the txns and
// domains (each list left out above 100 entries). TxnID is the version's
// commitInfo.txnId ("" when it has none). It reads nothing: the sums were
// made by the replay.
func (s *Snapshot) Checksum() *VersionChecksum {
	m, p := s.metadata, s.protocol
	st := s.crc
	st.hist = s.crc.hist.clone()
	return buildChecksum(st, int64(s.files.len()), s.txns, s.domains, &m, &p, s.commitInfo, s.commitInfo.TxnID())
}

// buildChecksum assembles a VersionChecksum from a state's sums; txns and
// domains are read, not kept.
func buildChecksum(st checksumState, numFiles int64, txns map[string]Txn, domains map[string]*DomainMetadata,
	meta *Metadata, proto *Protocol, ci CommitInfo, txnID string) *VersionChecksum {
	vc := &VersionChecksum{TxnID: txnID, TableSizeBytes: st.sizeBytes, NumFiles: numFiles,
		NumMetadata: 1, NumProtocol: 1, Metadata: meta, Protocol: proto, FileSizeHistogram: st.hist}
	if slices.Contains(proto.ReaderFeatures, FeatureDeletionVectors) {
		vc.NumDeletedRecords, vc.NumDeletionVectors = &st.numDeletedRecords, &st.numDVs
	}
	if ts, ok := ci.InCommitTimestamp(); ok {
		vc.InCommitTimestamp = &ts
	}
	if len(txns) <= maxChecksumListed {
		vc.SetTransactions = make([]Txn, 0, len(txns))
		for _, k := range slices.Sorted(maps.Keys(txns)) {
			vc.SetTransactions = append(vc.SetTransactions, txns[k])
		}
	}
	if len(domains) <= maxChecksumListed {
		vc.DomainMetadata = make([]DomainMetadata, 0, len(domains))
		for _, k := range slices.Sorted(maps.Keys(domains)) {
			vc.DomainMetadata = append(vc.DomainMetadata, *domains[k])
		}
	}
	return vc
}

// MarshalJSON writes the checksum as one JSON object; setTransactions and
// domainMetadata are written as [] when listed and empty, as Spark does.
func (c VersionChecksum) MarshalJSON() ([]byte, error) {
	type plain VersionChecksum
	b, err := marshalNoEscape(plain(c))
	if err != nil {
		return nil, err
	}
	var extra map[string]json.RawMessage
	if c.SetTransactions != nil && len(c.SetTransactions) == 0 {
		extra = map[string]json.RawMessage{"setTransactions": json.RawMessage("[]")}
	}
	if c.DomainMetadata != nil && len(c.DomainMetadata) == 0 {
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra["domainMetadata"] = json.RawMessage("[]")
	}
	return appendExtra(b, extra)
}

// writeChecksum writes N.crc after commit N (best effort: Spark writes it
// in a post-commit hook and a failure never fails the commit; the caller
// ignores the error). The crash point is "checksum".
func (l *Log) writeChecksum(ctx context.Context, version int64, vc *VersionChecksum) error {
	data, err := vc.MarshalJSON()
	if err != nil {
		return err
	}
	// The .crc is optional: its name need not survive a crash
	// (storage.PutOptional), which saves a commit one fsync of _delta_log.
	return storage.PutOptional(ctx, l.store, ChecksumPath(version), data)
}

// checksumFile is a parsed .crc with the keys it holds, so that what a
// writer left out is not checked.
type checksumFile struct {
	VersionChecksum
	present map[string]bool
}

// ReadChecksum reads and decodes _delta_log/N.crc. ErrVersionNotFound (and
// storage.ErrNotFound) when there is none; a file that is not a JSON
// object, or larger than Options.MaxLineBytes, is a *CorruptLogError.
func (l *Log) ReadChecksum(ctx context.Context, v int64) (*VersionChecksum, error) {
	cf, err := l.readChecksum(ctx, v)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s: %w", ErrVersionNotFound, ChecksumPath(v), err)
	}
	if err != nil {
		return nil, err
	}
	return &cf.VersionChecksum, nil
}

func (l *Log) readChecksum(ctx context.Context, v int64) (*checksumFile, error) {
	p := ChecksumPath(v)
	rc, err := l.store.NewRangeReader(ctx, p, 0, int64(l.opts.MaxLineBytes)+1)
	if err != nil {
		return nil, err // the store names the op and the path
	}
	data, err := io.ReadAll(io.LimitReader(rc, int64(l.opts.MaxLineBytes)+1))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if len(data) > l.opts.MaxLineBytes {
		return nil, &CorruptLogError{Path: p, Version: v, Err: fmt.Errorf("checksum file larger than %d bytes", l.opts.MaxLineBytes)}
	}
	return parseChecksum(data, p, v)
}

func parseChecksum(data []byte, p string, v int64) (*checksumFile, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(data), &raw); err != nil {
		return nil, &CorruptLogError{Path: p, Version: v, Err: err}
	}
	cf := &checksumFile{present: map[string]bool{}}
	if h, ok := raw["histogramOpt"]; ok { // Spark's name
		if _, dup := raw["fileSizeHistogram"]; !dup {
			raw["fileSizeHistogram"] = h
		}
	}
	norm, err := json.Marshal(raw)
	if err != nil {
		return nil, &CorruptLogError{Path: p, Version: v, Err: err}
	}
	if err := json.Unmarshal(norm, &cf.VersionChecksum); err != nil {
		return nil, &CorruptLogError{Path: p, Version: v, Err: err}
	}
	for k, val := range raw {
		if !isJSONNull(val) {
			cf.present[k] = true
		}
	}
	return cf, nil
}

// ChecksumMismatchError lists how a version checksum file disagrees with
// the state replayed from the log (each entry "numFiles: 3 in the checksum,
// 2 replayed"). It is the Err of a *CorruptLogError naming the .crc and its
// version.
type ChecksumMismatchError struct {
	Version    int64    // the version of the checksum file
	Mismatches []string // one entry per field that differs
}

// Error implements error.
func (e *ChecksumMismatchError) Error() string {
	return fmt.Sprintf("version checksum does not match the log replayed to version %d (a commit may be truncated): %s",
		e.Version, strings.Join(e.Mismatches, "; "))
}

// validateChecksum compares a .crc with the replayed snapshot (PROTOCOL.md,
// "Version Checksum File": the state a reader computes must match it).
// Only the fields the file holds are checked: tableSizeBytes, numFiles,
// numMetadata, numProtocol, metadata (id, schema, partition columns,
// configuration), protocol (versions and features), txnId against the
// version's commitInfo, the DV counts, each listed setTransaction and
// domain, and allFiles (paths and sizes). The histogram is derived from the
// same files and not compared; inCommitTimestampOpt is not compared either,
// as Spark's checksum validation does not (delta-rs's cdc_ict_table has a
// commit whose inCommitTimestamp was edited after its .crc was written).
func validateChecksum(cf *checksumFile, s *Snapshot) *ChecksumMismatchError {
	var mm []string
	num := func(key string, got, want int64) {
		if cf.present[key] && got != want {
			mm = append(mm, fmt.Sprintf("%s: %d in the checksum, %d replayed", key, got, want))
		}
	}
	c := &cf.VersionChecksum
	num("tableSizeBytes", c.TableSizeBytes, s.crc.sizeBytes)
	num("numFiles", c.NumFiles, int64(s.files.len()))
	num("numMetadata", c.NumMetadata, 1)
	num("numProtocol", c.NumProtocol, 1)
	if c.NumDeletionVectors != nil {
		num("numDeletionVectorsOpt", *c.NumDeletionVectors, s.crc.numDVs)
	}
	if c.NumDeletedRecords != nil {
		num("numDeletedRecordsOpt", *c.NumDeletedRecords, s.crc.numDeletedRecords)
	}
	if c.Metadata != nil {
		m, r := c.Metadata, s.metadata
		switch {
		case m.ID != r.ID:
			mm = append(mm, fmt.Sprintf("metadata.id: %q in the checksum, %q replayed", m.ID, r.ID))
		case m.SchemaString != r.SchemaString:
			mm = append(mm, "metadata.schemaString differs")
		case !slices.Equal(m.PartitionColumns, r.PartitionColumns):
			mm = append(mm, fmt.Sprintf("metadata.partitionColumns: %q in the checksum, %q replayed", m.PartitionColumns, r.PartitionColumns))
		case !maps.Equal(m.Configuration, r.Configuration):
			mm = append(mm, "metadata.configuration differs")
		}
	}
	if c.Protocol != nil {
		p, r := c.Protocol, s.protocol
		if p.MinReaderVersion != r.MinReaderVersion || p.MinWriterVersion != r.MinWriterVersion ||
			!sameSet(p.ReaderFeatures, r.ReaderFeatures) || !sameSet(p.WriterFeatures, r.WriterFeatures) {
			mm = append(mm, "protocol differs")
		}
	}
	if id := s.commitInfo.TxnID(); c.TxnID != "" && id != "" && c.TxnID != id {
		mm = append(mm, fmt.Sprintf("txnId: %q in the checksum, %q in the commit", c.TxnID, id))
	}
	// Listed txns and domains must be live with the same version and
	// configuration; replayed ones the file does not list are not checked
	// (a writer may leave out expired txns).
	for _, tx := range c.SetTransactions {
		if got, ok := s.txns[tx.AppID]; !ok || got.Version != tx.Version {
			mm = append(mm, fmt.Sprintf("setTransactions: appId %q at version %d in the checksum, %s replayed", tx.AppID, tx.Version, txnDesc(got, ok)))
			break
		}
	}
	for _, d := range c.DomainMetadata {
		if d.Removed {
			continue
		}
		if got, ok := s.domains[d.Domain]; !ok || got.Configuration != d.Configuration {
			mm = append(mm, fmt.Sprintf("domainMetadata: domain %q differs", d.Domain))
			break
		}
	}
	if cf.present["allFiles"] {
		if msg := compareAllFiles(c.AllFiles, s); msg != "" {
			mm = append(mm, msg)
		}
	}
	if len(mm) == 0 {
		return nil
	}
	return &ChecksumMismatchError{Version: s.version, Mismatches: mm}
}

func txnDesc(t Txn, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("version %d", t.Version)
}

func compareAllFiles(all []Add, s *Snapshot) string {
	if len(all) != s.files.len() {
		return fmt.Sprintf("allFiles: %d in the checksum, %d replayed", len(all), s.files.len())
	}
	for i := range all {
		p, err := resolvePath(s.root, all[i].Path)
		if err != nil {
			return fmt.Sprintf("allFiles: %v", err)
		}
		got, ok := s.files.get(fileKey{p, all[i].DeletionVector.UniqueID()})
		if !ok {
			return fmt.Sprintf("allFiles: %s is not live", all[i].Path)
		}
		if got.Size != all[i].Size {
			return fmt.Sprintf("allFiles: %s has size %d in the checksum, %d replayed", all[i].Path, all[i].Size, got.Size)
		}
	}
	return ""
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
