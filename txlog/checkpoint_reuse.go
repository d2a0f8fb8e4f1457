package txlog

import (
	"bytes"
	"reflect"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Reuse of the previous checkpoint's row groups.
//
// A blind append changes a handful of the adds a checkpoint lists, and a
// checkpoint is written every delta.checkpointInterval (10) versions, so
// re-encoding every add each time is most of an append's CPU on a large
// table. Checkpoint therefore lays its file out as
//
//	[protocol, metaData, txns, domains] [adds]... [tombstones]
//
// with each row group holding adds only (cut at
// Options.CheckpointRowsPerChunk rows), and remembers, per Log, the last
// checkpoint it wrote itself: its bytes and, for each add-only row group,
// the *Add pointers of its rows (ckptMemo). The next checkpoint copies
// every remembered group whose adds are all still live in the new snapshot
// as the very same *Add (parquet-go's Writer.WriteRowGroup splices a row
// group of a parquet.File with the writer's schema, codec and encodings in
// verbatim, without decoding it), and encodes only the other adds.
//
// Why pointer identity is exact: a Snapshot's actions are immutable and
// shared with the snapshots advanced from it (Snapshot.advance,
// fileSetEditor); a commit that removes a file, re-adds it, or adds its
// path again puts a new *Add under the key, so a group holding the old
// pointer is not reused. The bytes of the group were encoded from those
// same pointers, so copying them writes exactly the rows a full rewrite
// would. A snapshot loaded otherwise (another Log, a fresh replay) shares
// no pointer with the memo: nothing is reused and the checkpoint is a full
// rewrite, unless that replay seeded the memo from the checkpoint it read
// (below, "A memo seeded from a loaded checkpoint").
//
// Why bytes the Log wrote (or read) itself: checkpoints are overwritable
// (two writers may write the same version's checkpoint, with different row
// groups), so a file read back from the store could hold other rows than
// the memo says. The memo keeps the bytes in memory up to
// ckptMemoMaxBytes; a larger checkpoint is not remembered (always a full
// rewrite).
//
// The number of row groups stays logarithmic: the adds not in a reused
// group (new, or from a group that lost one) are encoded as the newest
// groups, and while they number at least half the rows of the newest
// reused group that is not full (< CheckpointRowsPerChunk rows), that group
// is re-encoded with them, as a binary counter carries. Each reused
// group so holds more than twice the rows of the one after it, or is full:
// a table of N files has at most N/CheckpointRowsPerChunk + log2(N) + 3
// row groups (TestCheckpointReuseBoundsRowGroups).
//
// Anything else (a protocol or metaData different from the memo's, no
// memo) is a full rewrite. The rows are not sorted across groups; the
// replay of a checkpoint does not need them to be (replayer.addFile).

// ckptMemoMaxBytes is the largest checkpoint a Log keeps in memory for
// reuse (64 MiB; a table of roughly 300,000 files).
const ckptMemoMaxBytes = 64 << 20

// ckptMemo is a checkpoint this Log wrote: its bytes, opened, and what
// each row group holds.
type ckptMemo struct {
	version  int64
	protocol Protocol
	metadata Metadata
	file     *parquet.File
	groups   []ckptGroup // by row group index
	// where is the add-only group index of each add (index).
	whereOnce sync.Once
	where     map[*Add]int
	// encoded is how many of the checkpoint's rows were encoded (the
	// others copied), for the tests.
	encoded, encodedAdds int64
}

// ckptGroup is one row group of a checkpoint: the adds of its rows, in row
// order, when every row is an add (nil otherwise: not reusable).
type ckptGroup struct {
	adds []*Add
}

// ckptMemoSlot holds a Log's last checkpoint memo.
type ckptMemoSlot struct {
	// maxBytes is the largest checkpoint kept (ckptMemoMaxBytes; tests
	// set less).
	maxBytes int64
	mu       sync.Mutex
	memo     *ckptMemo
}

func (s *ckptMemoSlot) get() *ckptMemo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memo
}

// set keeps m unless the slot holds a newer checkpoint's memo.
func (s *ckptMemoSlot) set(m *ckptMemo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memo == nil || m == nil || m.version >= s.memo.version {
		s.memo = m
	}
}

// clear drops m when the slot still holds it (a newer memo set meanwhile
// is kept).
func (s *ckptMemoSlot) clear(m *ckptMemo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m != nil && s.memo == m {
		s.memo = nil
	}
}

// newCkptMemo opens data, the checkpoint of version written with groups.
// It returns nil when data cannot be opened (nothing is reused then).
func newCkptMemo(version int64, proto Protocol, md Metadata, data []byte, groups []ckptGroup, encoded, encodedAdds int64) *ckptMemo {
	// The page indexes are read when a group is copied (most are not).
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil
	}
	return newCkptMemoOf(version, proto, md, f, groups, encoded, encodedAdds)
}

// newCkptMemoOf is the memo of f, the checkpoint of version whose row
// groups hold groups; nil when they do not match f's.
func newCkptMemoOf(version int64, proto Protocol, md Metadata, f *parquet.File, groups []ckptGroup, encoded, encodedAdds int64) *ckptMemo {
	if len(f.RowGroups()) != len(groups) {
		return nil
	}
	for g, grp := range groups {
		if grp.adds != nil && int64(len(grp.adds)) != f.RowGroups()[g].NumRows() {
			return nil
		}
	}
	return &ckptMemo{version: version, protocol: proto, metadata: md, file: f, groups: groups, encoded: encoded, encodedAdds: encodedAdds}
}

// index is the add-only group index of each add, built at the first
// checkpoint that plans with m (a Log that only reads builds none); nil
// when an add is in two groups (no exact identity: nothing is reused).
func (m *ckptMemo) index() map[*Add]int {
	m.whereOnce.Do(func() {
		n := 0
		for _, g := range m.groups {
			n += len(g.adds)
		}
		where := make(map[*Add]int, n)
		for g, grp := range m.groups {
			for _, a := range grp.adds {
				if _, dup := where[a]; dup {
					return
				}
				where[a] = g
			}
		}
		m.where = where
	})
	return m.where
}

// ckptPlan is what a checkpoint copies and what it encodes.
type ckptPlan struct {
	reuse []int  // memo row groups to copy, in order
	fresh []*Add // the other live adds, in key order
}

// planCkptReuse decides which of memo's row groups the checkpoint of snap,
// whose live adds are files (key order), copies. nil memo, or a protocol
// or metaData unlike the memo's: nothing is reused.
func planCkptReuse(memo *ckptMemo, proto Protocol, md Metadata, files []*Add, perChunk int) ckptPlan {
	if memo == nil || !reflect.DeepEqual(memo.protocol, proto) || !reflect.DeepEqual(memo.metadata, md) {
		return ckptPlan{fresh: files}
	}
	where := memo.index()
	if where == nil {
		return ckptPlan{fresh: files}
	}
	// of[i] is the memo group of files[i] (-1: none), looked up once.
	live, of := make([]int, len(memo.groups)), make([]int32, len(files))
	for i, a := range files {
		g, ok := where[a]
		if !ok {
			of[i] = -1
			continue
		}
		of[i] = int32(g)
		live[g]++
	}
	var reuse []int
	kept := 0
	for g, grp := range memo.groups {
		if len(grp.adds) > 0 && live[g] == len(grp.adds) {
			reuse = append(reuse, g)
			kept += len(grp.adds)
		}
	}
	// The carry: re-encode the newest groups that are not full while the
	// adds to encode number at least half of theirs.
	for len(reuse) > 0 {
		n := len(memo.groups[reuse[len(reuse)-1]].adds)
		if n >= perChunk || 2*(len(files)-kept) < n {
			break
		}
		reuse = reuse[:len(reuse)-1]
		kept -= n
	}
	in := make([]bool, len(memo.groups))
	for _, g := range reuse {
		in[g] = true
	}
	fresh := make([]*Add, 0, len(files)-kept)
	for i, a := range files {
		if g := of[i]; g < 0 || !in[g] {
			fresh = append(fresh, a)
		}
	}
	return ckptPlan{reuse: reuse, fresh: fresh}
}

// A memo seeded from a loaded checkpoint.
//
// A Log that has not written a checkpoint yet (a writer just opened) would
// rewrite every add in its first one. When the snapshot it loads is
// replayed from a classic checkpoint file this package could have written
// (ckptSeedable: the schema of its own checkpoints and, per add-only row
// group, column chunks parquet-go copies verbatim into its writer), the
// bytes read for that replay, and the *Add decoded from each add-only row
// group, seed the memo (Log.replay), exactly as after a checkpoint the Log
// wrote: copying such a group writes the rows it was decoded into. Only
// those bytes are kept, never a second read of the store (the file may
// have been overwritten since by another writer). A checkpoint of another
// schema (Spark, delta-rs), multi-part or V2, larger than
// ckptMemoMaxBytes, or with no add-only row group seeds nothing; its
// mixed row groups (adds with other actions) are not reused.

// ckptLayout is what this package's checkpoint writer makes of a column
// chunk: its schema, and per leaf column the physical type, codec, data
// page type and encoding pairs, and whether a dictionary page comes first.
// A row group of a file of the same schema whose every column chunk
// matches (and has its column and offset index) is one parquet-go's
// Writer.WriteRowGroup copies verbatim (writer_copy.go,
// columnChunkIsCopyable: same type, codec, page version and encoding,
// dictionary presence, page index present).
type ckptLayout struct {
	schema *parquet.Schema
	cols   []ckptColLayout
}

type ckptColLayout struct {
	typ   format.Type
	codec format.CompressionCodec
	pages []format.PageEncodingStats // PageType and Encoding set, Count 0
	dict  bool
}

// newCkptLayout writes a one-row checkpoint (an add with every field) with
// this package's writer and records its column chunks' layout; nil if that
// fails.
func newCkptLayout() *ckptLayout {
	var buf bytes.Buffer
	fw, err := newCkptFileWriter(&buf, 1)
	if err != nil {
		return nil
	}
	off, pv := int32(1), "v"
	rid, rcv := int64(0), int64(1)
	a := &Add{Path: "p", PartitionValues: map[string]*string{"k": &pv}, Size: 1, ModificationTime: 1, DataChange: true,
		Stats: "{}", Tags: map[string]string{"k": "v"}, BaseRowID: &rid, DefaultRowCommitVersion: &rcv, ClusteringProvider: "c",
		DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDV: "x", Offset: &off, SizeInBytes: 1, Cardinality: 1}}
	if fw.add(&Action{Add: a}) != nil || fw.finish() != nil {
		return nil
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(f.Metadata().RowGroups) != 1 {
		return nil
	}
	l := &ckptLayout{schema: fw.pw.Schema()}
	for _, c := range f.Metadata().RowGroups[0].Columns {
		cl := ckptColLayout{typ: c.MetaData.Type, codec: c.MetaData.Codec}
		for _, s := range c.MetaData.EncodingStats {
			if s.PageType == format.DictionaryPage {
				cl.dict = true
				continue
			}
			if !slices.ContainsFunc(cl.pages, func(p format.PageEncodingStats) bool {
				return p.PageType == s.PageType && p.Encoding == s.Encoding
			}) {
				cl.pages = append(cl.pages, format.PageEncodingStats{PageType: s.PageType, Encoding: s.Encoding})
			}
		}
		l.cols = append(l.cols, cl)
	}
	return l
}

// copyable reports every column chunk of rg (file metadata) laid out as
// this package writes it, with its page index.
func (l *ckptLayout) copyable(rg *format.RowGroup) bool {
	if len(rg.Columns) != len(l.cols) {
		return false
	}
	for i, c := range rg.Columns {
		want, m := l.cols[i], &c.MetaData
		if m.Type != want.typ || m.Codec != want.codec || c.ColumnIndexOffset == 0 || c.OffsetIndexOffset == 0 || len(m.EncodingStats) == 0 {
			return false
		}
		dict := false
		for _, s := range m.EncodingStats {
			if s.PageType == format.DictionaryPage {
				dict = true
				continue
			}
			if !slices.ContainsFunc(want.pages, func(p format.PageEncodingStats) bool {
				return p.PageType == s.PageType && p.Encoding == s.Encoding
			}) {
				return false
			}
		}
		if dict != want.dict {
			return false
		}
	}
	return true
}

// ckptWriteLayout is how this package's writer lays out a checkpoint's
// column chunks: static, like ckptWriteLeaves, so made once per process
// (at the first checkpoint replay that could seed a memo), not per Log.
var ckptWriteLayout = sync.OnceValue(newCkptLayout)

// ckptSeed collects, while a checkpoint file is replayed, what a memo of
// it needs: the file (over the bytes read) and, per row group, the adds
// decoded from it when every row is an add (readCheckpointColumns).
type ckptSeed struct {
	slot   *ckptMemoSlot
	layout *ckptLayout
	file   *parquet.File
	groups []ckptGroup
}

// seedable reports a file of size bytes with f's schema worth collecting
// for a memo (the layout is made at the first such file).
func (sd *ckptSeed) seedable(f *parquet.File, size int) bool {
	if sd == nil || int64(size) > sd.slot.maxBytes {
		return false
	}
	sd.layout = ckptWriteLayout()
	return sd.layout != nil && parquet.EqualNodes(f.Schema(), sd.layout.schema)
}

// memo is the memo of the collected file, the checkpoint of version with
// proto and md; nil when nothing can be reused.
func (sd *ckptSeed) memo(version int64, proto Protocol, md Metadata) *ckptMemo {
	if sd == nil || sd.file == nil {
		return nil
	}
	meta := sd.file.Metadata()
	if len(meta.RowGroups) != len(sd.groups) {
		return nil
	}
	some := false
	for i := range sd.groups {
		if sd.groups[i].adds != nil && !sd.layout.copyable(&meta.RowGroups[i]) {
			sd.groups[i].adds = nil
		}
		some = some || len(sd.groups[i].adds) > 0
	}
	if !some {
		return nil
	}
	return newCkptMemoOf(version, proto, md, sd.file, sd.groups, 0, 0)
}
