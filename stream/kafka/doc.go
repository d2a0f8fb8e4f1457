// Package kafka is a source.Source over Kafka topics (github.com/twmb/franz-go)
// for lakesink's micro-batch driver (package stream), following Spark's Kafka
// source (external/kafka-0-10-sql: KafkaMicroBatchStream, KafkaSourceOffset,
// JsonUtils).
//
// Offsets live in the checkpoint, not in a consumer group: the driver stores
// the source offset of batch N verbatim in offsets/N, and for Kafka it is the
// JSON object Spark writes, topic -> partition -> next offset (exclusive end):
//
//	{"flights":{"0":6667,"1":6667,"2":6666}}
//
// GetBatch(start, end) reads exactly the records with start <= offset < end
// of every partition with a direct consumer (explicit partition assignment,
// no group), so a rerun of batch N reads the same records. The first batch
// starts at the initial offsets (StartingOffsets: earliest, latest or a JSON
// object), resolved once and kept in the source's checkpoint directory
// (sources/0/0, as Spark's KafkaSourceInitialOffsetWriter does) so that a
// restart does not move them.
//
// Rows follow Spark's Kafka source schema (KafkaRecordToRowConverter):
// key binary, value binary, topic string, partition int, offset long,
// timestamp timestamp, timestampType int, and headers
// array<struct<key:string,value:binary>> when IncludeHeaders is set. With
// ValueFormat "json" the value is decoded against Options.Schema instead
// (with package source's JSON decoder), one row per record.
//
// Data loss (FailOnDataLoss, Spark's failOnDataLoss): records of a planned
// range that are no longer in the log (deleted by retention, or a topic
// recreated) fail the batch with a *DataLossError naming the topic,
// partition and range; with FailOnDataLoss false the lost part is skipped
// with a warning. maxOffsetsPerTrigger is split across partitions in
// proportion to their backlog, as KafkaMicroBatchStream.rateLimit does.
//
// Lifecycle: NewSource, then the driver calls Start, PrepareAvailableNow (for
// AvailableNow), LatestOffset/GetBatch/Commit; Close releases the client.
// A Source is used by one goroutine at a time.
package kafka
