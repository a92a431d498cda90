package consumer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/consumer"
)

// oversizedCmd is a publish command of about 4 KB, over the 2 KB bound the
// tests set.
func oversizedCmd() string {
	return fmt.Sprintf(`{"channel":"news","data":{"n":1,"pad":%q}}`, strings.Repeat("x", 4<<10))
}

// checkOversizedMovedAside runs cfg with max_message_size 2 KB, writes an
// oversized command and then a small one (write), and checks that only the
// small one reaches subscribers, that the large one is counted, and, where
// the source has a dead-letter destination (deadLetters not nil), that it
// went there. Before, consumers applied commands of any size: a 10 MB
// outbox row reached WebSocket subscribers.
func checkOversizedMovedAside(t *testing.T, cfg consumer.Config, write func(method, payload string), deadLetters func() int) {
	t.Helper()
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	cfg.MaxMessageSize = 2 << 10
	g := runGroup(t, cfg, n.exec, "a")
	write("publish", oversizedCmd())
	write("publish", publishCmd("news", 2, ""))
	equal(t, sub.waitFor(t, 1, 60*time.Second), []string{`{"n":2}`})
	if got := sub.settle(t, 1, 200*time.Millisecond); len(got) != 1 {
		t.Fatalf("subscriber got %q, want only the small command's publication", got)
	}
	if o, f := counter(t, g, "herald_consumer_oversized_total", cfg.Name), counter(t, g, "herald_consumer_failed_total", cfg.Name); o != 1 || f != 1 {
		t.Fatalf("oversized %v failed %v, want 1 and 1", o, f)
	}
	if deadLetters != nil {
		eventually(t, 20*time.Second, "the oversized message moved aside", func() bool { return deadLetters() == 1 })
	}
}

func TestPostgresOutboxOversizedMovedAside(t *testing.T) {
	o := newOutbox(t)
	checkOversizedMovedAside(t, o.config("outbox", 1, "a"),
		func(method, payload string) { o.write(t, 0, method, payload) },
		func() int { return o.count(t, o.table+"_dead_letter") })
}

func TestRedisStreamOversizedMovedAside(t *testing.T) {
	r := newRedisStreams(t, "")
	checkOversizedMovedAside(t, r.config("streams", "", "s"),
		func(method, payload string) { r.write(t, "s", method, payload) },
		func() int {
			n, _ := r.rdb.XLen(context.Background(), r.prefix+"s:dead_letter").Result()
			return int(n)
		})
}

func TestJetStreamOversizedMovedAside(t *testing.T) {
	s := startJetStream(t)
	checkOversizedMovedAside(t, s.config("js", "", 0),
		func(method, payload string) { s.write(t, "commands.a", method, payload) },
		func() int {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			dead, err := s.js.Stream(ctx, "DEAD")
			if err != nil {
				return -1
			}
			info, err := dead.Info(ctx)
			if err != nil {
				return -1
			}
			return int(info.State.Msgs)
		})
}

func TestKafkaOversizedMovedAside(t *testing.T) {
	b := startKafka(t)
	p := b.producer(t)
	checkOversizedMovedAside(t, b.config("kafka"),
		func(method, payload string) { write(t, p, "commands", "k", method, payload) },
		nil) // the dead-letter topic is checked by TestKafkaPoisonMessages
}

// TestMaxMessageSizeValidated: a bound below -1 is refused by name.
func TestMaxMessageSizeValidated(t *testing.T) {
	err := consumer.Config{Name: "x", Type: consumer.TypeRedisStream, MaxMessageSize: -2,
		RedisStream: consumer.RedisStreamConfig{Address: []string{"127.0.0.1:1"}, Streams: []string{"s"}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "MaxMessageSize") {
		t.Fatalf("Validate: %v, want MaxMessageSize refused", err)
	}
}
