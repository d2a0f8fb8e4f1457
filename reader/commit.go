package reader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/txlog"
)

// Commit is what one commit of a Delta table changed, as a streaming source
// reads it (Delta's DeltaSource.getFileChanges): the data files it added and
// whether it removed data.
type Commit struct {
	// Version of the commit.
	Version int64
	// Adds are the add actions with dataChange=true, in the order of the
	// commit file: the new data of the commit. Adds with dataChange=false
	// (OPTIMIZE, ZORDER, purge) rewrite rows already in the table and are
	// not listed.
	Adds []File
	// Rewritten counts the adds with dataChange=false.
	Rewritten int
	// DataChangeRemoves are the paths of the remove actions with
	// dataChange=true, in commit order: a DELETE, UPDATE, MERGE, overwrite
	// or complete-mode commit, or a deletion vector added to an existing
	// file (remove and add of one path). Empty for appends and OPTIMIZE.
	DataChangeRemoves []string
	// TableID and Schema are those of the commit's metaData action; "" and
	// nil when the commit has none.
	TableID string
	Schema  *schema.StructType
}

// TableID is the id of the table's metaData (the reservoirId of Spark's
// DeltaSourceOffset); "" for a file-sink directory.
func (s *Snapshot) TableID() string {
	if s.delta == nil {
		return ""
	}
	return s.delta.Metadata().ID
}

// ReadCommit reads the commit file of version v of the snapshot's table
// (any version, also one newer than the snapshot). Adds are described with
// this snapshot's schema and partition columns, so that Rows with
// ReadOptions.Files reads them. A commit file that does not exist (not yet
// written, or removed by log cleanup) is an error wrapping
// ErrCommitNotFound that names the version; a commit that cannot be decoded
// wraps txlog's corrupt-log error. Only for Delta snapshots.
func (s *Snapshot) ReadCommit(ctx context.Context, v int64) (*Commit, error) {
	if s.kind != KindDelta || s.log == nil {
		return nil, fmt.Errorf("%w: ReadCommit needs a Delta table, %s is a %s", ErrOption, s.store.URL(), s.kind)
	}
	acts, err := s.log.ReadCommit(ctx, v)
	if errors.Is(err, txlog.ErrVersionNotFound) {
		return nil, fmt.Errorf("%w: %s version %d", ErrCommitNotFound, s.store.URL(), v)
	}
	if err != nil {
		return nil, fmt.Errorf("%s version %d: %w", s.store.URL(), v, err)
	}
	c := &Commit{Version: v}
	for i := range acts {
		a := &acts[i]
		switch {
		case a.Add != nil && a.Add.DataChange:
			f, err := s.fileOf(a.Add)
			if err != nil {
				return nil, err
			}
			c.Adds = append(c.Adds, f)
		case a.Add != nil:
			c.Rewritten++
		case a.Remove != nil && a.Remove.DataChange:
			c.DataChangeRemoves = append(c.DataChangeRemoves, a.Remove.Path)
		case a.MetaData != nil:
			c.TableID = a.MetaData.ID
			sch, err := a.MetaData.Schema()
			if err != nil {
				return nil, fmt.Errorf("%w: %s version %d: schema: %w", ErrCorruptFile, s.store.URL(), v, err)
			}
			c.Schema = sch
		}
	}
	return c, nil
}

// LatestVersion is the newest version of the snapshot's table now (a log
// listing; the snapshot itself does not change). Only for Delta snapshots.
func (s *Snapshot) LatestVersion(ctx context.Context) (int64, error) {
	if s.kind != KindDelta || s.log == nil {
		return -1, fmt.Errorf("%w: LatestVersion needs a Delta table, %s is a %s", ErrOption, s.store.URL(), s.kind)
	}
	v, err := s.log.LatestVersion(ctx)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", s.store.URL(), err)
	}
	return v, nil
}

// FirstVersionAtOrAfter is the first version whose commit timestamp (the
// monotonized one time travel uses, see txlog's History) is at or after t:
// where a stream with startingTimestamp t begins (Delta's
// DeltaSource.getStartingVersionFromTimestamp, which takes the commit
// active at t and, when its timestamp is before t, the next one). A t before
// the first retained commit gives that commit. ok is false when every
// commit is before t.
func (s *Snapshot) FirstVersionAtOrAfter(ctx context.Context, t time.Time) (v int64, ok bool, err error) {
	if s.kind != KindDelta || s.log == nil {
		return -1, false, fmt.Errorf("%w: FirstVersionAtOrAfter needs a Delta table, %s is a %s", ErrOption, s.store.URL(), s.kind)
	}
	hist, err := s.log.History(ctx, 0)
	if err != nil {
		return -1, false, fmt.Errorf("%s: %w", s.store.URL(), err)
	}
	v, ok = -1, false
	for _, e := range hist { // newest first
		if e.Timestamp.Before(t) {
			break
		}
		v, ok = e.Version, true
	}
	return v, ok, nil
}
