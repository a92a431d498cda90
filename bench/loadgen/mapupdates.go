package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// UpdateStep is one offered rate of the update phase: map_publish to
// random keys at Rate for MapsConfig.Step, every live subscriber reading.
type UpdateStep struct {
	Rate        float64     `json:"rate"`
	Sent        int64       `json:"sent"`
	PublishErrs int64       `json:"publish_errors"`
	Achieved    float64     `json:"achieved_rate"`
	Missing     int64       `json:"missing"` // updates no subscriber received
	First       Percentiles `json:"first"`   // publish-to-receive of the first copy
	Stopped     string      `json:"stopped,omitempty"`
	// Served: the publisher kept up, and Served holds for the first
	// copy's p99 within MapsConfig.P99Limit.
	Served bool `json:"served"`
}

// measureUpdates connects the live subscribers once, then runs one step
// per rate of cfg.Rates in order, stopping after the first step not
// served; r.Updates gets every step run.
func measureUpdates(ctx context.Context, cfg MapsConfig, api *APIPublisher, channel string, n int, r *MapsResult) error {
	// The step being measured; the readers note into whichever it is, and
	// each step numbers its updates after the last step's, so a late copy
	// of an earlier step is not counted in a later one.
	var cur atomic.Pointer[firstCopies]
	cur.Store(newFirstCopies(0, 0))
	liveCtx, stopLive := context.WithCancel(ctx)
	var readers sync.WaitGroup
	// Stop the readers before waiting for them, on every return.
	defer func() { stopLive(); readers.Wait() }()
	readErrs := make(chan error, cfg.Subscribers)
	for i := range cfg.Subscribers {
		dctx, cancel := context.WithTimeout(ctx, cfg.SnapshotTimeout)
		c, err := DialMap(dctx, cfg.URL, cfg.Format, cfg.Secret, "bench-live-"+strconv.Itoa(i))
		if err == nil {
			c.OnPub = func(_ string, pub *protocol.Publication, at time.Time) { cur.Load().note(pub.Key, pub.Data, at) }
			_, err = c.SubscribeMap(dctx, channel, cfg.PageSize, false)
			if err != nil {
				c.Close()
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("live subscriber %d: %w", i, err)
		}
		readers.Go(func() {
			defer c.Close()
			if err := c.ReadLive(liveCtx); err != nil {
				readErrs <- fmt.Errorf("live subscriber %d: %w", i, err)
			}
		})
	}
	var base int64
	for _, rate := range cfg.Rates {
		first := newFirstCopies(base, int64(rate*cfg.Step.Seconds()))
		cur.Store(first)
		step, err := updateStep(ctx, cfg, api, channel, n, rate, first, readErrs)
		r.Updates = append(r.Updates, step)
		if err != nil {
			return err
		}
		if step.Served {
			r.Served = max(r.Served, rate)
		}
		base += step.Sent
		if !step.Served {
			break
		}
	}
	stopLive()
	readers.Wait()
	close(readErrs)
	return <-readErrs
}

// updateStep publishes at rate for cfg.Step to random keys of the map
// and awaits the first copy of each update, at most cfg.Grace after the
// last; an update is numbered first.base plus its index.
func updateStep(ctx context.Context, cfg MapsConfig, api *APIPublisher, channel string, n int, rate float64, first *firstCopies, readErrs <-chan error) (UpdateStep, error) {
	st := UpdateStep{Rate: rate}
	total := int64(len(first.lat))
	interval := time.Duration(float64(time.Second) / rate)
	sem := make(chan struct{}, cfg.APIConns)
	var pubs sync.WaitGroup
	var sent, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if lag := time.Since(due); lag > cfg.MaxLag {
			st.Stopped = fmt.Sprintf("the publisher fell %v behind", lag.Round(time.Millisecond))
			break
		}
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				pubs.Wait()
				return st, ctx.Err()
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			pubs.Wait()
			return st, ctx.Err()
		}
		sent.Add(1)
		key := mapKey(rand.IntN(n))
		data := mapValue(first.base+i, due, cfg.Payload)
		pubs.Go(func() {
			defer func() { <-sem }()
			if _, err := api.MapPublish(ctx, channel, []MapEntry{{Key: key, Data: data}}, false); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, &err)
			}
		})
	}
	pubs.Wait()
	// The last update is due an interval before the step ends.
	elapsed := max(time.Since(start), cfg.Step)
	st.Sent, st.PublishErrs = sent.Load(), failed.Load()
	st.Achieved = float64(st.Sent-st.PublishErrs) / elapsed.Seconds()
	// Await the copies, at most Grace.
	deadline := time.Now().Add(cfg.Grace)
	for cfg.Subscribers > 0 && first.count() < st.Sent-st.PublishErrs && time.Now().Before(deadline) {
		select {
		case <-time.After(10 * time.Millisecond):
		case err := <-readErrs:
			return st, err
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
	if err := first.err(); err != nil {
		return st, err
	}
	if cfg.Subscribers > 0 {
		st.Missing = st.Sent - st.PublishErrs - first.count()
	}
	st.First = first.percentiles()
	limit := cfg.P99Limit
	if limit <= 0 {
		limit = math.MaxInt64 // no limit
	}
	st.Served = st.Stopped == "" && Served(st.First.P99, limit, st.Missing, st.PublishErrs, st.Achieved, rate)
	if p := firstErr.Load(); p != nil {
		return st, fmt.Errorf("%d of %d updates failed, the first: %w", st.PublishErrs, st.Sent, *p)
	}
	return st, nil
}

// firstCopies records, per update of one step, the first copy any
// subscriber got. Every live subscriber notes every copy it reads, a
// thousand readers at once, so it takes no lock: a slot per update keeps
// the least latency seen (a compare-and-swap), and a late copy costs one
// load.
type firstCopies struct {
	base int64          // the step's first update number
	lat  []atomic.Int64 // per update: publish-to-first-copy in ns, plus one (0: none yet)
	got  atomic.Int64   // slots set
	bad  atomic.Pointer[error]
}

func newFirstCopies(base, total int64) *firstCopies {
	return &firstCopies{base: base, lat: make([]atomic.Int64, max(total, 0))}
}

// note records one received copy of key's value data.
func (f *firstCopies) note(key string, data []byte, at time.Time) {
	n, sent, err := parseMapValue(data)
	if err != nil {
		err = fmt.Errorf("key %q: %w", key, err)
		f.bad.CompareAndSwap(nil, &err)
		return
	}
	i := n - f.base
	if n < 0 || i < 0 || i >= int64(len(f.lat)) {
		return // a fill value, or another step's update
	}
	d := int64(max(at.Sub(sent), 0)) + 1
	slot := &f.lat[i]
	for {
		v := slot.Load()
		if v != 0 && v <= d {
			return
		}
		if slot.CompareAndSwap(v, d) {
			if v == 0 {
				f.got.Add(1)
			}
			return
		}
	}
}

func (f *firstCopies) count() int64 { return f.got.Load() }

func (f *firstCopies) err() error {
	if p := f.bad.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *firstCopies) percentiles() Percentiles {
	h := NewHistogram()
	for i := range f.lat {
		if v := f.lat[i].Load(); v != 0 {
			h.Record(time.Duration(v - 1))
		}
	}
	return h.Percentiles()
}

// scanMapValue reads n and t from mapValue's own layout without a JSON
// decoder (a thousand subscribers parse every update: the load tool must
// not be what limits the rate); ok is false for any other layout, which
// parseMapValue then decodes as JSON.
func scanMapValue(b []byte) (n, t int64, ok bool) {
	const pn, pt = `{"n":`, `,"t":`
	if !bytes.HasPrefix(b, []byte(pn)) {
		return 0, 0, false
	}
	if n, b, ok = scanInt(b[len(pn):]); !ok || !bytes.HasPrefix(b, []byte(pt)) {
		return 0, 0, false
	}
	if t, b, ok = scanInt(b[len(pt):]); !ok || len(b) == 0 || (b[0] != ',' && b[0] != '}') {
		return 0, 0, false
	}
	return n, t, true
}

// scanInt reads a decimal int64 at the start of b (ok false on overflow).
func scanInt(b []byte) (v int64, rest []byte, ok bool) {
	i, neg := 0, false
	if len(b) > 0 && b[i] == '-' {
		i, neg = 1, true
	}
	j := i
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		d := int64(b[j] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, b, false
		}
		v = v*10 + d
	}
	if j == i {
		return 0, b, false
	}
	if neg {
		v = -v
	}
	return v, b[j:], true
}
