package enginetest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// removals records when each map key's removal is delivered.
type removals struct {
	mu   sync.Mutex
	at   map[string]time.Time
	want int
	all  chan struct{} // closed once want removals arrived
}

func (r *removals) HandlePublication(_ string, pub *engine.Publication, _ engine.StreamPosition) {
	if !pub.Removed {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.at[pub.Key]; seen {
		return
	}
	r.at[pub.Key] = time.Now()
	if len(r.at) == r.want {
		close(r.all)
	}
}
func (r *removals) HandleJoin(string, *engine.ClientInfo)  {}
func (r *removals) HandleLeave(string, *engine.ClientInfo) {}
func (r *removals) HandleControl([]byte)                   {}

// MapKeysExpiringTogether starts b, which must not be started yet, with a
// handler of its own, publishes n keys of channel ch whose TTLs all end at
// one moment (perKey is how long a publish may take on average: the
// moment is n*perKey away), waits for every removal (at most within), and
// returns the longest time between a key's expiry and the delivery of its
// removal (ExpiryLags has the distribution). A key published later than planned gets a TTL of at least a
// second and its own expiry, so a slow machine spreads the expiries
// rather than failing the test. Engines remove expired keys in batches;
// this is what a batch bound costs when many expire at once (issue:
// 30,000 keys removed up to 30 s late).
func MapKeysExpiringTogether(t *testing.T, b engine.Engine, ch string, n int, perKey, within time.Duration) ExpiryLags {
	t.Helper()
	return MapKeysExpiringSeeded(t, b, ch, n, within, func(ctx context.Context, mb engine.MapBroker, keys []string) (map[string]time.Time, error) {
		return publishExpiringTogether(ctx, mb, ch, keys, time.Now().Add(500*time.Millisecond+time.Duration(n)*perKey))
	})
}

// MapKeysExpiringSeeded is MapKeysExpiringTogether with the keys put in
// place by seed, which returns when each expires (an engine's test may
// write its state directly, faster than publishing one key at a time).
func MapKeysExpiringSeeded(t *testing.T, b engine.Engine, ch string, n int, within time.Duration,
	seed func(ctx context.Context, mb engine.MapBroker, keys []string) (map[string]time.Time, error)) ExpiryLags {
	t.Helper()
	ctx := context.Background()
	r := &removals{at: make(map[string]time.Time, n), want: n, all: make(chan struct{})}
	if err := b.Start(ctx, r); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.Subscribe(ctx, ch); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	mb, ok := engine.MapsOf(b)
	if !ok {
		t.Fatalf("%T has no map state", b)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	expiry, err := seed(ctx, mb, keys)
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, at := range expiry {
		if at.After(last) {
			last = at
		}
	}
	select {
	case <-r.all:
	case <-time.After(time.Until(last) + within):
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("%d of %d removals within %s of their expiry", len(r.at), n, within)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	lags := make([]time.Duration, 0, len(r.at))
	for key, at := range r.at {
		lags = append(lags, at.Sub(expiry[key]))
	}
	return NewExpiryLags(lags)
}

// ExpiryLags summarises how long after their keys' expiry removals were
// delivered. A removal delivered early (a clock read before the engine's)
// counts as no lag.
type ExpiryLags struct {
	Keys          int
	P50, P99, Max time.Duration
}

// NewExpiryLags summarises lags, one per removal.
func NewExpiryLags(lags []time.Duration) ExpiryLags {
	if len(lags) == 0 {
		return ExpiryLags{}
	}
	s := slices.Clone(lags)
	slices.Sort(s)
	at := func(q float64) time.Duration { return max(0, s[min(len(s)-1, int(q*float64(len(s))))]) }
	return ExpiryLags{Keys: len(s), P50: at(0.5), P99: at(0.99), Max: max(0, s[len(s)-1])}
}

func (l ExpiryLags) String() string {
	return fmt.Sprintf("%d removals after their keys' expiry: p50 %s, p99 %s, max %s",
		l.Keys, l.P50.Round(time.Millisecond), l.P99.Round(time.Millisecond), l.Max.Round(time.Millisecond))
}

// publishExpiringTogether publishes keys of ch with TTLs that end at end,
// or a second after their publish for those published too late for it,
// and returns each key's expiry (taken before its publish, so no later
// than the engine's).
func publishExpiringTogether(ctx context.Context, mb engine.MapBroker, ch string, keys []string, end time.Time) (map[string]time.Time, error) {
	const publishers = 16 // as many clients would: one at a time, a database takes too long
	expiry := make([]time.Time, len(keys))
	var wg sync.WaitGroup
	errs := make(chan error, publishers)
	for w := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += publishers {
				now := time.Now()
				ttl := max(end.Sub(now), time.Second)
				expiry[i] = now.Add(ttl)
				opts := engine.MapPublishOptions{StreamSize: 10, StreamTTL: time.Minute, KeyTTL: ttl}
				if _, err := mb.MapPublish(ctx, ch, &engine.Publication{Key: keys[i], Data: []byte(`1`)}, opts); err != nil {
					errs <- fmt.Errorf("MapPublish: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	m := make(map[string]time.Time, len(keys))
	for i, k := range keys {
		m[k] = expiry[i]
	}
	return m, nil
}
