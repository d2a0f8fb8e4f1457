package main

import (
	"fmt"

	"github.com/lakesink/lakesink/stream/kafka"
)

// checkGroupFlags refuses the flags that consumer-group mode (--kafka-group
// G, or a --kafka-assign static split) does not take: the table's txn per
// partition is its only checkpoint (ingest.Options.KafkaGroup; docs/kafka.md
// "Consumer groups").
func checkGroupFlags(o IngestOptions) error {
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
	case o.BadRecordsPath != "":
		return fmt.Errorf("--bad-records-path is not supported with --kafka-group yet")
	}
	return nil
}

// printGroupProgress renders one batch of a consumer-group worker.
func printGroupProgress(p *printer, pr kafka.GroupProgress) {
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
		early := ""
		if pr.Rebalance {
			early = " (early: a rebalance was waiting)"
		}
		fmt.Fprintf(p.err, "committed version %d: %s from %s -> %s%s\n", pr.Version, plural(pr.NumInputRecords, "record", "records"),
			plural(len(pr.Txns), "partition", "partitions"), plural(pr.NumFiles, "data file", "data files"), early)
	}
}
