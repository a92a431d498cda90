package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// SharedPollConfig configures a shared poll run: Connections clients
// subscribe to Channel (a shared_poll namespace in the versioned mode)
// and track keys (Pool.Track), the server polls this tool's refresh
// backend on Backend, and after Measure the backend raises every key's
// version once: the run reports the backend's calls per Interval before
// the change and how long each tracking connection took to get it.
type SharedPollConfig struct {
	Pool            PoolConfig
	Connections     int
	ConnectRate     float64
	DialConcurrency int
	Channel         string
	// Backend is the refresh proxy's listen address (the servers'
	// proxies[].endpoint is http://Backend/).
	Backend string
	// Interval is the servers' shared_poll.refresh_interval, to state the
	// calls per interval.
	Interval time.Duration
	// Measure is how long the backend's calls are counted before the
	// change, after every connection tracked its keys.
	Measure time.Duration
	// Wait bounds the wait for the changed version to reach everyone.
	Wait time.Duration
}

// SharedPollResult is a shared poll run's outcome.
type SharedPollResult struct {
	Connected int64 `json:"connected"`
	Failed    int64 `json:"failed"`
	// Ramp is how long connecting, subscribing and tracking took.
	Ramp time.Duration `json:"ramp"`
	// CallsPerInterval and KeysPerCall are the backend's refresh requests
	// per refresh interval and the keys in each, measured before the
	// change; Keys is how many distinct keys were tracked.
	CallsPerInterval float64 `json:"calls_per_interval"`
	KeysPerCall      float64 `json:"keys_per_call"`
	Keys             int     `json:"keys"`
	// Expected is the (connection, key) pairs tracked; Received those that
	// got the changed version within Wait.
	Expected int64 `json:"expected"`
	Received int64 `json:"received"`
	// Latency is from the change (the backend's first answer with the new
	// version) to each push of it.
	Latency Percentiles `json:"latency"`
	// ToLast is the time from the change to the last push received;
	// FromRaise from the moment the backend raised the versions, which
	// adds the wait for the servers' next poll.
	ToLast    time.Duration `json:"to_last"`
	FromRaise time.Duration `json:"from_raise"`
}

// pollBackend is the refresh proxy: every key has the current version;
// a request with an older one gets the key's data, which carries the
// version and the time of the change.
type pollBackend struct {
	clock   Clock
	version atomic.Uint64
	changed atomic.Int64 // Clock time of the first answer with version 2
	calls   atomic.Int64
	keys    atomic.Int64
}

func (b *pollBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Items []struct {
			Key     string `json:"key"`
			Version uint64 `json:"version"`
		} `json:"items"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.calls.Add(1)
	b.keys.Add(int64(len(req.Items)))
	v := b.version.Load()
	if v > 1 {
		b.changed.CompareAndSwap(0, b.clock.Now())
	}
	type item struct {
		Key     string          `json:"key"`
		Data    json.RawMessage `json:"data"`
		Version uint64          `json:"version"`
	}
	data := json.RawMessage(`{"v":` + strconv.FormatUint(v, 10) + `,"t":` + strconv.FormatInt(b.changed.Load(), 10) + `}`)
	var res struct {
		Result struct {
			Items []item `json:"items"`
		} `json:"result"`
	}
	res.Result.Items = []item{}
	for _, it := range req.Items {
		if it.Version < v {
			res.Result.Items = append(res.Result.Items, item{Key: it.Key, Data: data, Version: v})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// pollTally records the pushes of the changed version.
type pollTally struct {
	mu       sync.Mutex
	hist     *Histogram
	last     int64
	received atomic.Int64
}

func (t *pollTally) Publication(_, _ int, _ string, data []byte, at int64) {
	v, ok1 := payloadInt(data, `"v"`)
	ts, ok2 := payloadInt(data, `"t"`)
	if !ok1 || !ok2 || v < 2 || ts == 0 {
		return
	}
	t.received.Add(1)
	t.mu.Lock()
	t.hist.Record(time.Duration(at - ts))
	t.last = max(t.last, at)
	t.mu.Unlock()
}

func (*pollTally) Reply(int, uint32, *protocol.Error) {}

// RunSharedPoll runs the connections in this process (at most the
// open-files limit: run several processes for more).
func RunSharedPoll(ctx context.Context, cfg SharedPollConfig, logf func(string, ...any)) (SharedPollResult, error) {
	var res SharedPollResult
	if cfg.Pool.Track == nil || cfg.Connections <= 0 || cfg.Channel == "" {
		return res, errors.New("shared poll: want connections, a channel and keys to track")
	}
	if cfg.Pool.Client == ClientSDK {
		// The SDK's shared poll subscriptions take their keys from the
		// application at run time; the tool's tracking is in its own
		// connect frame.
		return res, errors.New("shared poll: --client sdk is not supported; use light or heavy")
	}
	if cfg.Interval <= 0 || cfg.Measure <= 0 || cfg.Wait <= 0 {
		return res, errors.New("shared poll: want a positive interval, measure and wait")
	}
	if err := RaiseFileLimit(cfg.Connections + 64); err != nil {
		return res, err
	}
	clock := NewClock()
	backend := &pollBackend{clock: clock}
	backend.version.Store(1)
	ln, err := net.Listen("tcp", cfg.Backend)
	if err != nil {
		return res, fmt.Errorf("refresh backend: %w", err)
	}
	srv := &http.Server{Handler: backend, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	tally := &pollTally{hist: NewHistogram()}
	cfg.Pool.Channels = []string{cfg.Channel}
	cfg.Pool.SubscribeType = subscribeSharedPoll
	pool, err := NewPool(cfg.Pool, clock, tally)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	start := time.Now()
	Ramp(ctx, pool, Job{Count: cfg.Connections, Rate: cfg.ConnectRate, DialConcurrency: cfg.DialConcurrency}, clock)
	res.Ramp = time.Since(start)
	c := pool.Counters()
	res.Connected, res.Failed = c.Connected, c.Failed
	logf("%d connected, %d failed in %v; counting the backend's calls for %v", c.Connected, c.Failed, res.Ramp.Round(time.Millisecond), cfg.Measure)
	if c.Connected == 0 {
		return res, fmt.Errorf("no connection tracked its keys: %v", pool.Errors())
	}
	calls0, keys0 := backend.calls.Load(), backend.keys.Load()
	if err := sleepCtx(ctx, cfg.Measure); err != nil {
		return res, err
	}
	calls, keys := backend.calls.Load()-calls0, backend.keys.Load()-keys0
	res.CallsPerInterval = float64(calls) / (float64(cfg.Measure) / float64(cfg.Interval))
	if calls > 0 {
		res.KeysPerCall = float64(keys) / float64(calls)
	}
	res.Keys = min(cfg.Pool.Track.Keys, cfg.Connections*cfg.Pool.Track.PerConn)
	res.Expected = c.Connected * int64(cfg.Pool.Track.PerConn)
	logf("%.1f refresh calls per %v, %.0f keys each; raising every key's version", res.CallsPerInterval, cfg.Interval, res.KeysPerCall)
	raised := clock.Now()
	backend.version.Store(2)
	deadline := time.Now().Add(cfg.Wait)
	for tally.received.Load() < res.Expected && time.Now().Before(deadline) {
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return res, err
		}
	}
	res.Received = tally.received.Load()
	tally.mu.Lock()
	res.Latency = tally.hist.Percentiles()
	if ch := backend.changed.Load(); ch > 0 && tally.last > 0 {
		res.ToLast = time.Duration(tally.last - ch)
		res.FromRaise = time.Duration(tally.last - raised)
	}
	tally.mu.Unlock()
	return res, nil
}

// subscribeSharedPoll is the subscribe type of shared poll channels.
const subscribeSharedPoll = 4
