package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// MapsConfig is a map subscription benchmark: for each size of Keys, fill
// a map channel through the server API, read it whole with one fresh
// subscriber, then measure update latency under a steady write rate.
type MapsConfig struct {
	URL     string // client WebSocket URL
	Format  protocol.Type
	Secret  string
	APIURL  string // server API base, http://host:port/api
	APIKey  string
	Channel string // channel prefix in a map namespace; each size gets Channel + size

	Keys     []int
	Payload  int   // bytes of each value
	Batch    int   // map_publish commands per API batch while filling
	Parallel bool  // the fill batches are parallel batches
	FillConc int   // API batches in flight while filling
	PageSize int32 // state and stream page size (the namespace's map.max_page_size)

	Late        int           // fresh subscribers that then read the whole snapshot at once (0: none)
	Subscribers int           // live subscribers during the update phase
	Rates       []float64     // map_publish per second, one update step each, in order, until one is not served
	Step        time.Duration // how long each update step lasts
	P99Limit    time.Duration // a step whose first-copy p99 is above it is not served (0: no limit)
	APIConns    int           // map_publish calls in flight during the update phase
	Grace       time.Duration // wait this long after the last update for late copies
	MaxLag      time.Duration // stop the update phase when the publisher falls this far behind

	FillTimeout     time.Duration // bound of one fill
	SnapshotTimeout time.Duration // bound of one snapshot read

	ServerPIDs []int  // servers whose RSS is sampled
	StoreCmd   string // shell command printing the engine store's size in bytes (empty: not measured)
}

// MapsResult is one size's measurements.
type MapsResult struct {
	Keys         int           `json:"keys"`
	Fill         time.Duration `json:"fill_ns"`
	RSSBefore    int64         `json:"rss_before"`
	RSSFilled    int64         `json:"rss_filled"`
	StoreBefore  int64         `json:"store_before"` // -1: not measured
	StoreFilled  int64         `json:"store_filled"`
	Snapshot     time.Duration `json:"snapshot_ns"` // dial to live reply
	Sync         MapSync       `json:"sync"`
	Updates      []UpdateStep  `json:"updates"`             // the update steps run, in order
	Served       float64       `json:"highest_rate_served"` // the highest rate of a served step (0: none)
	Subscribers  int           `json:"subscribers"`
	RSSAfterRead int64         `json:"rss_after_read"`
	Late         LateSnapshots `json:"late"`
}

// LateSnapshots is MapsConfig.Late subscribers reading a map's whole
// snapshot at once.
type LateSnapshots struct {
	Subscribers int           `json:"subscribers"`
	Complete    int           `json:"complete"` // read every key and went live
	All         time.Duration `json:"all_ns"`   // from the first dial to the last live reply
	Each        Percentiles   `json:"each"`     // each subscriber's dial to live reply
	ServerCPU   float64       `json:"server_cpu"`
	FirstError  string        `json:"first_error,omitempty"`
}

// ParseKeys parses a comma-separated list of map sizes (10000,1e6 and
// 1000000 are all accepted).
func ParseKeys(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 1 || v > 1e9 || v != float64(int(v)) {
			return nil, fmt.Errorf("keys %q: want whole numbers from 1 to 1e9, comma-separated", s)
		}
		out = append(out, int(v))
	}
	return out, nil
}

// mapKey is the name of key i of a map.
func mapKey(i int) string { return fmt.Sprintf("k%09d", i) }

// mapValue is a JSON value of about size bytes carrying an update's
// sequence number and intended send time (n -1 while filling).
func mapValue(n int64, at time.Time, size int) []byte {
	b := fmt.Appendf(nil, `{"n":%d,"t":%d,"p":"`, n, at.UnixNano())
	for len(b) < size-2 {
		b = append(b, 'x')
	}
	return append(b, `"}`...)
}

// parseMapValue reads what mapValue wrote.
func parseMapValue(data []byte) (n int64, at time.Time, err error) {
	if n, t, ok := scanMapValue(data); ok {
		return n, time.Unix(0, t), nil
	}
	var v struct {
		N *int64 `json:"n"`
		T int64  `json:"t"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return 0, time.Time{}, err
	}
	if v.N == nil {
		return 0, time.Time{}, errors.New(`no "n" in the value`)
	}
	return *v.N, time.Unix(0, v.T), nil
}

// RunMaps runs every size in turn; progress gets each result as it is done.
func RunMaps(ctx context.Context, cfg MapsConfig, progress func(string)) ([]MapsResult, error) {
	if cfg.Batch < 1 || cfg.FillConc < 1 || cfg.APIConns < 1 || cfg.PageSize < 1 || cfg.Subscribers < 0 {
		return nil, errors.New("batch, fill concurrency, API connections and page size must be positive")
	}
	if len(cfg.Rates) == 0 || slices.ContainsFunc(cfg.Rates, func(r float64) bool { return r <= 0 }) {
		return nil, errors.New("give one rate or more, each positive")
	}
	api := NewAPIPublisher(cfg.APIURL, cfg.APIKey, max(cfg.FillConc, cfg.APIConns), time.Minute)
	defer api.Close()
	var out []MapsResult
	for _, n := range cfg.Keys {
		r, err := runMapSize(ctx, cfg, api, n, progress)
		out = append(out, r)
		if err != nil {
			return out, fmt.Errorf("%d keys: %w", n, err)
		}
	}
	return out, nil
}

func runMapSize(ctx context.Context, cfg MapsConfig, api *APIPublisher, n int, progress func(string)) (MapsResult, error) {
	r := MapsResult{Keys: n, Subscribers: cfg.Subscribers, StoreBefore: -1, StoreFilled: -1}
	channel := cfg.Channel + strconv.Itoa(n)
	var err error
	if r.RSSBefore, err = serverRSS(cfg.ServerPIDs); err != nil {
		return r, err
	}
	if r.StoreBefore, err = storeSize(ctx, cfg.StoreCmd); err != nil {
		return r, err
	}
	progress(fmt.Sprintf("%d keys: filling %s", n, channel))
	if r.Fill, err = fillMap(ctx, cfg, api, channel, n); err != nil {
		return r, err
	}
	if r.RSSFilled, err = serverRSS(cfg.ServerPIDs); err != nil {
		return r, err
	}
	if r.StoreFilled, err = storeSize(ctx, cfg.StoreCmd); err != nil {
		return r, err
	}
	progress(fmt.Sprintf("%d keys: filled in %v; reading the snapshot", n, r.Fill.Round(time.Millisecond)))
	if r.Snapshot, r.Sync, err = readSnapshot(ctx, cfg, channel); err != nil {
		return r, err
	}
	if r.Sync.Keys != n {
		return r, fmt.Errorf("the snapshot has %d keys, want %d", r.Sync.Keys, n)
	}
	if r.RSSAfterRead, err = serverRSS(cfg.ServerPIDs); err != nil {
		return r, err
	}
	if cfg.Late > 0 {
		progress(fmt.Sprintf("%d keys: snapshot (%d state pages) and live in %v; %d late subscribers read it at once",
			n, r.Sync.StatePages, r.Snapshot.Round(time.Millisecond), cfg.Late))
		r.Late = readSnapshots(ctx, cfg, channel, n)
		progress(fmt.Sprintf("%d keys: %d of %d late subscribers had it all in %v (p50 %v, p99 %v)", n, r.Late.Complete, r.Late.Subscribers,
			r.Late.All.Round(time.Millisecond), r.Late.Each.P50.Round(time.Millisecond), r.Late.Each.P99.Round(time.Millisecond)))
	}
	progress(fmt.Sprintf("%d keys: snapshot (%d state pages) and live in %v; updates at %v/s, %v each, to %d subscribers",
		n, r.Sync.StatePages, r.Snapshot.Round(time.Millisecond), cfg.Rates, cfg.Step, cfg.Subscribers))
	return r, measureUpdates(ctx, cfg, api, channel, n, &r)
}

// serverRSS sums the servers' RSS (0 without any).
func serverRSS(pids []int) (int64, error) {
	var sum int64
	for _, pid := range pids {
		s, err := ReadProc(pid, 0)
		if err != nil {
			return 0, err
		}
		sum += s.RSS
	}
	return sum, nil
}

// storeSize runs cmd (sh -c, at most a minute) and reads the byte count it
// prints; -1 without a command.
func storeSize(ctx context.Context, cmd string) (int64, error) {
	if cmd == "" {
		return -1, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", cmd).Output()
	if err != nil {
		return 0, fmt.Errorf("store size command: %w", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("store size command printed %q, want a byte count", strings.TrimSpace(string(out)))
	}
	return v, nil
}

// fillMap sets keys 0..n-1 in batches, FillConc batches in flight.
func fillMap(ctx context.Context, cfg MapsConfig, api *APIPublisher, channel string, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.FillTimeout)
	defer cancel()
	start := time.Now()
	err := inBatches(ctx, n, cfg.Batch, cfg.FillConc, func(ctx context.Context, first, end int) error {
		entries := make([]MapEntry, 0, end-first)
		for i := first; i < end; i++ {
			entries = append(entries, MapEntry{Key: mapKey(i), Data: mapValue(-1, start, cfg.Payload)})
		}
		if ok, err := api.MapPublish(ctx, channel, entries, cfg.Parallel); err != nil || ok != len(entries) {
			return fmt.Errorf("fill keys from %d: %d of %d accepted: %w", first, ok, len(entries), err)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return 0, fmt.Errorf("fill: %w", err)
		}
		return 0, err
	}
	return time.Since(start), nil
}

// readSnapshot times one fresh subscriber from dial to the live reply,
// reading every state page.
func readSnapshot(ctx context.Context, cfg MapsConfig, channel string) (time.Duration, MapSync, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.SnapshotTimeout)
	defer cancel()
	start := time.Now()
	c, err := DialMap(ctx, cfg.URL, cfg.Format, cfg.Secret, "bench-snapshot")
	if err != nil {
		return 0, MapSync{}, err
	}
	defer c.Close()
	s, err := c.SubscribeMap(ctx, channel, cfg.PageSize, true)
	if err != nil {
		return 0, s, fmt.Errorf("snapshot: %w", err)
	}
	return time.Since(start), s, nil
}

// readSnapshots has cfg.Late fresh subscribers read the whole snapshot of
// a map of n keys at once; failures are counted, not fatal.
func readSnapshots(ctx context.Context, cfg MapsConfig, channel string, n int) LateSnapshots {
	ctx, cancel := context.WithTimeout(ctx, cfg.SnapshotTimeout)
	defer cancel()
	out := LateSnapshots{Subscribers: cfg.Late}
	hist := NewHistogram()
	var mu sync.Mutex
	var wg sync.WaitGroup
	cpu := NewSampler(cfg.ServerPIDs)
	start := time.Now()
	_, _ = cpu.Sample(start.UnixNano())
	for i := range cfg.Late {
		wg.Go(func() {
			t0 := time.Now()
			s, err := readLate(ctx, cfg, channel, i)
			took := time.Since(t0)
			if err == nil && s.Keys != n {
				err = fmt.Errorf("the snapshot has %d keys, want %d", s.Keys, n)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if out.FirstError == "" {
					out.FirstError = fmt.Sprintf("late subscriber %d: %v", i, err)
				}
				return
			}
			out.Complete++
			hist.Record(took)
		})
	}
	wg.Wait()
	out.All = time.Since(start)
	out.Each = hist.Percentiles()
	if s, err := cpu.Sample(time.Now().UnixNano()); err == nil {
		out.ServerCPU = s.CPUPercent
	}
	return out
}

// readLate is one late subscriber's read, counting rather than keeping
// the keys.
func readLate(ctx context.Context, cfg MapsConfig, channel string, i int) (MapSync, error) {
	c, err := DialMap(ctx, cfg.URL, cfg.Format, cfg.Secret, "bench-late-"+strconv.Itoa(i))
	if err != nil {
		return MapSync{}, err
	}
	defer c.Close()
	c.CountOnly = true
	return c.SubscribeMap(ctx, channel, cfg.PageSize, true)
}
