package tests

import (
	"context"
	"os"
	"regexp"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/lakesink/lakesink/internal/testutil/kafkatest"
)

// kafkaCluster gives a test a topic of parts partitions and the bootstrap
// addresses to reach it: on the in-process kfake (fast, for `make test`),
// or on the real broker shared by this test binary (tests named *Broker).
type kafkaCluster func(t testing.TB, topic string, parts int32) []string

// kfakeCluster starts an in-process kfake cluster for the test.
func kfakeCluster(t testing.TB, topic string, parts int32) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// sharedBroker is the real broker of this test binary, started by the first
// test that needs it (a JVM takes 10-60 s to come up on a loaded machine)
// and stopped by TestMain.
var sharedBroker struct {
	once sync.Once
	b    *kafkatest.Broker
	err  error
	dir  string
}

// brokerCluster creates topic on the shared real broker (kafkatest) and
// returns its address; it skips the test without an installed broker
// (fails with LAKESINK_REQUIRE_KAFKA). On failure the broker's log tail is
// printed.
func brokerCluster(t testing.TB, topic string, parts int32) []string {
	t.Helper()
	if _, err := kafkatest.Classpath(); err != nil {
		if kafkatest.Required() {
			t.Fatalf("%v; LAKESINK_REQUIRE_KAFKA is set, so the broker tests must not skip", err)
		}
		t.Skipf("%v; skipping the real-broker test", err)
	}
	sharedBroker.once.Do(func() {
		sharedBroker.dir, sharedBroker.err = os.MkdirTemp("", "lakesink-kafka-")
		if sharedBroker.err == nil {
			sharedBroker.b, sharedBroker.err = kafkatest.Launch(context.Background(), sharedBroker.dir)
		}
	})
	if sharedBroker.err != nil {
		t.Fatal(sharedBroker.err)
	}
	b := sharedBroker.b
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kafka broker %s output (tail of %s):\n%s", b.Addr, b.LogPath(), b.LogTail(100))
		}
	})
	b.CreateTopic(t, topic, parts)
	return []string{b.Addr}
}

// stopSharedBroker is called by TestMain after the tests.
func stopSharedBroker() {
	if sharedBroker.b != nil {
		sharedBroker.b.Stop()
	}
	if sharedBroker.dir != "" {
		os.RemoveAll(sharedBroker.dir)
	}
}

var nonTopic = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// topicFor is a topic name unique to the test (topics of the shared broker
// outlive a test).
func topicFor(t testing.TB) string {
	return nonTopic.ReplaceAllString(t.Name(), "-")
}
