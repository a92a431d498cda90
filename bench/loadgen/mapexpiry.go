package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// MapExpiryConfig sets keys of a map channel whose namespace has a
// key_ttl through the server API and times each removal a live
// subscriber receives after its key's expiry.
type MapExpiryConfig struct {
	URL     string // client WebSocket URL
	Format  protocol.Type
	Secret  string
	APIURL  string // server API base, http://host:port/api
	APIKey  string
	Channel string // a channel of a map namespace with a key_ttl

	Keys     int
	KeyTTL   time.Duration // the namespace's map.key_ttl
	Payload  int           // bytes of each value
	Batch    int           // map_publish commands per API batch
	FillConc int           // API batches in flight
	PageSize int32         // the subscriber's state page size (at most the namespace's max_page_size)
	// Wait is how long after the last key's expiry the subscriber waits
	// for removals still missing.
	Wait time.Duration
}

// MapExpiryResult is what RunMapExpiry measured.
type MapExpiryResult struct {
	Keys    int           `json:"keys"`
	KeyTTL  time.Duration `json:"key_ttl_ns"`
	Fill    time.Duration `json:"fill_ns"` // from the first batch sent to the last answered
	Removed int           `json:"removed"` // removals received, one per key at most
	Missing int           `json:"missing"` // keys whose removal did not arrive within Wait
	// Lag is each removal's receipt after its key's expiry, counted from
	// when its batch was sent plus the key_ttl: the server set the expiry
	// no earlier, so the real lag is at most this. LagMin counts from when
	// the batch was answered (the expiry was set by then), a lower bound;
	// the two differ by the batches' own time.
	Lag    Percentiles `json:"lag"`
	LagMin Percentiles `json:"lag_min"`
}

// keyExpiry is one key's expiry as the client can bound it, and when its
// removal arrived.
type keyExpiry struct {
	sent, answered, removed time.Time // sent and answered: plus the key_ttl
}

// expiries is when each key of the run expires and when its removal
// arrived.
type expiries struct {
	mu      sync.Mutex
	keys    map[string]*keyExpiry
	removed int
	want    int
	all     chan struct{} // closed at the last removal
}

func (x *expiries) sent(keys []MapEntry, at time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range keys {
		x.keys[k.Key] = &keyExpiry{sent: at}
	}
}

func (x *expiries) answered(keys []MapEntry, at time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range keys {
		x.keys[k.Key].answered = at
	}
}

func (x *expiries) removal(pub *protocol.Publication, at time.Time) {
	if !pub.Removed {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	k := x.keys[pub.Key]
	if k == nil || !k.removed.IsZero() {
		return // not ours, or a second copy
	}
	k.removed = at
	x.removed++
	if x.removed == x.want {
		close(x.all)
	}
}

// lags summarises the removals received: from the send-time and the
// answer-time expiries.
func (x *expiries) lags() (upper, lower Percentiles) {
	x.mu.Lock()
	defer x.mu.Unlock()
	hu, hl := NewHistogram(), NewHistogram()
	for _, k := range x.keys {
		if k.removed.IsZero() {
			continue
		}
		hu.Record(k.removed.Sub(k.sent))
		if !k.answered.IsZero() {
			hl.Record(k.removed.Sub(k.answered))
		} else {
			hl.Record(0) // removed before its batch was answered
		}
	}
	return hu.Percentiles(), hl.Percentiles()
}

// RunMapExpiry subscribes one client to cfg.Channel, sets cfg.Keys keys
// through the server API, each batch expiring cfg.KeyTTL after it is
// sent, and waits for their removals.
func RunMapExpiry(ctx context.Context, cfg MapExpiryConfig) (MapExpiryResult, error) {
	res := MapExpiryResult{Keys: cfg.Keys, KeyTTL: cfg.KeyTTL}
	if cfg.Keys < 1 || cfg.Batch < 1 || cfg.FillConc < 1 || cfg.PageSize < 1 || cfg.KeyTTL <= 0 {
		return res, errors.New("keys, batch, fill concurrency, page size and key TTL must be positive")
	}
	c, err := DialMap(ctx, cfg.URL, cfg.Format, cfg.Secret, "bench-expiry")
	if err != nil {
		return res, err
	}
	defer c.Close()
	x := &expiries{keys: make(map[string]*keyExpiry, cfg.Keys), want: cfg.Keys, all: make(chan struct{})}
	c.OnPub = func(_ string, pub *protocol.Publication, at time.Time) { x.removal(pub, at) }
	if _, err := c.SubscribeMap(ctx, cfg.Channel, cfg.PageSize, false); err != nil {
		return res, fmt.Errorf("subscribe %s: %w", cfg.Channel, err)
	}
	readCtx, stopRead := context.WithCancel(ctx)
	read := make(chan error, 1)
	go func() { read <- c.ReadLive(readCtx) }()
	defer func() {
		stopRead()
		<-read
	}()

	api := NewAPIPublisher(cfg.APIURL, cfg.APIKey, cfg.FillConc, time.Minute)
	defer api.Close()
	start := time.Now()
	if err := fillExpiring(ctx, cfg, api, x); err != nil {
		return res, err
	}
	res.Fill = time.Since(start)
	last := time.Now().Add(cfg.KeyTTL)
	wait := time.NewTimer(time.Until(last) + cfg.Wait)
	defer wait.Stop()
	select {
	case <-x.all:
	case <-wait.C:
	case err := <-read:
		read <- err // for the deferred wait
		if err == nil {
			err = ctx.Err()
		}
		return res, fmt.Errorf("subscriber: %w", err)
	case <-ctx.Done():
	}
	res.Lag, res.LagMin = x.lags()
	x.mu.Lock()
	defer x.mu.Unlock()
	res.Removed, res.Missing = x.removed, cfg.Keys-x.removed
	return res, ctx.Err()
}

// fillExpiring sets the keys in batches, FillConc in flight, noting each
// batch's expiry as of its sending and of its answer.
func fillExpiring(ctx context.Context, cfg MapExpiryConfig, api *APIPublisher, x *expiries) error {
	return inBatches(ctx, cfg.Keys, cfg.Batch, cfg.FillConc, func(ctx context.Context, first, end int) error {
		entries := make([]MapEntry, 0, end-first)
		now := time.Now()
		for i := first; i < end; i++ {
			entries = append(entries, MapEntry{Key: mapKey(i), Data: mapValue(-1, now, cfg.Payload)})
		}
		x.sent(entries, now.Add(cfg.KeyTTL))
		if ok, err := api.MapPublish(ctx, cfg.Channel, entries, true); err != nil || ok != len(entries) {
			return fmt.Errorf("set keys from %d: %d of %d accepted: %w", first, ok, len(entries), err)
		}
		x.answered(entries, time.Now().Add(cfg.KeyTTL))
		return nil
	})
}

// WriteMapExpiryMarkdown prints r as a one-row Markdown table.
func WriteMapExpiryMarkdown(w io.Writer, r MapExpiryResult) error {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }
	_, err := fmt.Fprintf(w, "| keys | key_ttl | fill s | removed | missing | lag p50 ms | p99 ms | max ms | at least: p50 ms | p99 ms | max ms |\n"+
		"|---|---|---|---|---|---|---|---|---|---|---|\n| %d | %s | %.2f | %d | %d | %s | %s | %s | %s | %s | %s |\n",
		r.Keys, r.KeyTTL, r.Fill.Seconds(), r.Removed, r.Missing, ms(r.Lag.P50), ms(r.Lag.P99), ms(r.Lag.Max),
		ms(r.LagMin.P50), ms(r.LagMin.P99), ms(r.LagMin.Max))
	return err
}
