package stateoutput_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald/internal/test/kafkatest"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/stateoutput"
)

// kafkaTopic is a topic of the test's own.
func kafkaTopic() string {
	return "herald-test-state-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// kafkaRecord is a record the output produced, read back.
type kafkaRecord struct {
	partition int32
	key, id   string
	ev        stateoutput.Event
}

// readKafka reads n records of topic from its start, failing the test if
// they do not come within a minute.
func readKafka(t *testing.T, addr, topic string, n int) []kafkaRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var got []kafkaRecord
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d records of %s read, want %d", len(got), topic, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var e struct {
				Channel string `json:"channel"`
				Type    string `json:"type"`
				TimeMs  int64  `json:"time_ms"`
			}
			if err := json.Unmarshal(r.Value, &e); err != nil {
				t.Fatalf("%s: %v", r.Value, err)
			}
			kr := kafkaRecord{partition: r.Partition, key: string(r.Key), ev: stateoutput.Event{Channel: e.Channel, Type: e.Type, TimeMs: e.TimeMs}}
			for _, h := range r.Headers {
				if h.Key == stateoutput.KafkaEventIDHeader {
					kr.id = string(h.Value)
				}
			}
			got = append(got, kr)
		})
	}
	return got
}

// checkKafkaBatch checks that got is evs, each channel's in order (the
// topic has 3 partitions, so the channels interleave as they like), each
// keyed by its channel in one partition, with its event id.
func checkKafkaBatch(t *testing.T, got []kafkaRecord, evs []stateoutput.Event) {
	t.Helper()
	if len(got) != len(evs) {
		t.Fatalf("%d records, want %d", len(got), len(evs))
	}
	byChannel := map[string][]stateoutput.Event{}
	for _, e := range evs {
		byChannel[e.Channel] = append(byChannel[e.Channel], e)
	}
	partition := map[string]int32{}
	for _, r := range got {
		want := byChannel[r.key]
		if len(want) == 0 || r.ev != want[0] {
			t.Fatalf("record %+v: want the next of channel %q, %+v", r, r.key, want)
		}
		byChannel[r.key] = want[1:]
		if id := r.ev.Channel + ":" + r.ev.Type + ":" + strconv.FormatInt(r.ev.TimeMs, 10); r.id != id {
			t.Errorf("record %+v: %s %q, want %q", r, stateoutput.KafkaEventIDHeader, r.id, id)
		}
		if p, ok := partition[r.key]; ok && p != r.partition {
			t.Errorf("channel %q in partitions %d and %d", r.key, p, r.partition)
		}
		partition[r.key] = r.partition
	}
}

// TestKafkaOutput: a batch is a record per event, keyed by channel, each
// channel's in order with its event id header; a batch while the broker
// is stopped fails, and handed over again once it is back, it is written.
func TestKafkaOutput(t *testing.T) {
	b := kafkatest.Start(t)
	topic := kafkaTopic()
	out, err := stateoutput.NewKafkaOutput(t.Context(), stateoutput.KafkaConfig{Brokers: []string{b.Addr}, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Write(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	checkKafkaBatch(t, readKafka(t, b.Addr, topic, len(batch)), batch)

	b.Stop(t)
	next := []stateoutput.Event{{Channel: "chat:a", Type: "vacated", TimeMs: 2000}, {Channel: "chat:c", Type: "occupied", TimeMs: 2001}}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := out.Write(ctx, next); err == nil {
		t.Fatal("a batch to a stopped broker succeeded")
	}
	b.Restart(t)
	if err := out.Write(t.Context(), next); err != nil {
		t.Fatalf("the batch again, the broker back: %v", err)
	}
	// The records failed were never sent: the topic holds the first
	// batch, then the second.
	checkKafkaBatch(t, readKafka(t, b.Addr, topic, len(batch)+len(next)), append(append([]stateoutput.Event(nil), batch...), next...))
}

// TestKafkaOutputNoBroker: no broker to connect to fails the batch.
func TestKafkaOutputNoBroker(t *testing.T) {
	out, err := stateoutput.NewKafkaOutput(t.Context(), stateoutput.KafkaConfig{Brokers: []string{"127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))}})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := out.Write(ctx, batch); err == nil {
		t.Fatal("a batch to no broker succeeded")
	}
}
