package txlog

import (
	"iter"
	"slices"
	"sort"
)

// fileSet is an immutable set of actions keyed by fileKey, ordered by key:
// the live adds and the tombstones of a Snapshot. It is a list of sorted
// chunks of at most fileChunkMax entries, so that a lookup is two binary
// searches and a snapshot advanced by one commit shares every chunk the
// commit did not touch with the snapshot it came from (fileSetEditor copies
// the chunk list, O(files/fileChunkTarget) pointers, and only the chunks it
// changes): no per-commit copy of every file, and no map beside the order.
type fileSet[T any] struct {
	chunks []*fileChunk[T]
	n      int
}

// fileEntry is one key and its action.
type fileEntry[T any] struct {
	key fileKey
	val *T
}

// fileChunk is a run of entries in strictly ascending key order, never
// empty inside a fileSet.
type fileChunk[T any] struct {
	e []fileEntry[T]
}

const (
	fileChunkTarget = 256 // entries per chunk a builder writes
	fileChunkMax    = 512 // a chunk grown past this is split in two
)

// len is the number of entries.
func (s *fileSet[T]) len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// chunkFor is the index of the chunk that holds k or would hold it: the
// last chunk whose first key is <= k (0 when k precedes them all).
func (s *fileSet[T]) chunkFor(k fileKey) int {
	i := sort.Search(len(s.chunks), func(i int) bool { return compareKeys(s.chunks[i].e[0].key, k) > 0 })
	return max(i-1, 0)
}

func searchChunk[T any](c *fileChunk[T], k fileKey) (int, bool) {
	return slices.BinarySearchFunc(c.e, k, func(e fileEntry[T], k fileKey) int { return compareKeys(e.key, k) })
}

// get returns the action of key k.
func (s *fileSet[T]) get(k fileKey) (*T, bool) {
	if s.len() == 0 {
		return nil, false
	}
	c := s.chunks[s.chunkFor(k)]
	if i, found := searchChunk(c, k); found {
		return c.e[i].val, true
	}
	return nil, false
}

// getPath returns the first action (lowest DV id) whose key has path p.
func (s *fileSet[T]) getPath(p string) (*T, bool) {
	if s.len() == 0 {
		return nil, false
	}
	k := fileKey{path: p}
	ci := s.chunkFor(k)
	c := s.chunks[ci]
	i, _ := searchChunk(c, k)
	if i == len(c.e) {
		if ci+1 == len(s.chunks) {
			return nil, false
		}
		c, i = s.chunks[ci+1], 0
	}
	if c.e[i].key.path != p {
		return nil, false
	}
	return c.e[i].val, true
}

// all yields every key and action in key order.
func (s *fileSet[T]) all() iter.Seq2[fileKey, *T] {
	return func(yield func(fileKey, *T) bool) {
		if s == nil {
			return
		}
		for _, c := range s.chunks {
			for _, e := range c.e {
				if !yield(e.key, e.val) {
					return
				}
			}
		}
	}
}

// values returns the actions in key order, in a new slice.
func (s *fileSet[T]) values() []*T {
	out := make([]*T, 0, s.len())
	if s == nil {
		return out
	}
	for _, c := range s.chunks {
		for _, e := range c.e {
			out = append(out, e.val)
		}
	}
	return out
}

// entries returns the entries in key order, in a new slice.
func (s *fileSet[T]) entries() []fileEntry[T] {
	out := make([]fileEntry[T], 0, s.len())
	if s == nil {
		return out
	}
	for _, c := range s.chunks {
		out = append(out, c.e...)
	}
	return out
}

// fileSetBuilder builds a fileSet from entries appended in strictly
// ascending key order.
type fileSetBuilder[T any] struct {
	s   fileSet[T]
	cur *fileChunk[T]
}

// last is the last key appended (ok false when none).
func (b *fileSetBuilder[T]) last() (fileKey, bool) {
	if b.cur == nil {
		return fileKey{}, false
	}
	return b.cur.e[len(b.cur.e)-1].key, true
}

// add appends k, which must be greater than every key appended before.
func (b *fileSetBuilder[T]) add(k fileKey, v *T) {
	if b.cur == nil || len(b.cur.e) == fileChunkTarget {
		b.cur = &fileChunk[T]{e: make([]fileEntry[T], 0, fileChunkTarget)}
		b.s.chunks = append(b.s.chunks, b.cur)
	}
	b.cur.e = append(b.cur.e, fileEntry[T]{k, v})
	b.s.n++
}

// has reports whether k was appended.
func (b *fileSetBuilder[T]) has(k fileKey) bool {
	_, ok := b.s.get(k)
	return ok
}

// done returns the set built; the builder must not be used after.
func (b *fileSetBuilder[T]) done() *fileSet[T] {
	s := b.s
	s.chunks = slices.Clip(s.chunks)
	b.s, b.cur = fileSet[T]{}, nil
	return &s
}

// fileSetEditor makes a new fileSet from an existing one without changing
// it: chunks are copied the first time they are written.
type fileSetEditor[T any] struct {
	s     fileSet[T]
	owned map[*fileChunk[T]]bool
}

// edit starts a new set equal to s (nil: empty); s stays as it is.
func (s *fileSet[T]) edit() *fileSetEditor[T] {
	ed := &fileSetEditor[T]{owned: map[*fileChunk[T]]bool{}}
	if s != nil {
		ed.s = fileSet[T]{chunks: slices.Clone(s.chunks), n: s.n}
	}
	return ed
}

// own returns chunk i, copied if it is still shared.
func (ed *fileSetEditor[T]) own(i int) *fileChunk[T] {
	c := ed.s.chunks[i]
	if !ed.owned[c] {
		c = &fileChunk[T]{e: slices.Clone(c.e)}
		ed.s.chunks[i] = c
		ed.owned[c] = true
	}
	return c
}

// put sets the action of k.
func (ed *fileSetEditor[T]) put(k fileKey, v *T) {
	s := &ed.s
	if len(s.chunks) == 0 {
		c := &fileChunk[T]{e: []fileEntry[T]{{k, v}}}
		s.chunks = append(s.chunks, c)
		ed.owned[c] = true
		s.n++
		return
	}
	ci := s.chunkFor(k)
	i, found := searchChunk(s.chunks[ci], k)
	c := ed.own(ci)
	if found {
		c.e[i].val = v
		return
	}
	c.e = slices.Insert(c.e, i, fileEntry[T]{k, v})
	s.n++
	if len(c.e) > fileChunkMax {
		half := len(c.e) / 2
		right := &fileChunk[T]{e: slices.Clone(c.e[half:])}
		c.e = slices.Clip(c.e[:half])
		ed.owned[right] = true
		s.chunks = slices.Insert(s.chunks, ci+1, right)
	}
}

// delete removes k (nothing when absent).
func (ed *fileSetEditor[T]) delete(k fileKey) {
	s := &ed.s
	if len(s.chunks) == 0 {
		return
	}
	ci := s.chunkFor(k)
	i, found := searchChunk(s.chunks[ci], k)
	if !found {
		return
	}
	c := ed.own(ci)
	c.e = slices.Delete(c.e, i, i+1)
	s.n--
	if len(c.e) == 0 {
		delete(ed.owned, c)
		s.chunks = slices.Delete(s.chunks, ci, ci+1)
	}
}

// get returns the action of k in the set being edited.
func (ed *fileSetEditor[T]) get(k fileKey) (*T, bool) { return ed.s.get(k) }

// done returns the new set; the editor must not be used after.
func (ed *fileSetEditor[T]) done() *fileSet[T] {
	s := ed.s
	ed.s, ed.owned = fileSet[T]{}, nil
	return &s
}

// fileSetFromMap builds a set from a map's live (non-nil) entries, sorting
// them; the chunks are slices of one sorted array (capped, so that an
// editor copies a chunk before it grows).
func fileSetFromMap[T any](m map[fileKey]*T) *fileSet[T] {
	ents := make([]fileEntry[T], 0, len(m))
	for k, v := range m {
		if v != nil {
			ents = append(ents, fileEntry[T]{k, v})
		}
	}
	slices.SortFunc(ents, func(a, b fileEntry[T]) int { return compareKeys(a.key, b.key) })
	s := &fileSet[T]{chunks: make([]*fileChunk[T], 0, (len(ents)+fileChunkTarget-1)/fileChunkTarget), n: len(ents)}
	for i := 0; i < len(ents); i += fileChunkTarget {
		j := min(i+fileChunkTarget, len(ents))
		s.chunks = append(s.chunks, &fileChunk[T]{e: ents[i:j:j]})
	}
	return s
}

// mergeFileSet is base with the overrides of over applied (a nil value
// deletes the key), built in one ordered pass.
func mergeFileSet[T any](base *fileSet[T], over map[fileKey]*T) *fileSet[T] {
	if len(over) == 0 {
		if base == nil {
			return &fileSet[T]{}
		}
		return base
	}
	if base.len() == 0 {
		return fileSetFromMap(over)
	}
	keys := make([]fileKey, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	var b fileSetBuilder[T]
	j := 0
	for k, v := range base.all() {
		for ; j < len(keys) && compareKeys(keys[j], k) < 0; j++ {
			if nv := over[keys[j]]; nv != nil {
				b.add(keys[j], nv)
			}
		}
		if j < len(keys) && keys[j] == k {
			if nv := over[k]; nv != nil {
				b.add(k, nv)
			}
			j++
			continue
		}
		b.add(k, v)
	}
	for ; j < len(keys); j++ {
		if nv := over[keys[j]]; nv != nil {
			b.add(keys[j], nv)
		}
	}
	return b.done()
}
