package kafka

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/stream/source"
)

// decodeJSON decodes the records' values against Options.Schema with package
// source's JSON decoder: the values, compacted to one line each, form one
// NDJSON file in memory whose line i is record i. Records that do not fit
// go to OnBadRecord in offset order, or the first fails the batch.
func (s *Source) decodeJSON(ctx context.Context, recs []*kgo.Record) (*schema.Batch, int, error) {
	var buf bytes.Buffer
	var lineRec []*kgo.Record // line i+1 -> record
	var rejected []*RecordError
	reject := func(r *kgo.Record, field string, reason error) {
		rejected = append(rejected, &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Field: field, Err: reason})
	}
	for _, r := range recs {
		if r.Value == nil {
			if s.opts.SkipTombstones {
				continue
			}
			reject(r, "", errors.New("null value (tombstone)"))
			continue
		}
		n := buf.Len()
		if err := json.Compact(&buf, r.Value); err != nil {
			buf.Truncate(n)
			reject(r, "", fmt.Errorf("value is not JSON: %w", err))
			continue
		}
		buf.WriteByte('\n')
		lineRec = append(lineRec, r)
	}
	b := &schema.Batch{Schema: s.opts.Schema}
	if len(lineRec) > 0 {
		var err error
		if b, err = s.decodeLines(ctx, buf.Bytes(), lineRec, reject); err != nil {
			return nil, 0, err
		}
		if s.opts.SchemaEvolution == source.SchemaEvolutionAddNewColumns && len(b.Schema.Fields) > 0 {
			// The merged schema is the schema of the run from now on.
			s.opts.Schema, s.schema = b.Schema, b.Schema
		}
	}
	if len(rejected) == 0 {
		return b, 0, nil
	}
	slices.SortFunc(rejected, func(a, b *RecordError) int {
		if c := compareTP(TP{a.Topic, a.Partition}, TP{b.Topic, b.Partition}); c != 0 {
			return c
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	if s.opts.OnBadRecord == nil {
		return nil, 0, rejected[0]
	}
	values := make(map[TP]map[int64][]byte)
	for _, r := range recs {
		tp := TP{r.Topic, r.Partition}
		if values[tp] == nil {
			values[tp] = make(map[int64][]byte)
		}
		values[tp][r.Offset] = r.Value
	}
	for _, re := range rejected {
		err := s.opts.OnBadRecord(source.BadRecord{Reason: re.Error(), File: fmt.Sprintf("kafka://%s/%d", re.Topic, re.Partition),
			Line: int(re.Offset), Field: re.Field, Raw: string(values[TP{re.Topic, re.Partition}][re.Offset])})
		if err != nil {
			return nil, len(rejected), err
		}
	}
	return b, len(rejected), nil
}

// decodeLines decodes NDJSON whose line i is lineRec[i-1] with package
// source's JSON decoder (source.DecodeJSON: the file source's rules, without
// a file), handing records that do not fit the schema to reject.
func (s *Source) decodeLines(ctx context.Context, ndjson []byte, lineRec []*kgo.Record, reject func(*kgo.Record, string, error)) (*schema.Batch, error) {
	_ = ctx // decoding is in memory
	opts := source.DefaultOptions(source.FormatJSON)
	opts.Schema = s.opts.Schema
	opts.TimestampFormat = s.opts.TimestampFormat
	opts.DateFormat = s.opts.DateFormat
	opts.SchemaEvolution = s.opts.SchemaEvolution
	b, bad, err := source.DecodeJSON(ndjson, "kafka values", opts)
	if err != nil {
		return nil, err
	}
	for _, r := range bad {
		if r.Line < 1 || r.Line > len(lineRec) {
			return nil, fmt.Errorf("decoder reported line %d of %d", r.Line, len(lineRec))
		}
		var cause = errors.New(r.Reason)
		if r.Err != nil {
			cause = r.Err.Err
		}
		reject(lineRec[r.Line-1], r.Field, cause)
	}
	return b, nil
}
