package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// sourceClaimDir holds, in a Delta table's directory, one claim per source
// ingested into it. Delta readers and VACUUM ignore names starting with "_"
// (PROTOCOL.md: hidden files), so the claims are invisible to other engines.
const sourceClaimDir = "_lakesink/sources/"

// sourceClaim names the queries allowed to ingest one source into the table.
type sourceClaim struct {
	SourceURL string   `json:"sourceUrl"`
	QueryIDs  []string `json:"queryIds"`
	// Created is when the first query claimed the source (milliseconds since
	// the epoch).
	Created int64 `json:"created"`
}

// sourceClaimPath is the path, inside the table, of the claim of sourceURL:
// sourceClaimDir + the hex of the first 16 bytes of its SHA-256 + ".json".
func sourceClaimPath(sourceURL string) string {
	sum := sha256.Sum256([]byte(sourceURL))
	return sourceClaimDir + hex.EncodeToString(sum[:16]) + ".json"
}

// claimSource makes query queryID the owner of sourceURL in the table stored
// at st before the query writes its first batch. The claim is created with
// put-if-absent, so of two queries started at the same moment on one source
// with fresh checkpoints exactly one wins; the other is refused with a
// *DuplicateSourceError (the history check alone cannot see a query that
// has not committed yet). A query whose checkpoint is not fresh is never
// refused here (its checkpoint decides) but claims an unclaimed source.
// allowReset adds the query to the claim: a second copy, on purpose.
func claimSource(ctx context.Context, st storage.Store, sourceURL, queryID string, fresh, allowReset bool) error {
	p := sourceClaimPath(sourceURL)
	for range 5 {
		data, err := st.Read(ctx, p)
		if errors.Is(err, storage.ErrNotFound) {
			b, err := json.Marshal(sourceClaim{SourceURL: sourceURL, QueryIDs: []string{queryID}, Created: time.Now().UnixMilli()})
			if err != nil {
				return err
			}
			err = st.PutIfAbsent(ctx, p, b)
			if errors.Is(err, storage.ErrAlreadyExists) || errors.Is(err, storage.ErrCommitStateUnknown) {
				continue // read the claim that is there (perhaps ours)
			}
			if err != nil {
				return fmt.Errorf("claim source %s in %s: %w", sourceURL, st.URL(), err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read source claim %s in %s: %w", p, st.URL(), err)
		}
		var c sourceClaim
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("source claim %s in %s is not valid JSON (%v): delete it to let the next ingest claim the source again", p, st.URL(), err)
		}
		if slices.Contains(c.QueryIDs, queryID) || !fresh {
			return nil
		}
		if !allowReset {
			other := ""
			if len(c.QueryIDs) > 0 {
				other = c.QueryIDs[len(c.QueryIDs)-1]
			}
			return &DuplicateSourceError{Table: st.URL(), Source: sourceURL, QueryID: queryID, OtherQueryID: other,
				Version: -1, ClaimPath: p, ClaimedAt: time.UnixMilli(c.Created)}
		}
		c.QueryIDs = append(c.QueryIDs, queryID)
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		return st.Put(ctx, p, b)
	}
	return fmt.Errorf("claim source %s in %s: the claim kept changing; try again", sourceURL, st.URL())
}

// checkSourceNotIngested refuses a fresh checkpoint over a source that another
// query id already ingested into the table (commitInfo.operationParameters
// sourceUrl and queryId of earlier STREAMING UPDATE commits): its rows would
// be written again under the new query id.
func checkSourceNotIngested(ctx context.Context, t *table.Table, sourceURL, queryID string) error {
	exists, err := t.Exists(ctx)
	if err != nil || !exists {
		return err
	}
	hist, err := t.History(ctx, 0)
	if err != nil {
		return err
	}
	for _, c := range hist {
		params := c.CommitInfo.StringMap("operationParameters")
		if params[paramSourceURL] == sourceURL && params["queryId"] != "" && params["queryId"] != queryID {
			return &DuplicateSourceError{Table: t.URL(), Source: sourceURL, QueryID: queryID, OtherQueryID: params["queryId"], Version: c.Version}
		}
	}
	return nil
}
