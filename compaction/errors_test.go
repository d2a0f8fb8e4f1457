package compaction

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// TestErrorsNameTheTableOnce: every maintenance operation on a table whose
// latest commit is corrupt fails with an error that is marked corrupt and
// names the table once (the table's own Snapshot names it; the operation
// adds its verb, not the URL again), with no package-name prefix (issue 15,
// STYLE.md Errors).
func TestErrorsNameTheTableOnce(t *testing.T) {
	ctx := context.Background()
	tb, st, _ := maintTable(t)
	if err := st.Put(ctx, txlog.CommitPath(3), []byte("garbage\n")); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	svc, err := NewService([]*table.Table{tb}, DefaultServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func() error{
		"Optimize":   func() error { _, _, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{}); return err },
		"Vacuum":     func() error { _, err := Vacuum(ctx, tb, VacuumOptions{}); return err },
		"Checkpoint": func() error { _, err := Checkpoint(ctx, tb); return err },
		"CleanupLog": func() error {
			_, err := CleanupLog(ctx, tb, CleanupLogOptions{Now: func() time.Time { return now }})
			return err
		},
		"maintenance pass": func() error { _, err := svc.pass(ctx, tb); return err },
	} {
		err := run()
		if !errors.Is(err, storage.ErrCorrupt) {
			t.Errorf("%s: %v, want an error marked corrupt", name, err)
			continue
		}
		if n := strings.Count(err.Error(), tb.URL()); n != 1 {
			t.Errorf("%s: %q names %s %d times, want once", name, err, tb.URL(), n)
		}
		for _, pkg := range []string{"compaction:", "table:", "txlog:"} {
			if strings.Contains(err.Error(), pkg) {
				t.Errorf("%s: %q has the package prefix %q", name, err, pkg)
			}
		}
	}
}
