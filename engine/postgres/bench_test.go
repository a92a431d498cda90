package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// latencyHandler records publish-to-deliver latency: each publication's
// data starts with its send time in Unix nanoseconds, as 19 digits.
type latencyHandler struct {
	n    atomic.Int64
	lat  []int64
	want int64
	done chan struct{}
	once sync.Once
}

func (h *latencyHandler) HandlePublication(_ string, p *engine.Publication, _ engine.StreamPosition) {
	i := h.n.Add(1) - 1
	if i < int64(len(h.lat)) && len(p.Data) >= 19 {
		if sent, err := strconv.ParseInt(string(p.Data[:19]), 10, 64); err == nil {
			h.lat[i] = time.Now().UnixNano() - sent
		}
	}
	if i+1 == h.want {
		h.once.Do(func() { close(h.done) })
	}
}
func (h *latencyHandler) HandleJoin(string, *engine.ClientInfo)  {}
func (h *latencyHandler) HandleLeave(string, *engine.ClientInfo) {}
func (h *latencyHandler) HandleControl([]byte)                   {}

func (h *latencyHandler) reset(n int) {
	h.n.Store(0)
	h.lat = make([]int64, n)
	h.want = int64(n)
	h.done = make(chan struct{})
	h.once = sync.Once{}
}

// BenchmarkPublish measures sustained publications per second through two
// nodes, publishers spread over both and both subscribed to every channel,
// and the publish-to-deliver latency on the receiving nodes.
func BenchmarkPublish(b *testing.B) {
	for _, hist := range []bool{true, false} {
		for _, channels := range []int{1, 100, 1000} {
			for _, pool := range []int{2, 4} {
				name := fmt.Sprintf("history=%v/channels=%d/pool=%d", hist, channels, pool)
				b.Run(name, func(b *testing.B) { benchPublish(b, hist, channels, pool, false) })
			}
		}
	}
}

// BenchmarkPublishSyncCommitOff is BenchmarkPublish's history cases with
// Config.SynchronousCommitOff.
func BenchmarkPublishSyncCommitOff(b *testing.B) {
	for _, channels := range []int{1, 1000} {
		b.Run(fmt.Sprintf("channels=%d", channels), func(b *testing.B) { benchPublish(b, true, channels, 2, true) })
	}
}

func benchPublish(b *testing.B, hist bool, channels, pool int, syncOff bool) {
	dsn := testDSN(b)
	schema := testSchema(b, dsn)
	ctx := context.Background()
	handlers := []*latencyHandler{{}, {}}
	var nodes []*Engine
	for _, h := range handlers {
		h.reset(0)
		opts := testOptions(dsn, schema)
		opts.PoolSize = pool
		opts.SynchronousCommitOff = syncOff
		nodes = append(nodes, startEngine(b, opts, h))
	}
	names := make([]string, channels)
	for i := range names {
		names[i] = fmt.Sprintf("bench:%d", i)
		for _, e := range nodes {
			if err := e.Subscribe(ctx, names[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	opts := engine.PublishOptions{}
	if hist {
		opts = engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Minute}
	}
	for _, h := range handlers {
		h.reset(b.N)
	}
	usage := sampleQueueUsage(b, dsn)
	var next atomic.Int64
	b.SetParallelism(128)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		// 128 bytes of text, as in the PostgreSignalR workload.
		data := []byte(strings.Repeat("x", 128))
		for pb.Next() {
			i := next.Add(1)
			strconv.AppendInt(data[:0], time.Now().UnixNano(), 10)
			e := nodes[i%2]
			if _, err := e.Publish(ctx, names[i%int64(channels)], &engine.Publication{Data: data}, opts); err != nil {
				b.Error(err)
				return
			}
		}
	})
	for _, h := range handlers {
		select {
		case <-h.done:
		case <-time.After(time.Minute):
			b.Fatalf("delivered %d of %d", h.n.Load(), b.N)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	maxUsage := usage()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pubs/s")
	var lat []int64
	for _, h := range handlers {
		lat = append(lat, h.lat...)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(maxUsage, "max-queue-usage")
	var batches float64
	for _, e := range nodes {
		batches += histogramCount(e.metrics.batchSize)
	}
	b.ReportMetric(float64(b.N)/batches, "pubs/tx")
}

// sampleQueueUsage polls pg_notification_queue_usage() until the returned
// function is called, which reports the highest value seen.
func sampleQueueUsage(b *testing.B, dsn string) func() float64 {
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var highest float64
	wg.Go(func() {
		defer conn.Close(context.Background())
		for {
			var u float64
			if err := conn.QueryRow(context.Background(), `SELECT pg_notification_queue_usage()`).Scan(&u); err == nil {
				highest = max(highest, u)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	return func() float64 {
		close(stop)
		wg.Wait()
		return highest
	}
}

// BenchmarkLatencyAtRate publishes at a fixed rate through node A to a
// channel node B is subscribed to, and reports publish-to-deliver latency
// on B: the engine's share of the PostgreSignalR workload (600 msg/s).
func BenchmarkLatencyAtRate(b *testing.B) {
	for _, hist := range []bool{false, true} {
		for _, rate := range []int{600, 1500} {
			b.Run(fmt.Sprintf("history=%v/rate=%d", hist, rate), func(b *testing.B) { benchRate(b, hist, rate) })
		}
	}
}

func benchRate(b *testing.B, hist bool, rate int) {
	dsn := testDSN(b)
	schema := testSchema(b, dsn)
	ctx := context.Background()
	h := &latencyHandler{}
	h.reset(0)
	pub := startEngine(b, testOptions(dsn, schema), &latencyHandler{})
	sub := startEngine(b, testOptions(dsn, schema), h)
	const ch = "rate"
	if err := sub.Subscribe(ctx, ch); err != nil {
		b.Fatal(err)
	}
	opts := engine.PublishOptions{}
	if hist {
		opts = engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Minute}
	}
	h.reset(b.N)
	b.ResetTimer()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	for range b.N {
		<-tick.C
		wg.Go(func() {
			data := []byte(strings.Repeat("x", 128))
			strconv.AppendInt(data[:0], time.Now().UnixNano(), 10)
			if _, err := pub.Publish(ctx, ch, &engine.Publication{Data: data}, opts); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	select {
	case <-h.done:
	case <-time.After(time.Minute):
		b.Fatalf("delivered %d of %d", h.n.Load(), b.N)
	}
	b.StopTimer()
	lat := slices.Clone(h.lat)
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}
