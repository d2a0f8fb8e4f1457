package tests

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// TestS3LogOverOneListPage: a table whose _delta_log/ holds more than one
// S3 list page (1,000 keys) of commits, and whose root more than 1,000 data
// objects. The snapshot must see every version and every file, the next
// commit must land after the last one, and VACUUM must see every data
// object (deleting only the orphans, which are fresh: the untracked-file
// floor is lowered explicitly, as no writer runs).
func TestS3LogOverOneListPage(t *testing.T) {
	srv := s3test.Start(t)
	const commits, orphans = 1100, 3
	url := srv.URL("listing/t")
	createWriterTable(t, url)
	ctx := t.Context()
	st, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// Versions 1..1100, each adding one (tiny, never read) data object, put
	// directly: a stand-in for 1,100 small appends that takes seconds.
	now := time.Now().UnixMilli()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for v := int64(1); v <= commits; v++ {
		g.Go(func() error {
			name := fmt.Sprintf("part-%05d.snappy.parquet", v)
			if err := st.Put(gctx, name, []byte("x")); err != nil {
				return err
			}
			data, err := txlog.EncodeCommit([]txlog.Action{{Add: &txlog.Add{
				Path: name, PartitionValues: map[string]*string{}, Size: 1, ModificationTime: now, DataChange: true,
			}}})
			if err != nil {
				return err
			}
			return st.PutIfAbsent(gctx, txlog.CommitPath(v), data)
		})
	}
	for i := range orphans {
		g.Go(func() error { return st.Put(gctx, fmt.Sprintf("orphan-%d.parquet", i), []byte("o")) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	tb, err := table.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != commits || len(snap.Files()) != commits {
		t.Fatalf("snapshot version %d with %d files, want %d and %d", snap.Version(), len(snap.Files()), commits, commits)
	}
	res, err := tb.Write(ctx, nil, table.WriteOptions{AppID: "after", Version: 0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != commits+1 {
		t.Fatalf("next commit at version %d, want %d", res.Version, commits+1)
	}
	vr, err := compaction.Vacuum(ctx, tb, compaction.VacuumOptions{RetainZero: true, Force: true, UntrackedMinAgeZero: true, ForceUntrackedMinAge: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if vr.FilesDeleted != orphans || vr.FilesListed < commits+orphans {
		t.Fatalf("VACUUM dry run: %d of %d listed files would go, want the %d orphans of >= %d", vr.FilesDeleted, vr.FilesListed, orphans, commits+orphans)
	}
}
