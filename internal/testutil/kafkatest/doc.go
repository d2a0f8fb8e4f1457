// Package kafkatest starts a real Apache Kafka broker (KRaft mode: one JVM
// that is both broker and controller, no ZooKeeper) on 127.0.0.1 for tests,
// so that the Kafka code paths of lakesink also run against the real group
// coordinator, fetch sessions and log segments, not only the in-process
// kfake.
//
// Lifecycle:
//
//	b := kafkatest.Start(t)              // skips without an installed broker
//	b.CreateTopic(t, "events", 6)
//	cl, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr))
//	// the broker stops (its process group is killed) when the test ends
//
// or, to share one broker across a test binary (a JVM takes 10-30 s to
// start on a loaded 2-core machine), Launch in TestMain and Stop after
// m.Run.
//
// Start formats a temporary log dir with a random cluster id
// (kafka.tools.StorageTool format, as `kafka-storage.sh format` does), then
// runs kafka.Kafka with a generated server.properties on two random free
// ports (PLAINTEXT and CONTROLLER), a 512 MiB heap, and waits until a
// franz-go admin client lists the broker. The broker's output is kept in
// broker.log in the test's temp dir and its tail is printed when the test
// fails.
//
// Install the broker once with scripts/install-kafka.sh (Kafka's jars from
// Maven Central into ${XDG_CACHE_HOME:-~/.cache}/lakesink/kafka). Start
// finds it through LAKESINK_KAFKA_CLASSPATH, else that cache folder.
// Without it Start skips the test, except when LAKESINK_REQUIRE_KAFKA is
// set (CI and `make interop`): then it fails, so they never pass by
// silently skipping the broker.
//
// Concurrency: a Broker's methods may be called from any goroutine.
package kafkatest
