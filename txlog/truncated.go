package txlog

import "fmt"

// truncatedBefore explains why version v, which no checkpoint at or below
// covers, cannot be read when the log was truncated by metadata cleanup: the
// first commit is gone and a complete checkpoint newer than v exists, so the
// table's history now starts at a checkpoint after v. That is
// ErrVersionNotFound (as Delta's "cannot time travel to version v"), not a
// corrupt log. Cleanup deletes oldest first (Log.Cleanup), so an interrupted
// one leaves exactly such a prefix gap, possibly with commits of versions
// below the checkpoint still present. It returns nil when the log was not
// truncated (commit 0 is there, or no checkpoint follows v): a gap is then
// corruption.
func (ls *listing) truncatedBefore(v int64) error {
	if _, ok := ls.commits[0]; ok {
		return nil
	}
	next := int64(-1)
	for cv := range ls.checkpoints {
		if cv > v && (next < 0 || cv < next) {
			next = cv
		}
	}
	if next < 0 {
		return nil
	}
	return fmt.Errorf("%w: %d (the log before checkpoint %d was cleaned up)", ErrVersionNotFound, v, next)
}
