package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

func TestClaimSource(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://claims-"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const src = "file:///data/in"

	// Eight fresh queries at once: exactly one wins the claim.
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = claimSource(ctx, st, src, fmt.Sprintf("q%d", i), true, false)
		}()
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil:
			if winner != "" {
				t.Fatalf("q%d and %s both claimed the source", i, winner)
			}
			winner = fmt.Sprintf("q%d", i)
		case !errors.Is(err, ErrDuplicateSource):
			t.Fatalf("q%d: %v, want ErrDuplicateSource", i, err)
		}
	}
	if winner == "" {
		t.Fatal("no query claimed the source")
	}
	// The winner restarts (fresh again, e.g. before its first commit): allowed.
	if err := claimSource(ctx, st, src, winner, true, false); err != nil {
		t.Fatalf("winner again: %v", err)
	}
	// A query whose checkpoint is not fresh is never refused here.
	if err := claimSource(ctx, st, src, "old", false, false); err != nil {
		t.Fatalf("not fresh: %v", err)
	}
	// --allow-reset adds the query; it is then accepted without the flag.
	if err := claimSource(ctx, st, src, "copy", true, true); err != nil {
		t.Fatalf("allow-reset: %v", err)
	}
	if err := claimSource(ctx, st, src, "copy", true, false); err != nil {
		t.Fatalf("after allow-reset: %v", err)
	}
	// Another source is claimed on its own.
	if err := claimSource(ctx, st, "file:///data/other", "q-other", true, false); err != nil {
		t.Fatalf("other source: %v", err)
	}
	// A corrupt claim is an error naming it, not a silent pass.
	if err := st.Put(ctx, sourceClaimPath(src), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if err := claimSource(ctx, st, src, "q9", true, false); err == nil || errors.Is(err, ErrDuplicateSource) {
		t.Fatalf("corrupt claim: %v", err)
	}
}
