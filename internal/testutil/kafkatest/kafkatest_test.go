package kafkatest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBrokerProduceConsumeGroup starts a broker, creates a 3-partition
// topic, produces 300 records and reads them all back through a consumer
// group (the group coordinator is what the kfake tests cannot show).
func TestBrokerProduceConsumeGroup(t *testing.T) {
	b := Start(t)
	b.CreateTopic(t, "t", 3)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	pr, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var recs []*kgo.Record
	for i := range 300 {
		recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))})
	}
	if err := pr.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]bool{}
	for len(seen) < 300 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of 300 records: %v", len(seen), err)
		}
		for _, fe := range fs.Errors() {
			t.Fatalf("fetch %s-%d: %v", fe.Topic, fe.Partition, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if seen[string(r.Value)] {
				t.Errorf("record %s read twice", r.Value)
			}
			seen[string(r.Value)] = true
		})
	}
}
