package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/internal/testutil/memtest"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/stream/source"
)

func TestParseOffsets(t *testing.T) {
	ok := []struct {
		name, in string
		want     Offsets
	}{
		{"spark line", `{"flights":{"0":123,"1":456}}`, Offsets{{"flights", 0}: 123, {"flights", 1}: 456}},
		{"two topics and specials", `{"a":{"2":-2},"b":{"0":-1}}`, Offsets{{"a", 2}: -2, {"b", 0}: -1}},
		{"empty", `{}`, Offsets{}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseOffsets(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !sameOffsets(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			again, err := ParseOffsets(got.String())
			if err != nil || !sameOffsets(again, got) {
				t.Fatalf("round trip of %s: %v %v", got.String(), again, err)
			}
		})
	}
	bad := []struct{ name, in string }{
		{"not json", `{"a":`},
		{"logOffset", `{"logOffset":3}`},
		{"partition not a number", `{"a":{"x":1}}`},
		{"negative partition", `{"a":{"-1":1}}`},
		{"padded partition", `{"a":{"01":1}}`},
		{"offset below earliest", `{"a":{"0":-3}}`},
		{"empty topic", `{"":{"0":1}}`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseOffsets(c.in); !errors.Is(err, ErrBadOffset) {
				t.Fatalf("ParseOffsets(%s) = %v, want ErrBadOffset", c.in, err)
			}
		})
	}
	t.Run("stable text", func(t *testing.T) {
		o := Offsets{{"b", 10}: 1, {"b", 2}: 2, {"a", 0}: 3}
		want := `{"a":{"0":3},"b":{"10":1,"2":2}}`
		for range 20 {
			if got := o.String(); got != want {
				t.Fatalf("String() = %s, want %s", got, want)
			}
		}
	})
}

func TestRateLimit(t *testing.T) {
	a0, a1, a2 := TP{"a", 0}, TP{"a", 1}, TP{"a", 2}
	cases := []struct {
		name                 string
		limit                int64
		from, fromNew, until Offsets
		want                 Offsets
	}{
		{"no limit", 0, Offsets{a0: 0}, nil, Offsets{a0: 100}, Offsets{a0: 100}},
		{"proportional", 100, Offsets{a0: 0, a1: 0}, nil, Offsets{a0: 300, a1: 100}, Offsets{a0: 75, a1: 25}},
		{"under the limit", 1000, Offsets{a0: 0, a1: 10}, nil, Offsets{a0: 300, a1: 100}, Offsets{a0: 300, a1: 100}},
		{"small partition not starved", 10, Offsets{a0: 0, a1: 0}, nil, Offsets{a0: 10000, a1: 1}, Offsets{a0: 9, a1: 1}},
		{"new partition from earliest", 100, Offsets{a0: 0}, Offsets{a1: 50}, Offsets{a0: 100, a1: 150}, Offsets{a0: 50, a1: 100}},
		{"nothing new", 100, Offsets{a0: 5, a1: 7}, nil, Offsets{a0: 5, a1: 7}, Offsets{a0: 5, a1: 7}},
		{"one partition idle", 90, Offsets{a0: 0, a1: 0, a2: 40}, nil, Offsets{a0: 300, a1: 300, a2: 40}, Offsets{a0: 45, a1: 45, a2: 40}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := rateLimit(c.limit, c.from, c.fromNew, c.until)
			if !sameOffsets(got, c.want) {
				t.Fatalf("rateLimit = %v, want %v", got, c.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	base := func() Options {
		o := DefaultOptions()
		o.Brokers, o.Topics = []string{"127.0.0.1:1"}, []string{"t"}
		return o
	}
	cases := []struct {
		name string
		mod  func(*Options)
	}{
		{"no brokers", func(o *Options) { o.Brokers = nil }},
		{"topics and pattern", func(o *Options) { o.TopicPattern = "x.*" }},
		{"bad pattern", func(o *Options) { o.Topics, o.TopicPattern = nil, "(" }},
		{"bad starting offsets", func(o *Options) { o.StartingOffsets = "middle" }},
		{"json without schema", func(o *Options) { o.ValueFormat = "json" }},
		{"unknown value format", func(o *Options) { o.ValueFormat = "avro" }},
		{"group.id refused", func(o *Options) { o.Consumer = map[string]string{"kafka.group.id": "g"} }},
		{"unknown consumer property", func(o *Options) { o.Consumer = map[string]string{"kafka.foo.bar": "1"} }},
		{"bad number", func(o *Options) { o.Consumer = map[string]string{"kafka.fetch.max.bytes": "lots"} }},
		{"negative limit", func(o *Options) { o.MaxOffsetsPerTrigger = -1 }},
	}
	ok := base()
	ok.Consumer = map[string]string{"kafka.client.id": "x", "fetch.max.bytes": "1000", "kafka.isolation.level": "read_committed"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base()
			c.mod(&o)
			if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("Validate = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

// cluster starts an in-process Kafka (kfake) on loopback with topic "t" of
// nParts partitions.
func cluster(t *testing.T, nParts int32) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(nParts, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

// produce writes n records to each partition of topic; record i of partition
// p has key "p-i" and value {"p":p,"i":i}.
func produce(t *testing.T, cl *kgo.Client, topic string, parts []int32, first, n int) {
	t.Helper()
	var recs []*kgo.Record
	for _, p := range parts {
		for i := first; i < first+n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("%d-%d", p, i)),
				Value:   []byte(fmt.Sprintf(`{"p": %d, "i": %d}`, p, i)),
				Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v" + strconv.Itoa(i))}}})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func newSource(t *testing.T, c *kfake.Cluster, mod func(*Options)) *Source {
	t.Helper()
	o := DefaultOptions()
	o.Brokers, o.Topics, o.StartingOffsets = c.ListenAddrs(), []string{"t"}, "earliest"
	o.GapTimeout = 2 * time.Second
	if mod != nil {
		mod(&o)
	}
	s, err := NewSource(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type seen map[TP]map[int64]int

func (m seen) add(t *testing.T, b *schema.Batch) {
	t.Helper()
	for _, r := range b.Rows {
		tp := TP{r[2].(string), r[3].(int32)}
		if m[tp] == nil {
			m[tp] = map[int64]int{}
		}
		off := r[4].(int64)
		m[tp][off]++
		want := fmt.Sprintf("%d-%d", tp.Partition, off)
		if string(r[0].([]byte)) != want {
			t.Fatalf("%v offset %d has key %s, want %s", tp, off, r[0], want)
		}
		if _, ok := r[5].(time.Time); !ok || r[6] != int32(0) {
			t.Fatalf("timestamp %v type %v", r[5], r[6])
		}
	}
}

// drain runs the driver's loop until LatestOffset reports nothing new.
func drain(t *testing.T, s *Source, committed string, got seen) (string, int) {
	t.Helper()
	ctx := context.Background()
	batches := 0
	for {
		end, err := s.LatestOffset(ctx, source.ReadLimit{})
		if err != nil {
			t.Fatal(err)
		}
		if end == "" || end == committed {
			return committed, batches
		}
		b, _, err := s.GetBatch(ctx, committed, end)
		if err != nil {
			t.Fatal(err)
		}
		// The first batch after a restart may be larger: it starts at the
		// driver's committed offset and ends after the last planned one.
		if batches > 0 && s.opts.MaxOffsetsPerTrigger > 0 && int64(len(b.Rows)) > s.opts.MaxOffsetsPerTrigger+3 {
			t.Fatalf("batch of %d rows, limit %d", len(b.Rows), s.opts.MaxOffsetsPerTrigger)
		}
		got.add(t, b)
		committed = end
		batches++
	}
}

func TestReadExactlyOnceAcrossRestart(t *testing.T) {
	ctx := context.Background()
	c, cl := cluster(t, 3)
	produce(t, cl, "t", []int32{0, 1, 2}, 0, 100)
	dir := memtest.New(t)
	s := newSource(t, c, func(o *Options) { o.MaxOffsetsPerTrigger = 60 })
	if err := s.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareAvailableNow(ctx); err != nil {
		t.Fatal(err)
	}
	got := seen{}
	// Two batches, then the "process" dies.
	end1, err := s.LatestOffset(ctx, source.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	b1, _, err := s.GetBatch(ctx, "", end1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b1.Rows) != 60 {
		t.Fatalf("first batch has %d rows, want 60 (maxOffsetsPerTrigger)", len(b1.Rows))
	}
	if end1 != `{"t":{"0":20,"1":20,"2":20}}` {
		t.Fatalf("first end offset %s", end1)
	}
	// A rerun of the batch reads the same records.
	again, _, err := s.GetBatch(ctx, "", end1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again.Rows) != fmt.Sprint(b1.Rows) {
		t.Fatal("rerun of batch 0 read other records")
	}
	got.add(t, b1)
	// Planned but not run (crash before offsets/1 or before the batch).
	if _, err := s.LatestOffset(ctx, source.ReadLimit{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	produce(t, cl, "t", []int32{0, 1, 2}, 100, 10)

	// Restart: new records arrive; the driver restarts from end1.
	s2 := newSource(t, c, func(o *Options) { o.MaxOffsetsPerTrigger = 60 })
	if err := s2.Start(ctx, dir); err != nil {
		t.Fatal(err)
	}
	last, n := drain(t, s2, end1, got)
	if n < 4 {
		t.Fatalf("%d batches after the restart, want at least 4", n)
	}
	for _, p := range []int32{0, 1, 2} {
		m := got[TP{"t", p}]
		if len(m) != 110 {
			t.Fatalf("partition %d: %d distinct offsets, want 110", p, len(m))
		}
		for off, k := range m {
			if k != 1 || off < 0 || off >= 110 {
				t.Fatalf("partition %d offset %d read %d times", p, off, k)
			}
		}
	}
	if last != `{"t":{"0":110,"1":110,"2":110}}` {
		t.Fatalf("last end %s", last)
	}
}

func TestStartingLatestAndSpecific(t *testing.T) {
	ctx := context.Background()
	c, cl := cluster(t, 2)
	produce(t, cl, "t", []int32{0, 1}, 0, 5)
	t.Run("latest", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) { o.StartingOffsets = "latest" })
		if err := s.Start(ctx, memtest.New(t)); err != nil {
			t.Fatal(err)
		}
		if end, err := s.LatestOffset(ctx, source.ReadLimit{}); err != nil || end != "" {
			t.Fatalf("LatestOffset before new data = %q, %v; want \"\"", end, err)
		}
	})
	t.Run("json with earliest marker", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) { o.StartingOffsets = `{"t":{"0":3,"1":-2}}` })
		dir := memtest.New(t)
		if err := s.Start(ctx, dir); err != nil {
			t.Fatal(err)
		}
		raw, err := dir.Read(ctx, initialFile)
		if err != nil || string(raw) != "\x00v1\n"+`{"t":{"0":3,"1":0}}` {
			t.Fatalf("sources/0/0 = %q, %v", raw, err)
		}
		got := seen{}
		drain(t, s, "", got)
		if len(got[TP{"t", 0}]) != 2 || len(got[TP{"t", 1}]) != 5 {
			t.Fatalf("read %d and %d records, want 2 and 5", len(got[TP{"t", 0}]), len(got[TP{"t", 1}]))
		}
	})
	t.Run("json missing a partition", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) { o.StartingOffsets = `{"t":{"0":3}}` })
		if err := s.Start(ctx, memtest.New(t)); !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("Start = %v, want ErrInvalidOptions", err)
		}
	})
}

func TestNewPartitionPickedUp(t *testing.T) {
	ctx := context.Background()
	c, cl := cluster(t, 1)
	produce(t, cl, "t", []int32{0}, 0, 4)
	s := newSource(t, c, nil)
	if err := s.Start(ctx, memtest.New(t)); err != nil {
		t.Fatal(err)
	}
	got := seen{}
	committed, _ := drain(t, s, "", got)
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 1, "t"); err != nil {
		t.Fatal(err)
	}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	produce(t, cl2, "t", []int32{1}, 0, 3)
	// The source's metadata may be up to 100ms old: poll (the minute only
	// bounds a source that never sees the partition; no speed is assumed).
	for deadline := time.Now().Add(time.Minute); len(got[TP{"t", 1}]) < 3 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		committed, _ = drain(t, s, committed, got)
	}
	if len(got[TP{"t", 1}]) != 3 || committed != `{"t":{"0":4,"1":3}}` {
		t.Fatalf("new partition: read %d records, end %s", len(got[TP{"t", 1}]), committed)
	}
}

func TestDataLoss(t *testing.T) {
	ctx := context.Background()
	c, cl := cluster(t, 2)
	produce(t, cl, "t", []int32{0, 1}, 0, 10)
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprintf("failOnDataLoss=%v", fail), func(t *testing.T) {
			s := newSource(t, c, func(o *Options) { o.FailOnDataLoss = fail })
			// Offsets planned before retention deleted the first records.
			start := `{"t":{"0":2,"1":2}}`
			end := `{"t":{"0":10,"1":10}}`
			if err := s.Start(ctx, memtest.New(t)); err != nil {
				t.Fatal(err)
			}
			if fail {
				adm := kadm.NewClient(cl)
				o := kadm.Offsets{}
				o.Add(kadm.Offset{Topic: "t", Partition: 0, At: 6})
				if _, err := adm.DeleteRecords(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			b, _, err := s.GetBatch(ctx, start, end)
			if fail {
				var de *DataLossError
				if !errors.As(err, &de) || !errors.Is(err, ErrDataLoss) || de.Topic != "t" || de.Partition != 0 || de.From != 2 || de.Until != 6 {
					t.Fatalf("GetBatch = %v, want a DataLossError for t-0 [2, 6)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var offs []int64
			for _, r := range b.Rows {
				if r[3].(int32) == 0 {
					offs = append(offs, r[4].(int64))
				}
			}
			if !slices.Equal(offs, []int64{6, 7, 8, 9}) || len(b.Rows) != 12 {
				t.Fatalf("skipping the lost range: partition 0 offsets %v, %d rows", offs, len(b.Rows))
			}
		})
	}
}

func TestHeadersAndJSONValues(t *testing.T) {
	ctx := context.Background()
	c, cl := cluster(t, 1)
	produce(t, cl, "t", []int32{0}, 0, 3)
	bad := []*kgo.Record{
		{Topic: "t", Partition: 0, Value: []byte(`{"p": 0, "i": "x"}`)},
		{Topic: "t", Partition: 0, Value: []byte(`not json`)},
	}
	if err := cl.ProduceSync(ctx, bad...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	t.Run("headers", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) { o.IncludeHeaders = true })
		if err := s.Start(ctx, memtest.New(t)); err != nil {
			t.Fatal(err)
		}
		b, _, err := s.GetBatch(ctx, "", `{"t":{"0":3}}`)
		if err != nil {
			t.Fatal(err)
		}
		hs := b.Rows[2][7].([]any)
		h := hs[0].([]any)
		if len(b.Schema.Fields) != 8 || h[0] != "h" || string(h[1].([]byte)) != "v2" {
			t.Fatalf("headers of offset 2: %v", hs)
		}
	})
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong, Nullable: true},
		{Name: "i", Type: schema.TypeLong, Nullable: true},
	}}
	t.Run("json fails naming the record", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) { o.ValueFormat, o.Schema = "json", sch })
		if err := s.Start(ctx, memtest.New(t)); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.GetBatch(ctx, "", `{"t":{"0":5}}`)
		var re *RecordError
		if !errors.As(err, &re) || !errors.Is(err, ErrBadRecord) || re.Offset != 3 || re.Partition != 0 {
			t.Fatalf("GetBatch = %v, want a RecordError at t-0 offset 3", err)
		}
	})
	t.Run("json bad record hook", func(t *testing.T) {
		var got []source.BadRecord
		s := newSource(t, c, func(o *Options) {
			o.ValueFormat, o.Schema = "json", sch
			o.OnBadRecord = func(b source.BadRecord) error { got = append(got, b); return nil }
		})
		if err := s.Start(ctx, memtest.New(t)); err != nil {
			t.Fatal(err)
		}
		b, stats, err := s.GetBatch(ctx, "", `{"t":{"0":5}}`)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Rows) != 3 || stats.NumBadRecords != 2 || len(got) != 2 || b.Rows[2][1] != int64(2) {
			t.Fatalf("rows %v, %d bad, hook saw %d", b.Rows, stats.NumBadRecords, len(got))
		}
		lines := []int{got[0].Line, got[1].Line}
		if !slices.Equal(lines, []int{3, 4}) || got[0].File != "kafka://t/0" {
			t.Fatalf("bad records at %v in %s, want offsets 3 and 4 of kafka://t/0", lines, got[0].File)
		}
	})
}

// TestMergeSchemaJSONValues is issue 14 item 2 for Kafka: a JSON value with a
// field the schema lacks was decoded with the field dropped. By default it is
// a *RecordError naming the record and field (source.ErrUnknownField); with
// SchemaEvolutionAddNewColumns the batch carries the merged schema (the new
// column nullable, after the given ones), and so do later batches.
func TestMergeSchemaJSONValues(t *testing.T) {
	ctx := context.Background()
	c, cl := cluster(t, 1)
	recs := []*kgo.Record{
		{Topic: "t", Partition: 0, Value: []byte(`{"p": 0, "i": 0}`)},
		{Topic: "t", Partition: 0, Value: []byte(`{"p": 0, "i": 1, "extra": "x"}`)},
		{Topic: "t", Partition: 0, Value: []byte(`{"p": 0, "i": 2}`)},
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	schema := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong, Nullable: true},
		{Name: "i", Type: schema.TypeLong, Nullable: true},
	}}
	t.Run("fails on the new field", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) { o.ValueFormat, o.Schema = "json", schema })
		if err := s.Start(ctx, memtest.New(t)); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.GetBatch(ctx, "", `{"t":{"0":3}}`)
		var re *RecordError
		if !errors.As(err, &re) || !errors.Is(err, source.ErrUnknownField) || re.Offset != 1 || re.Field != "extra" {
			t.Fatalf("GetBatch = %v, want a RecordError at t-0 offset 1 field extra", err)
		}
	})
	t.Run("addNewColumns", func(t *testing.T) {
		s := newSource(t, c, func(o *Options) {
			o.ValueFormat, o.Schema, o.SchemaEvolution = "json", schema, source.SchemaEvolutionAddNewColumns
		})
		if err := s.Start(ctx, memtest.New(t)); err != nil {
			t.Fatal(err)
		}
		b, _, err := s.GetBatch(ctx, "", `{"t":{"0":2}}`)
		if err != nil {
			t.Fatal(err)
		}
		want := [][]any{{int64(0), int64(0), nil}, {int64(0), int64(1), "x"}}
		if len(b.Schema.Fields) != 3 || b.Schema.Fields[2].Name != "extra" || !b.Schema.Fields[2].Nullable || !reflect.DeepEqual(b.Rows, want) {
			t.Fatalf("schema %v rows %v; want p, i, extra (nullable) and %v", b.Schema.Fields, b.Rows, want)
		}
		b, _, err = s.GetBatch(ctx, `{"t":{"0":2}}`, `{"t":{"0":3}}`)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Schema.Fields) != 3 || len(s.Schema().Fields) != 3 || !reflect.DeepEqual(b.Rows, [][]any{{int64(0), int64(2), nil}}) {
			t.Fatalf("next batch: schema %v rows %v; want the merged schema kept", b.Schema.Fields, b.Rows)
		}
	})
}
