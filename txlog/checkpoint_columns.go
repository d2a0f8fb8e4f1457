package txlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// Column-wise reading of the add actions of a checkpoint Parquet file.
//
// A checkpoint of a large table is nearly all add rows (PROTOCOL.md,
// "Checkpoint Schema": one action per row, each in its own column group).
// Reading them through a GenericReader builds a row of every column group
// for each of them and converts it to Go values field by field; here each
// add column is read page by page into one slab of Add structs per row
// group. Rows that hold anything but an add (protocol, metaData, txn,
// remove, domainMetadata, V2 actions), or an add together with another
// action, still go through the GenericReader (ckptReadRow.toAction), so
// both paths give the same actions in the same order; a file whose add
// columns do not have the expected shape is read by the GenericReader
// alone.

// ckptAddColumns are the leaf columns of the add group that toAction reads.
type ckptAddColumns struct {
	path, size, modTime, dataChange, stats, clustering, baseRowID, defaultRowCV leafCol
	pvKey, pvValue, tagKey, tagValue                                            leafCol
	dvStorage, dvPath, dvOffset, dvSize, dvCardinality                          leafCol
	addDef                                                                      int             // definition level at which the add group is present
	pvDef, tagsDef                                                              int             // ... the partitionValues / tags map is present (non-null)
	schema                                                                      *parquet.Schema // the schema the columns were looked up in (conventionalMapNames of the file's)
	// others: one leaf of every other top-level group, with the definition
	// level at which its group is present (a row holds that action).
	others []leafCol
}

// leafCol is one leaf column (index < 0: absent from the file).
type leafCol struct {
	index   int
	maxDef  int
	kind    parquet.Kind
	present int // for others: the group's definition level
}

// lookupAddColumns maps the add columns of schema s; ok is false when the
// file has no add group or one whose leaves are not of the types the
// checkpoint schema gives them (the caller then reads rows generically).
func lookupAddColumns(s *parquet.Schema) (c *ckptAddColumns, ok bool) {
	add, found := fieldOf(s, "add")
	if !found || add.Leaf() {
		return nil, false
	}
	c = &ckptAddColumns{addDef: optLevel(add), schema: s}
	scalar := func(dst *leafCol, kind parquet.Kind, path ...string) bool {
		*dst = leafCol{index: -1}
		leaf, found := s.Lookup(append([]string{"add"}, path...)...)
		if !found {
			return fieldPathExists(s, append([]string{"add"}, path...)) == false
		}
		if leaf.MaxRepetitionLevel != 0 || leaf.Node.Type().Kind() != kind {
			return false
		}
		*dst = leafCol{index: leaf.ColumnIndex, maxDef: leaf.MaxDefinitionLevel, kind: kind}
		return true
	}
	// A string map: group (MAP) { repeated group <kv> { key; value } }.
	strMapCols := func(key, value *leafCol, def *int, name string) bool {
		*key, *value = leafCol{index: -1}, leafCol{index: -1}
		m, found := fieldOf(add, name)
		if !found {
			return true
		}
		if m.Leaf() || len(m.Fields()) != 1 {
			return false
		}
		*def = c.addDef + optLevel(m)
		kv := m.Fields()[0]
		if !kv.Repeated() || kv.Leaf() || len(kv.Fields()) != 2 {
			return false
		}
		// The GenericReader maps only the conventional name (an arrow-rs
		// "entries" group reads as a null map there); the same here, so
		// that both paths read a file alike.
		if kv.Name() != "key_value" {
			return false
		}
		kn, vn := kv.Fields()[0], kv.Fields()[1]
		if kn.Name() != "key" || vn.Name() != "value" || !kn.Leaf() || !vn.Leaf() || !kn.Required() {
			return false
		}
		kl, ok1 := s.Lookup("add", name, kv.Name(), "key")
		vl, ok2 := s.Lookup("add", name, kv.Name(), "value")
		if !ok1 || !ok2 || kl.MaxRepetitionLevel != 1 || vl.MaxRepetitionLevel != 1 ||
			kl.Node.Type().Kind() != parquet.ByteArray || vl.Node.Type().Kind() != parquet.ByteArray {
			return false
		}
		*key = leafCol{index: kl.ColumnIndex, maxDef: kl.MaxDefinitionLevel, kind: parquet.ByteArray}
		*value = leafCol{index: vl.ColumnIndex, maxDef: vl.MaxDefinitionLevel, kind: parquet.ByteArray}
		return true
	}
	if !scalar(&c.path, parquet.ByteArray, "path") || c.path.index < 0 ||
		!scalar(&c.size, parquet.Int64, "size") ||
		!scalar(&c.modTime, parquet.Int64, "modificationTime") ||
		!scalar(&c.dataChange, parquet.Boolean, "dataChange") ||
		!scalar(&c.stats, parquet.ByteArray, "stats") ||
		!scalar(&c.clustering, parquet.ByteArray, "clusteringProvider") ||
		!scalar(&c.baseRowID, parquet.Int64, "baseRowId") ||
		!scalar(&c.defaultRowCV, parquet.Int64, "defaultRowCommitVersion") ||
		!scalar(&c.dvStorage, parquet.ByteArray, "deletionVector", "storageType") ||
		!scalar(&c.dvPath, parquet.ByteArray, "deletionVector", "pathOrInlineDv") ||
		!scalar(&c.dvOffset, parquet.Int32, "deletionVector", "offset") ||
		!scalar(&c.dvSize, parquet.Int32, "deletionVector", "sizeInBytes") ||
		!scalar(&c.dvCardinality, parquet.Int64, "deletionVector", "cardinality") ||
		!strMapCols(&c.pvKey, &c.pvValue, &c.pvDef, "partitionValues") ||
		!strMapCols(&c.tagKey, &c.tagValue, &c.tagsDef, "tags") {
		return nil, false
	}
	for _, g := range s.Fields() {
		if g.Name() == "add" {
			continue
		}
		path := []string{g.Name()}
		n := g
		for !n.Leaf() {
			if len(n.Fields()) == 0 {
				return nil, false
			}
			n = n.Fields()[0]
			path = append(path, n.Name())
		}
		leaf, found := s.Lookup(path...)
		if !found {
			return nil, false
		}
		c.others = append(c.others, leafCol{index: leaf.ColumnIndex, maxDef: leaf.MaxDefinitionLevel, present: optLevel(g)})
	}
	return c, true
}

// fieldOf returns the child of n named name.
func fieldOf(n parquet.Node, name string) (parquet.Node, bool) {
	for _, f := range n.Fields() {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}

// fieldPathExists reports a node at path, leaf or not.
func fieldPathExists(s *parquet.Schema, path []string) bool {
	var n parquet.Node = s
	for _, p := range path {
		f, ok := fieldOf(n, p)
		if !ok {
			return false
		}
		n = f
	}
	return true
}

// optLevel is the definition level a node adds: 1 if optional or repeated.
func optLevel(n parquet.Node) int {
	if n.Required() {
		return 0
	}
	return 1
}

// errCkptShape: a page that does not hold what the schema says (a value
// count that does not match the row count).
var errCkptShape = errors.New("checkpoint column does not match the row count")

// readColumn calls fn for every value of column col in row group rg, with
// the 0-based row it belongs to (a value with repetition level 0 starts a
// row). fn copies what it keeps of a byte array value: each page goes
// back to parquet-go's buffer pool once read (parquet.Release), so that a
// checkpoint's pages are not garbage the size of the decompressed file.
func readColumn(rg parquet.RowGroup, col int, fn func(row int, v parquet.Value) error) error {
	pages := rg.ColumnChunks()[col].Pages()
	defer pages.Close()
	bp := valueBufs.Get().(*[]parquet.Value)
	defer valueBufs.Put(bp)
	buf := *bp
	row := -1
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = func() error {
			defer parquet.Release(p)
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if v.RepetitionLevel() == 0 {
						row++
					}
					if row < 0 {
						return errCkptShape
					}
					if err := fn(row, v); err != nil {
						return err
					}
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
			}
		}()
		if err != nil {
			return err
		}
	}
}

// valueBufs are readColumn's value buffers.
var valueBufs = sync.Pool{New: func() any {
	b := make([]parquet.Value, 1024)
	return &b
}}

// stringArena copies byte arrays into large shared strings, so that a
// row group's paths and stats cost a few allocations instead of one each.
// A strings.Builder never changes the bytes it has written, so the
// substrings of its String stay valid as it grows; a new builder starts
// when the current one is full.
type stringArena struct {
	sb strings.Builder
}

func (a *stringArena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 4096 {
		return string(b)
	}
	if a.sb.Cap()-a.sb.Len() < len(b) {
		a.sb = strings.Builder{}
		a.sb.Grow(256 << 10)
	}
	start := a.sb.Len()
	a.sb.Write(b)
	return a.sb.String()[start:]
}

// readAddsColumnWise decodes the add rows of row group rg. pure[i] is
// true when row i holds only an add with a non-empty path (the adds of
// the other rows are left to the generic reader). The partitionValues
// maps come from intern.
func readAddsColumnWise(rg parquet.RowGroup, c *ckptAddColumns, intern *mapInterner) (adds []Add, pure []bool, err error) {
	n := int(rg.NumRows())
	adds = make([]Add, n)
	pure = make([]bool, n)
	present := make([]bool, n) // add group present with a non-empty path
	var arena stringArena
	check := func(row int) error {
		if row >= n {
			return errCkptShape
		}
		return nil
	}
	if err := readColumn(rg, c.path.index, func(row int, v parquet.Value) error {
		if err := check(row); err != nil {
			return err
		}
		if v.DefinitionLevel() == c.path.maxDef && len(v.ByteArray()) > 0 {
			present[row] = true
			adds[row].Path = arena.str(v.ByteArray())
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	copy(pure, present)
	// Rows holding another action too go to the generic reader.
	for _, o := range c.others {
		if err := readColumn(rg, o.index, func(row int, v parquet.Value) error {
			if err := check(row); err != nil {
				return err
			}
			if v.DefinitionLevel() >= o.present {
				pure[row] = false
			}
			return nil
		}); err != nil {
			return nil, nil, err
		}
	}
	int64Col := func(col leafCol, set func(a *Add, x int64)) error {
		if col.index < 0 {
			return nil
		}
		return readColumn(rg, col.index, func(row int, v parquet.Value) error {
			if err := check(row); err != nil {
				return err
			}
			if pure[row] && v.DefinitionLevel() == col.maxDef {
				set(&adds[row], v.Int64())
			}
			return nil
		})
	}
	strCol := func(col leafCol, set func(a *Add, s string)) error {
		if col.index < 0 {
			return nil
		}
		return readColumn(rg, col.index, func(row int, v parquet.Value) error {
			if err := check(row); err != nil {
				return err
			}
			if pure[row] && v.DefinitionLevel() == col.maxDef {
				set(&adds[row], arena.str(v.ByteArray()))
			}
			return nil
		})
	}
	if err := errors.Join(
		int64Col(c.size, func(a *Add, x int64) { a.Size = x }),
		int64Col(c.modTime, func(a *Add, x int64) { a.ModificationTime = x }),
		int64Col(c.baseRowID, func(a *Add, x int64) { a.BaseRowID = &x }),
		int64Col(c.defaultRowCV, func(a *Add, x int64) { a.DefaultRowCommitVersion = &x }),
		strCol(c.stats, func(a *Add, s string) { a.Stats = s }),
		strCol(c.clustering, func(a *Add, s string) { a.ClusteringProvider = s }),
	); err != nil {
		return nil, nil, err
	}
	if c.dataChange.index >= 0 {
		if err := readColumn(rg, c.dataChange.index, func(row int, v parquet.Value) error {
			if err := check(row); err != nil {
				return err
			}
			if pure[row] && v.DefinitionLevel() == c.dataChange.maxDef {
				adds[row].DataChange = v.Boolean()
			}
			return nil
		}); err != nil {
			return nil, nil, err
		}
	}
	if err := readDVColumns(rg, c, adds, pure, &arena); err != nil {
		return nil, nil, err
	}
	// partitionValues: {} when null or empty, as toAction normalizes.
	pvs, err := readStringMaps(rg, c.pvKey, c.pvValue, c.pvDef, n, pure, &arena, intern)
	if err != nil {
		return nil, nil, err
	}
	tags, err := readStringMaps(rg, c.tagKey, c.tagValue, c.tagsDef, n, pure, &arena, nil)
	if err != nil {
		return nil, nil, err
	}
	for i := range adds {
		if !pure[i] {
			continue
		}
		if pvs != nil && pvs[i] != nil {
			adds[i].PartitionValues = pvs[i]
		} else {
			adds[i].PartitionValues = intern.empty
		}
		if tags != nil && tags[i] != nil {
			adds[i].Tags = strMap(tags[i])
		}
	}
	return adds, pure, nil
}

// readDVColumns fills the deletion vector descriptors (nil unless
// storageType is non-empty, as ckptDV.toAction).
func readDVColumns(rg parquet.RowGroup, c *ckptAddColumns, adds []Add, pure []bool, arena *stringArena) error {
	if c.dvStorage.index < 0 {
		return nil
	}
	n := len(adds)
	dvs := make([]*DeletionVector, n)
	if err := readColumn(rg, c.dvStorage.index, func(row int, v parquet.Value) error {
		if row >= n {
			return errCkptShape
		}
		if pure[row] && v.DefinitionLevel() == c.dvStorage.maxDef && len(v.ByteArray()) > 0 {
			dvs[row] = &DeletionVector{StorageType: arena.str(v.ByteArray())}
		}
		return nil
	}); err != nil {
		return err
	}
	each := func(col leafCol, set func(dv *DeletionVector, v parquet.Value)) error {
		if col.index < 0 {
			return nil
		}
		return readColumn(rg, col.index, func(row int, v parquet.Value) error {
			if row >= n {
				return errCkptShape
			}
			if dvs[row] != nil && v.DefinitionLevel() == col.maxDef {
				set(dvs[row], v)
			}
			return nil
		})
	}
	if err := errors.Join(
		each(c.dvPath, func(dv *DeletionVector, v parquet.Value) { dv.PathOrInlineDV = arena.str(v.ByteArray()) }),
		each(c.dvOffset, func(dv *DeletionVector, v parquet.Value) { x := v.Int32(); dv.Offset = &x }),
		each(c.dvSize, func(dv *DeletionVector, v parquet.Value) { dv.SizeInBytes = v.Int32() }),
		each(c.dvCardinality, func(dv *DeletionVector, v parquet.Value) { dv.Cardinality = v.Int64() }),
	); err != nil {
		return err
	}
	for i, dv := range dvs {
		if dv != nil {
			adds[i].DeletionVector = dv
		}
	}
	return nil
}

// mapInterner shares the partitionValues maps of a checkpoint's adds:
// the files of one partition have the same entries, so each distinct set
// of entries is one map (and one string per value) for all of them, not
// one map per add. The maps are shared by the adds of a Snapshot, which
// callers must not modify.
type mapInterner struct {
	maps  map[string]map[string]*string // by the entries' encoding (sig)
	bytes int                           // the encodings' sizes, bounded by maxInternedBytes
	empty map[string]*string
}

// maxInternedBytes bounds the encodings an interner keeps; past it, new
// sets of entries get maps of their own (a table with mostly distinct
// partition values gains nothing from sharing).
const maxInternedBytes = 4 << 20

func newMapInterner() *mapInterner {
	return &mapInterner{maps: map[string]map[string]*string{}, empty: map[string]*string{}}
}

// mapEntry is one entry of a map being read: its key and, in sig, the
// value's bytes at [off, off+n) (null: a null value).
type mapEntry struct {
	key    string
	off, n int
	null   bool
}

// lookup returns the shared map of the entries encoded in sig, building
// it (with values copied into arena) when new.
func (in *mapInterner) lookup(sig []byte, ents []mapEntry, arena *stringArena) map[string]*string {
	if len(ents) == 0 {
		return in.empty
	}
	if m, ok := in.maps[string(sig)]; ok {
		return m
	}
	m := buildMap(sig, ents, arena)
	if in.bytes+len(sig) <= maxInternedBytes {
		in.maps[string(sig)] = m
		in.bytes += len(sig)
	}
	return m
}

func buildMap(sig []byte, ents []mapEntry, arena *stringArena) map[string]*string {
	m := make(map[string]*string, len(ents))
	for _, e := range ents {
		if e.null {
			m[e.key] = nil
			continue
		}
		v := arena.str(sig[e.off : e.off+e.n])
		m[e.key] = &v
	}
	return m
}

// readStringMaps reads a map<string,string> column pair: out[i] is row
// i's map, nil when the map is null (empty when empty, as the
// GenericReader reconstructs them). The key and value columns have the
// same levels; entries are read in lockstep. A null value is a nil
// *string. Duplicate keys: the last wins. With an interner, the keys are
// shared and so are maps of the same entries (partitionValues).
func readStringMaps(rg parquet.RowGroup, key, value leafCol, mapDef, n int, pure []bool, arena *stringArena, intern *mapInterner) ([]map[string]*string, error) {
	if key.index < 0 {
		return nil, nil
	}
	if n > math.MaxInt32 {
		return nil, errCkptShape
	}
	// One entry per value of the key column: the row (-1-row for a null
	// map or a row left to the generic reader) and the key, an index into
	// keyStrs (-1: an empty map, a row with no entry).
	type entry struct {
		row, key int32
	}
	entries := make([]entry, 0, n)
	var keyStrs []string
	keys := map[string]int32{}
	if err := readColumn(rg, key.index, func(row int, v parquet.Value) error {
		if row >= n {
			return errCkptShape
		}
		e := entry{row: int32(row), key: -1}
		if pure[row] && v.DefinitionLevel() >= mapDef {
			if v.DefinitionLevel() == key.maxDef {
				b := v.ByteArray()
				ki, ok := keys[string(b)]
				if !ok {
					ki = int32(len(keyStrs))
					k := strings.Clone(string(b))
					keyStrs = append(keyStrs, k)
					if intern != nil && len(keys) < 1024 {
						keys[k] = ki
					}
				}
				e.key = ki
			}
		} else {
			e.row = int32(-1 - row)
		}
		entries = append(entries, e)
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]map[string]*string, n)
	// The entries of the row being read (cur), encoded in sig: each key's
	// length and bytes, then 0 for a null value or 1, the length and the
	// bytes.
	cur := -1
	var sig []byte
	var ents []mapEntry
	flush := func() {
		if cur < 0 {
			return
		}
		if intern != nil {
			out[cur] = intern.lookup(sig, ents, arena)
		} else {
			out[cur] = buildMap(sig, ents, arena)
		}
		cur, sig, ents = -1, sig[:0], ents[:0]
	}
	i := 0
	if err := readColumn(rg, value.index, func(row int, v parquet.Value) error {
		if i >= len(entries) {
			return errCkptShape
		}
		e := entries[i]
		i++
		if e.row < 0 {
			if int(-1-e.row) != row {
				return errCkptShape
			}
			return nil
		}
		if int(e.row) != row {
			return errCkptShape
		}
		if row != cur {
			flush()
			cur = row
		}
		if e.key < 0 {
			return nil
		}
		k := keyStrs[e.key]
		sig = binary.AppendUvarint(sig, uint64(len(k)))
		sig = append(sig, k...)
		if v.DefinitionLevel() == value.maxDef {
			b := v.ByteArray()
			sig = append(sig, 1)
			sig = binary.AppendUvarint(sig, uint64(len(b)))
			ents = append(ents, mapEntry{key: k, off: len(sig), n: len(b)})
			sig = append(sig, b...)
		} else {
			sig = append(sig, 0)
			ents = append(ents, mapEntry{key: k, null: true})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	flush()
	if i != len(entries) {
		return nil, errCkptShape
	}
	return out, nil
}

// ckptRowRanges are runs [start, end) of rows to read generically.
func ckptRowRanges(pure []bool) [][2]int {
	var out [][2]int
	for i := 0; i < len(pure); {
		if pure[i] {
			i++
			continue
		}
		j := i
		for j < len(pure) && !pure[j] {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// readCheckpointColumns streams the actions of checkpoint file f into fn,
// in row order: pure add rows decoded column-wise, the other rows through
// a GenericReader seeking to them; partitionValues maps are shared through
// intern. With groups non-nil, each row group's entry is appended to it:
// the adds given to fn in row order when every row is an add, else none
// (checkpoint_reuse.go).
func readCheckpointColumns(f *parquet.File, c *ckptAddColumns, intern *mapInterner, groups *[]ckptGroup, check func() error, fn func(*Action) error) error {
	var gr *parquet.GenericReader[ckptReadRow]
	defer func() {
		if gr != nil {
			gr.Close()
		}
	}()
	buf := make([]ckptReadRow, 256)
	base := int64(0)
	var act Action
	for _, rg := range f.RowGroups() {
		if err := check(); err != nil {
			return err
		}
		adds, pure, err := readAddsColumnWise(rg, c, intern)
		if err != nil {
			return fmt.Errorf("read add columns: %w", err)
		}
		if groups != nil {
			var g ckptGroup
			if len(pure) > 0 && !slices.Contains(pure, false) {
				g.adds = make([]*Add, len(adds))
				for i := range adds {
					g.adds[i] = &adds[i]
				}
			}
			*groups = append(*groups, g)
		}
		next := 0 // the next row to emit
		emitAdds := func(to int) error {
			for ; next < to; next++ {
				if pure[next] {
					// One Action for every add: fn keeps a.Add, not a.
					act = Action{Add: &adds[next]}
					if err := fn(&act); err != nil {
						return err
					}
				}
			}
			return nil
		}
		for _, r := range ckptRowRanges(pure) {
			if err := emitAdds(r[0]); err != nil {
				return err
			}
			if gr == nil {
				gr = ckptRowReader(f, c.schema)
			}
			if err := gr.SeekToRow(base + int64(r[0])); err != nil {
				return err
			}
			for left := r[1] - r[0]; left > 0; {
				rows := buf[:min(left, len(buf))]
				clear(rows)
				n, rerr := gr.Read(rows)
				for i := range rows[:n] {
					if a, ok := rows[i].toAction(); ok {
						if err := fn(&a); err != nil {
							return err
						}
					}
				}
				left -= n
				if rerr != nil && !(errors.Is(rerr, io.EOF) && left == 0) {
					if errors.Is(rerr, io.EOF) {
						return errCkptShape
					}
					return rerr
				}
				if n == 0 && left > 0 {
					return errCkptShape
				}
			}
			next = r[1]
		}
		if err := emitAdds(len(pure)); err != nil {
			return err
		}
		base += rg.NumRows()
	}
	return nil
}
