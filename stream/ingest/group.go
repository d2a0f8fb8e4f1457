package ingest

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/lakesink/lakesink/metrics"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// runGroup is a KafkaGroup run: one worker of a consumer group (or of a
// KafkaAssign static split) writing to a Delta table, with the table's txn
// per partition as the only checkpoint (kafka.Group; docs/kafka.md
// "Consumer groups").
func runGroup(ctx context.Context, o Options) (Summary, error) {
	sum := Summary{Group: o.KafkaGroup, SinkKind: "delta"}
	ko := o.Kafka
	if o.KafkaAssign != nil && len(ko.Topics) == 0 {
		for t := range o.KafkaAssign {
			ko.Topics = append(ko.Topics, t)
		}
		slices.Sort(ko.Topics)
	}
	t, err := table.Open(ctx, o.Table)
	if err != nil {
		return sum, err
	}
	defer t.Close()
	sum.SinkURL = t.URL()
	sch := o.Schema
	if snap, err := t.Snapshot(ctx); err == nil {
		if sch == nil {
			if sch, err = snap.Schema(); err != nil {
				return sum, err
			}
		}
		if have := snap.Metadata().PartitionColumns; len(o.PartitionColumns) > 0 && !slices.Equal(have, o.PartitionColumns) {
			return sum, &PartitioningError{Location: t.URL(), Have: have, Want: o.PartitionColumns}
		}
	}
	srcOpts := source.DefaultOptions(source.FormatJSON)
	srcOpts.Schema = sch
	srcOpts.TimestampFormat = o.TimestampFormat
	ko = kafkaOptions(ko, srcOpts)
	if err := ko.Validate(); err != nil {
		return sum, err
	}
	sourceURL := kafka.SourceURL(kafka.Options{Brokers: ko.Brokers, Topics: ko.Topics, TopicPattern: ko.TopicPattern})
	d := sink.NewDeltaTable(t, sink.Options{
		QueryID: "kafka-group-" + o.KafkaGroup, OutputMode: sink.Append, PartitionColumns: o.PartitionColumns,
		TargetFileSizeBytes: o.TargetFileSizeBytes, Compression: o.Compression,
		MergeSchema:         o.SchemaEvolution == source.SchemaEvolutionAddNewColumns,
		OperationParameters: txlog.OperationParameters{paramSourceURL: sourceURL},
	})
	var im *metrics.Ingest
	if o.Registerer != nil {
		if im, err = metrics.NewIngest(o.Registerer, t.URL()); err != nil {
			return sum, err
		}
	}
	if o.Ready != nil {
		o.Ready()
	}
	gopts := kafka.DefaultGroupOptions()
	gopts.Metrics = im
	gopts.Source = ko
	gopts.Group = o.KafkaGroup
	gopts.Assign = o.KafkaAssign
	gopts.Sink = d
	if o.Kafka.MaxOffsetsPerTrigger > 0 {
		gopts.MaxRecordsPerBatch = o.Kafka.MaxOffsetsPerTrigger
	}
	if iv := o.Trigger.Interval(); iv > 0 {
		gopts.MaxDelay = iv
	}
	gopts.AvailableNow = !strings.HasPrefix(o.Trigger.String(), "interval")
	if o.TargetFileSizeBytes > 0 {
		gopts.TargetBatchBytes = o.TargetFileSizeBytes
	}
	if o.Logger != nil {
		gopts.Logger = o.Logger
	}
	gopts.Progress = func(pr kafka.GroupProgress) {
		sum.Batches++
		if pr.Abandoned {
			sum.AbandonedBatches++
		} else if pr.Err == "" {
			sum.NumInputRows += pr.NumInputRecords
		}
		if o.GroupProgress != nil {
			o.GroupProgress(pr)
		}
	}
	g, err := kafka.NewGroup(gopts)
	if err != nil {
		return sum, err
	}
	runErr := g.Run(ctx)
	if errors.Is(runErr, context.Canceled) && !gopts.AvailableNow {
		runErr = nil // cancelled: the batch being built is read again by the next owner
	}
	return sum, runErr
}
