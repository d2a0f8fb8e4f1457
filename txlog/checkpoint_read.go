package txlog

import (
	"context"
	"fmt"
)

// readCheckpoint streams the actions of a checkpoint into fn.
func (l *Log) readCheckpoint(ctx context.Context, ref *checkpointRef, fn func(*Action) error) error {
	return fmt.Errorf("txlog: read checkpoint %s: not implemented yet", ref.files[0].info.Path)
}

// Checkpoint writes a checkpoint of snap (stub until the writer lands).
func (l *Log) Checkpoint(ctx context.Context, snap *Snapshot) (*LastCheckpoint, error) {
	return nil, fmt.Errorf("txlog: checkpoint: not implemented yet")
}
