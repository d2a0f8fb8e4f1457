package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
)

// runGroupIngest is `lakesink ingest --format kafka --kafka-group G`: one
// worker of a consumer group (or of a --kafka-assign static split) writing
// to a Delta table, with the table's txn per partition as the only
// checkpoint (kafka.Group; docs/kafka.md "Consumer groups").
func runGroupIngest(ctx context.Context, p *printer, o IngestOptions, cm *commandMetrics) error {
	switch {
	case o.Kafka.Group == "":
		return fmt.Errorf("--kafka-assign needs --kafka-group (it names the txn appIds <group>-<topic>-<partition>)")
	case o.Table == "":
		return fmt.Errorf("--kafka-group writes a Delta table: give --table (a file sink has no txn per partition)")
	case o.Checkpoint != "":
		return fmt.Errorf("--kafka-group keeps no checkpoint: the table's txn per partition records what was written; drop --checkpoint")
	case o.RecoverFromTable:
		return fmt.Errorf("--recover-checkpoint-from-table does not apply to --kafka-group (there is no checkpoint)")
	case o.OutputMode != "" && o.OutputMode != "append":
		return fmt.Errorf("--kafka-group appends: --output-mode %s is not supported", o.OutputMode)
	case o.Kafka.TopicPattern != "":
		return fmt.Errorf("--kafka-group reads --kafka-topic (a --kafka-topic-pattern is not supported)")
	}
	trig, err := stream.ParseTrigger(o.Trigger)
	if err != nil {
		return err
	}
	var target int64
	if o.TargetFileSize != "" {
		if target, err = compaction.ParseByteSize(o.TargetFileSize); err != nil {
			return fmt.Errorf("--target-file-size: %w", err)
		}
	}
	var assign map[string][]int32
	if o.Kafka.Assign != "" {
		if err := json.Unmarshal([]byte(o.Kafka.Assign), &assign); err != nil {
			return fmt.Errorf(`--kafka-assign %q: want JSON {"topic":[0,1]}: %w`, o.Kafka.Assign, err)
		}
		if len(o.Kafka.Topics) == 0 {
			for t := range assign {
				o.Kafka.Topics = append(o.Kafka.Topics, t)
			}
			slices.Sort(o.Kafka.Topics)
		}
	}

	t, err := table.Open(ctx, o.Table)
	if err != nil {
		return err
	}
	defer t.Close()
	var sch *schema.StructType
	if o.Schema != "" {
		if sch, err = loadSchema(o.Schema); err != nil {
			return err
		}
	}
	if snap, err := t.Snapshot(ctx); err == nil {
		if sch == nil {
			if sch, err = snap.Schema(); err != nil {
				return err
			}
		}
		if have := snap.Metadata().PartitionColumns; len(o.PartitionBy) > 0 && !slices.Equal(have, o.PartitionBy) {
			return fmt.Errorf("--partition-by %s: table %s is partitioned by [%s]; a table's partitioning cannot change by writing to it",
				strings.Join(o.PartitionBy, ","), t.URL(), strings.Join(have, ","))
		}
	}
	srcOpts := source.DefaultOptions(source.Format("json"))
	srcOpts.Schema = sch
	srcOpts.TimestampFormat = o.TimestampFormat
	if o.BadRecordsPath != "" {
		return fmt.Errorf("--bad-records-path is not supported with --kafka-group yet")
	}
	ko, err := kafkaOptions(o.Kafka, srcOpts)
	if err != nil {
		return err
	}
	sourceURL := kafkaSourceURL(o.Kafka)
	d := sink.NewDeltaTable(t, sink.Options{
		QueryID: "kafka-group-" + o.Kafka.Group, OutputMode: sink.Append, PartitionColumns: o.PartitionBy,
		TargetFileSizeBytes: target, Compression: o.Compression, MergeSchema: o.MergeSchema,
		OperationParameters: map[string]string{"sourceUrl": sourceURL},
	})
	im, err := cm.ingest(t.URL())
	if err != nil {
		return err
	}
	cm.ready()
	gopts := kafka.DefaultGroupOptions()
	gopts.Metrics = im
	gopts.Source = ko
	gopts.Group = o.Kafka.Group
	gopts.Assign = assign
	gopts.Sink = d
	if o.Kafka.MaxOffsetsPerTrigger > 0 {
		gopts.MaxRecordsPerBatch = o.Kafka.MaxOffsetsPerTrigger
	}
	if iv := trig.Interval(); iv > 0 {
		gopts.MaxDelay = iv
	}
	gopts.AvailableNow = !strings.HasPrefix(trig.String(), "interval")
	if target > 0 {
		gopts.TargetBatchBytes = target
	}
	var batches, abandoned, rows int64
	started := time.Now()
	gopts.Progress = func(pr kafka.GroupProgress) {
		cm.observe(pr.Err == "")
		batches++
		if pr.Abandoned {
			abandoned++
		} else if pr.Err == "" {
			rows += pr.NumInputRecords
		}
		if p.json {
			_ = p.emitValue("progress", pr)
			return
		}
		if p.quiet {
			return
		}
		switch {
		case pr.Abandoned:
			fmt.Fprintf(p.err, "batch of %s abandoned: another worker wrote one of its partitions (rebalance)\n", plural(pr.NumInputRecords, "record", "records"))
		case pr.Err != "":
			fmt.Fprintf(p.err, "batch of %s failed (retrying): %s\n", plural(pr.NumInputRecords, "record", "records"), pr.Err)
		default:
			fmt.Fprintf(p.err, "committed version %d: %s from %s -> %s\n", pr.Version, plural(pr.NumInputRecords, "record", "records"),
				plural(len(pr.Txns), "partition", "partitions"), plural(pr.NumFiles, "data file", "data files"))
		}
	}
	g, err := kafka.NewGroup(gopts)
	if err != nil {
		return err
	}
	runErr := g.Run(ctx)
	if errors.Is(runErr, context.Canceled) && !gopts.AvailableNow {
		runErr = nil // SIGINT/SIGTERM: the batch being built is read again by the next owner
	}
	if p.json {
		_ = p.emit("summary", map[string]any{"group": o.Kafka.Group, "batches": batches, "abandonedBatches": abandoned,
			"numInputRows": rows, "sink": t.URL(), "durationMs": time.Since(started).Milliseconds(), "ok": runErr == nil})
	} else if !p.quiet {
		fmt.Fprintf(p.err, "ingested %s in %s (%d abandoned) into %s in %s (group %s)\n", plural(rows, "record", "records"),
			plural(batches, "batch", "batches"), abandoned, t.URL(), time.Since(started).Round(time.Millisecond), o.Kafka.Group)
	}
	return runErr
}
