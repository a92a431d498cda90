package consumer_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/consumer"
)

// TestConsumerThroughput measures, for each source, the publications per
// second through a consumer (4 producers writing 2,000 publish commands,
// one subscriber) and the latency from the producer's commit to the
// subscriber. It runs only with HERALD_BENCH_CONSUMERS=1; docs/benchmarks.md
// has its results.
func TestConsumerThroughput(t *testing.T) {
	if os.Getenv("HERALD_BENCH_CONSUMERS") != "1" {
		t.Skip("HERALD_BENCH_CONSUMERS=1 runs it")
	}
	const producers, total = 4, 2000
	measure := func(t *testing.T, cfg consumer.Config, write func(t *testing.T, p int, cmd string)) {
		n := startNode(t)
		sub := subscribe(t, n.hub, "bench")
		runGroup(t, cfg, n.exec, "a")
		start := time.Now()
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := p; i < total; i += producers {
					// The write's start stands for its commit: the commit
					// is at most the write's own time later.
					write(t, p, fmt.Sprintf(`{"channel":"bench","data":{"t":%d}}`, time.Now().UnixNano()))
				}
			}()
		}
		got := sub.waitFor(t, total, 2*time.Minute)
		took := time.Since(start)
		wg.Wait()
		sub.mu.Lock()
		at := append([]time.Time(nil), sub.at...)
		sub.mu.Unlock()
		lat := make([]time.Duration, 0, total)
		for i, d := range got[:total] {
			var v struct{ T int64 }
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				t.Fatal(err)
			}
			lat = append(lat, at[i].Sub(time.Unix(0, v.T)))
		}
		slices.Sort(lat)
		t.Logf("RESULT %s: %d publications in %s = %.0f/s; latency p50 %s p99 %s",
			cfg.Type, total, took.Round(time.Millisecond), float64(total)/took.Seconds(),
			lat[len(lat)/2].Round(100*time.Microsecond), lat[len(lat)*99/100].Round(100*time.Microsecond))
	}
	t.Run("postgresql", func(t *testing.T) {
		o := newOutbox(t)
		cfg := o.config("outbox", producers, "a")
		measure(t, cfg, func(t *testing.T, p int, cmd string) { o.write(t, p, "publish", cmd) })
	})
	t.Run("redis_stream", func(t *testing.T) {
		r := newRedisStreams(t, "")
		var streams []string
		for p := range producers {
			streams = append(streams, "s"+strconv.Itoa(p))
		}
		measure(t, r.config("streams", "", streams...), func(t *testing.T, p int, cmd string) {
			r.write(t, "s"+strconv.Itoa(p), "publish", cmd)
		})
	})
	t.Run("nats_jetstream", func(t *testing.T) {
		s := startJetStream(t)
		measure(t, s.config("js", "", 0), func(t *testing.T, p int, cmd string) {
			s.write(t, "commands."+strconv.Itoa(p), "publish", cmd)
		})
	})
	t.Run("kafka", func(t *testing.T) {
		b := startKafka(t)
		prod := b.producer(t)
		write(t, prod, "commands", "warm", "publish", `{"channel":"warmup","data":{}}`)
		measure(t, b.config("kafka"), func(t *testing.T, p int, cmd string) {
			write(t, prod, "commands", strconv.Itoa(p), "publish", cmd)
		})
	})
}
