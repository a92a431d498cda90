package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// TagsConfig is a tags filter benchmark: Subscribers connections on one
// channel, connection i subscribed with the filter tag "f" equal to
// "v<i mod Filters>", and publications through the server API at Rate for
// Step, publication j tagged f = "v<j mod Filters>": each reaches only
// the subscribers of its filter.
type TagsConfig struct {
	Pool            PoolConfig
	Subscribers     int
	Filters         int
	ConnectRate     float64
	DialConcurrency int
	Channel         string
	APIURL, APIKey  string
	APIConns        int
	Rate            float64
	Step            time.Duration
	Payload         int
	Grace           time.Duration // wait at most this long for the last copies
	ServerPIDs      []int
}

// TagsResult is one run's measurements.
type TagsResult struct {
	Connected   int64         `json:"connected"`
	Failed      int64         `json:"failed"`
	Ramp        time.Duration `json:"ramp_ns"`
	Sent        int64         `json:"sent"`
	PublishErrs int64         `json:"publish_errors"`
	Achieved    float64       `json:"achieved_rate"`
	Expected    int64         `json:"expected"` // copies the filters let through
	Received    int64         `json:"received"`
	Wrong       int64         `json:"wrong"` // copies a subscriber's filter should have stopped
	Latency     Percentiles   `json:"latency"`
	ServerCPU   float64       `json:"server_cpu"` // during the publications
	BenchCPU    float64       `json:"bench_cpu"`
}

// TagsFilter is connection i's filter among n.
func TagsFilter(i, n int) *protocol.FilterNode {
	return &protocol.FilterNode{Key: "f", Cmp: "eq", Val: "v" + strconv.Itoa(i%n)}
}

// tagsTally counts what the subscribers get: every copy must match its
// subscriber's filter.
type tagsTally struct {
	filters  int
	received atomic.Int64
	wrong    atomic.Int64
	mu       sync.Mutex
	hist     *Histogram
}

func (t *tagsTally) Messages(_, sub int, ms []Message, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range ms {
		t.note(sub, m, at)
	}
}

func (t *tagsTally) Publication(_, sub int, _ string, data []byte, at int64) {
	m, ok := ParsePayload(data)
	if !ok {
		t.wrong.Add(1)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.note(sub, m, at)
}

// note counts one copy; t.mu is held.
func (t *tagsTally) note(sub int, m Message, at int64) {
	if sub%t.filters != m.Seq%t.filters {
		t.wrong.Add(1)
		return
	}
	t.received.Add(1)
	t.hist.Record(time.Duration(at - m.Intended))
}

func (*tagsTally) Reply(int, uint32, *protocol.Error) {}

// RunTags connects the subscribers, publishes and counts.
func RunTags(ctx context.Context, cfg TagsConfig, logf func(string, ...any)) (TagsResult, error) {
	var res TagsResult
	if cfg.Subscribers <= 0 || cfg.Filters <= 0 || cfg.Rate <= 0 || cfg.Step <= 0 || cfg.APIURL == "" || cfg.APIConns <= 0 {
		return res, errors.New("tags: want subscribers, filters, a rate, a step, API connections and the server API")
	}
	if cfg.Pool.Client == ClientSDK {
		return res, errors.New("tags: --client sdk is not supported; use light or heavy")
	}
	if err := RaiseFileLimit(cfg.Subscribers + 64); err != nil {
		return res, err
	}
	clock := NewClock()
	tally := &tagsTally{filters: cfg.Filters, hist: NewHistogram()}
	cfg.Pool.Channels = []string{cfg.Channel}
	cfg.Pool.TagsFilters = cfg.Filters
	pool, err := NewPool(cfg.Pool, clock, tally)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	start := time.Now()
	// One process, connection i is subscriber i: Ramp numbers both from 0.
	Ramp(ctx, pool, Job{Count: cfg.Subscribers, Rate: cfg.ConnectRate, DialConcurrency: cfg.DialConcurrency}, clock)
	res.Ramp = time.Since(start)
	c := pool.Counters()
	res.Connected, res.Failed = c.Connected, c.Failed
	logf("%d connected, %d failed in %v, %d distinct filters; publishing at %.0f/s for %v", c.Connected, c.Failed,
		res.Ramp.Round(time.Millisecond), cfg.Filters, cfg.Rate, cfg.Step)
	if c.Failed > 0 {
		return res, fmt.Errorf("%d subscribers failed: %v", c.Failed, pool.Errors())
	}
	api := NewAPIPublisher(cfg.APIURL, cfg.APIKey, cfg.APIConns, time.Minute)
	defer api.Close()
	servers, self := NewSampler(cfg.ServerPIDs), SelfSample(clock.Now())
	_, _ = servers.Sample(clock.Now())
	if err := publishTagged(ctx, cfg, api, clock, &res); err != nil {
		return res, err
	}
	for j := range res.Sent {
		// Subscribers i < Subscribers with i ≡ j (mod Filters).
		q, r := cfg.Subscribers/cfg.Filters, cfg.Subscribers%cfg.Filters
		res.Expected += int64(q)
		if int(j%int64(cfg.Filters)) < r {
			res.Expected++
		}
	}
	now := clock.Now()
	if s, err := servers.Sample(now); err == nil {
		res.ServerCPU = s.CPUPercent
	}
	res.BenchCPU = CPUPercent(self, SelfSample(now))
	deadline := time.Now().Add(cfg.Grace)
	for tally.received.Load()+tally.wrong.Load() < res.Expected && time.Now().Before(deadline) {
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return res, err
		}
	}
	res.Received, res.Wrong = tally.received.Load(), tally.wrong.Load()
	tally.mu.Lock()
	res.Latency = tally.hist.Percentiles()
	tally.mu.Unlock()
	return res, nil
}

// publishTagged publishes at cfg.Rate for cfg.Step, APIConns in flight,
// publication j tagged for filter j mod Filters.
func publishTagged(ctx context.Context, cfg TagsConfig, api *APIPublisher, clock Clock, res *TagsResult) error {
	total := int(cfg.Rate * cfg.Step.Seconds())
	channel := strconv.Quote(cfg.Channel)
	sem := make(chan struct{}, cfg.APIConns)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	start := clock.Now()
	interval := float64(time.Second) / cfg.Rate
	for j := range total {
		due := start + int64(float64(j)*interval)
		if d := time.Duration(due - clock.Now()); d > 0 {
			if err := sleepCtx(ctx, d); err != nil {
				return err
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		body := append([]byte(`{"channel":`), channel...)
		body = append(body, `,"data":`...)
		body = AppendPayload(body, Message{Step: 0, N: total, Seq: j, Intended: due}, cfg.Payload)
		body = append(body, `,"tags":{"f":"v`...)
		body = append(strconv.AppendInt(body, int64(j%cfg.Filters), 10), `"}}`...)
		res.Sent++
		wg.Go(func() {
			defer func() { <-sem }()
			raw, err := api.post(ctx, "publish", body)
			if err == nil {
				_, err = countAPIReplies("publish", raw, 1)
			}
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, &err)
			}
		})
	}
	wg.Wait()
	res.PublishErrs = failed.Load()
	elapsed := max(time.Duration(clock.Now()-start), cfg.Step)
	res.Achieved = float64(res.Sent-res.PublishErrs) / elapsed.Seconds()
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("%d of %d publications failed, the first: %w", res.PublishErrs, res.Sent, *p)
	}
	return nil
}
