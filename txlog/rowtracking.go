package txlog

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// DomainRowTracking is the domain of the row id high-water mark
// (PROTOCOL.md "Writer Requirements for Row Tracking"); its configuration
// is {"rowIdHighWaterMark": N}, as Delta's RowTrackingMetadataDomain writes
// it.
const DomainRowTracking = "delta.rowTracking"

// rowTrackingDomain is the configuration of DomainRowTracking.
type rowTrackingDomain struct {
	RowIDHighWaterMark *int64 `json:"rowIdHighWaterMark"`
}

// RowIDHighWaterMark is the highest fresh row id assigned in a table whose
// live domains are domains (Snapshot.Domains, keyed by name): the
// delta.rowTracking domain's rowIdHighWaterMark, or -1 when there is none
// (Delta's RowId.MISSING_HIGH_WATER_MARK: the first row id is 0). A
// configuration that does not parse is a *CorruptLogError.
func RowIDHighWaterMark(domains map[string]*DomainMetadata) (int64, error) {
	d, ok := domains[DomainRowTracking]
	if !ok || d.Removed {
		return -1, nil
	}
	return parseRowIDHighWaterMark(d)
}

func parseRowIDHighWaterMark(d *DomainMetadata) (int64, error) {
	var c rowTrackingDomain
	if err := json.Unmarshal([]byte(d.Configuration), &c); err != nil || c.RowIDHighWaterMark == nil {
		if err == nil {
			err = fmt.Errorf("no rowIdHighWaterMark")
		}
		return 0, &CorruptLogError{Path: LogDir, Version: -1,
			Err: fmt.Errorf("domainMetadata %s configuration %q: %w", DomainRowTracking, d.Configuration, err)}
	}
	return *c.RowIDHighWaterMark, nil
}

// rowIDHighWaterMarkOf is the high-water mark one commit's actions set
// (-1: none).
func rowIDHighWaterMarkOf(acts []Action) (int64, error) {
	hwm := int64(-1)
	for _, a := range acts {
		if d := a.DomainMetadata; d != nil && d.Domain == DomainRowTracking && !d.Removed {
			v, err := parseRowIDHighWaterMark(d)
			if err != nil {
				return 0, err
			}
			hwm = max(hwm, v)
		}
	}
	return hwm, nil
}

// assignRowIDs returns acts with fresh row ids for the commit of version on
// a table with the rowTracking feature supported (PROTOCOL.md "Writer
// Requirements for Row Tracking"; Delta's RowId.assignFreshRowIds and
// RowCommitVersion.assignIfMissing): each add without a baseRowId gets
// hwm+1 and moves hwm on by its stats' numRecords; each add without a
// defaultRowCommitVersion gets version; and when ids were assigned, a
// delta.rowTracking domainMetadata action carries the new high-water mark
// (an existing one among acts is replaced, keeping the higher mark). acts
// is not modified. An add without numRecords in its stats cannot be given
// row ids: ErrInvalidTransaction naming its path (Delta's
// DeltaErrors.rowIdAssignmentWithoutStats).
func assignRowIDs(acts []Action, version, hwm int64) ([]Action, error) {
	out := make([]Action, 0, len(acts)+1)
	start, given := hwm, false
	for _, a := range acts {
		if d := a.DomainMetadata; d != nil && d.Domain == DomainRowTracking {
			given = true
			if !d.Removed {
				v, err := parseRowIDHighWaterMark(d)
				if err != nil {
					return nil, err
				}
				start = max(start, v)
			}
			continue
		}
		out = append(out, a)
	}
	hwm = start
	assigned := false
	for i := range out {
		if out[i].Add == nil {
			continue
		}
		add := *out[i].Add
		if add.BaseRowID == nil {
			n, err := statsNumRecords(add.Stats)
			if err != nil {
				return nil, fmt.Errorf("%w: add %s: row ids cannot be assigned without numRecords in its stats: %w",
					ErrInvalidTransaction, add.Path, err)
			}
			base := hwm + 1
			add.BaseRowID = &base
			hwm += n
			assigned = true
		}
		if add.DefaultRowCommitVersion == nil {
			v := version
			add.DefaultRowCommitVersion = &v
		}
		out[i].Add = &add
	}
	if assigned || given {
		out = append(out, Action{DomainMetadata: &DomainMetadata{Domain: DomainRowTracking,
			Configuration: `{"rowIdHighWaterMark":` + strconv.FormatInt(hwm, 10) + `}`}})
	}
	return out, nil
}

// statsNumRecords is numRecords of an add's stats JSON.
func statsNumRecords(stats string) (int64, error) {
	if stats == "" {
		return 0, fmt.Errorf("no stats")
	}
	var s struct {
		NumRecords *int64 `json:"numRecords"`
	}
	if err := json.Unmarshal([]byte(stats), &s); err != nil {
		return 0, fmt.Errorf("stats: %w", err)
	}
	if s.NumRecords == nil || *s.NumRecords < 0 {
		return 0, fmt.Errorf("stats without numRecords")
	}
	return *s.NumRecords, nil
}
