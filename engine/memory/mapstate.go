package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldhq/herald/engine"
)

var _ engine.MapBroker = (*Engine)(nil)

// mapShard holds the state of the map channels that hash to its shard. It
// is guarded by the shard's pubMu, the lock that also orders the channel's
// stream, so that a state read and the stream position it returns agree.
type mapShard struct {
	channels map[string]*mapChannel
	expiry   expiryQueue[*mapKey]
}

// mapChannel is one map channel's keys and the stream options of its last
// change, which its keys' expiry removals use. sorted lists the keys in
// order for paging; it is rebuilt on the first read after a key was added
// or removed (dirty), not on every page, so paging through n keys costs
// O(n log n) once rather than per page.
type mapChannel struct {
	keys   map[string]*mapKey
	opts   engine.MapPublishOptions
	sorted []string
	dirty  bool
}

// ordered returns the channel's keys in order.
func (mc *mapChannel) ordered() []string {
	if mc.dirty || len(mc.sorted) != len(mc.keys) {
		mc.sorted = mc.sorted[:0]
		for key := range mc.keys {
			mc.sorted = append(mc.sorted, key)
		}
		slices.SortFunc(mc.sorted, strings.Compare)
		mc.dirty = false
	}
	return mc.sorted
}

// mapKey is one key's latest publication and, with a key TTL, when it
// expires.
type mapKey struct {
	timer
	ch       string
	pub      *engine.Publication
	expireAt int64 // Unix nanoseconds; 0 for never
	// version and versionEpoch are those of the key's last change with
	// a version (MapPublishOptions.Version; 0: none).
	version      uint64
	versionEpoch string
}

func (k *mapKey) expired(now int64) bool { return k.expireAt > 0 && k.expireAt <= now }

// MapPublish sets or removes a key of a map channel, appends the change to
// the channel's stream and delivers it, all under the channel's stripe
// lock.
func (e *Engine) MapPublish(ctx context.Context, ch string, pub *engine.Publication, opts engine.MapPublishOptions) (engine.StreamPosition, error) {
	switch {
	case pub == nil:
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: nil publication", ch)
	case pub.Key == "":
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: empty key", ch)
	case !opts.Valid():
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: StreamSize and StreamTTL must both be positive, and IdempotentResultTTL with an IdempotencyKey", ch)
	}
	sh := e.shard(ch)
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	h, err := e.deliverer(ctx)
	if err != nil {
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, err)
	}
	now := e.opts.Now().UnixNano()
	mc := sh.maps.channels[ch]
	top := func() engine.StreamPosition {
		_, sp := sh.history.read(ch, engine.HistoryRequest{}, now, after(now, metaTTL(opts.MetaTTL, e.opts.HistoryMetaTTL)))
		return sp
	}
	if opts.IdempotencyKey != "" {
		if sp, ok := sh.idem.lookup(ch, opts.IdempotencyKey, now); ok {
			return sp, fmt.Errorf("map publish %q: %w", ch, engine.ErrMapDuplicate)
		}
	}
	if !pub.Removed && opts.TouchIfExists {
		if k := mc.key(pub.Key); k != nil && !k.expired(now) {
			if opts.KeyTTL > 0 {
				k.expireAt = after(now, opts.KeyTTL)
				sh.maps.expiry.schedule(&k.timer, k.expireAt, k)
			}
			return top(), nil
		}
	}
	if !pub.Removed && opts.KeyMode != engine.MapKeyReplace {
		k := mc.key(pub.Key)
		switch alive := k != nil && !k.expired(now); {
		case alive && opts.KeyMode == engine.MapKeyIfNew:
			return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, engine.ErrMapKeyExists)
		case !alive && opts.KeyMode == engine.MapKeyIfExists:
			return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, engine.ErrMapKeyNotFound)
		}
	}
	if want := opts.ExpectedPosition; want != nil {
		sp := top()
		if k := mc.key(pub.Key); k == nil || k.expired(now) || k.pub.Offset != want.Offset || sp.Epoch != want.Epoch {
			return sp, fmt.Errorf("map publish %q: %w", ch, engine.ErrMapPositionMismatch)
		}
	}
	// After the expected position, as Centrifugo's brokers check it first:
	// a compare-and-swap removal of a missing key is a position mismatch.
	if pub.Removed && opts.SkipMissingRemove {
		if k := mc.key(pub.Key); k == nil || k.expired(now) {
			// With the stream's position, as Centrifugo's brokers answer
			// it (centrifuge v0.40.1 map_broker_memory.go remove).
			return top(), fmt.Errorf("map publish %q: %w", ch, engine.ErrMapKeyNotFound)
		}
	}
	if !pub.Removed && opts.Version > 0 {
		if k := mc.key(pub.Key); k != nil && !k.expired(now) && k.version >= opts.Version && k.versionEpoch == opts.VersionEpoch {
			return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, engine.ErrMapVersion)
		}
	}
	if !pub.Removed && opts.MaxKeys > 0 && mc.key(pub.Key) == nil && mc != nil && len(mc.keys) >= opts.MaxKeys {
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, engine.ErrMapKeyLimit)
	}
	if opts.IdempotencyKey != "" {
		if err := sh.idem.reserve(now, e.opts.JanitorBatch, &e.idemHeld, e.opts.IdempotencyKeys); err != nil {
			return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, err)
		}
	}
	sp := e.applyMapChange(h, sh, ch, pub, opts, now)
	if opts.IdempotencyKey != "" {
		sh.idem.remember(ch, opts.IdempotencyKey, sp, now, opts.IdempotentResultTTL)
	}
	return sp, nil
}

// applyMapChange records and delivers one change; the caller holds pubMu.
func (e *Engine) applyMapChange(h engine.Handler, sh *shard, ch string, pub *engine.Publication, opts engine.MapPublishOptions, now int64) engine.StreamPosition {
	p := *pub // the caller may reuse pub; the state and the stream keep p
	p.Offset = 0
	p.Time = now / 1e6
	if p.Removed {
		p.Data = nil
	}
	hopts := engine.PublishOptions{HistorySize: opts.StreamSize, HistoryTTL: opts.StreamTTL}
	sp := sh.history.append(ch, &p, hopts, now, after(now, metaTTL(opts.MetaTTL, e.opts.HistoryMetaTTL)))
	m := &sh.maps
	mc := m.channels[ch]
	if p.Removed {
		if k := mc.key(p.Key); k != nil {
			k.cancel()
			delete(mc.keys, p.Key)
			mc.dirty = true
			if len(mc.keys) == 0 {
				delete(m.channels, ch)
			}
		}
	} else {
		if mc == nil {
			if m.channels == nil {
				m.channels = make(map[string]*mapChannel)
			}
			mc = &mapChannel{keys: make(map[string]*mapKey)}
			m.channels[ch] = mc
		}
		k := mc.keys[p.Key]
		if k == nil {
			k = &mapKey{ch: ch}
			mc.keys[p.Key] = k
			mc.dirty = true
		}
		k.pub = &p
		// A change without a version keeps the key's (as Centrifugo's
		// brokers do), unless the key had expired.
		if opts.Version > 0 || k.expired(now) {
			k.version, k.versionEpoch = opts.Version, opts.VersionEpoch
		}
		k.expireAt = 0
		k.cancel()
		if opts.KeyTTL > 0 {
			k.expireAt = after(now, opts.KeyTTL)
			m.expiry.schedule(&k.timer, k.expireAt, k)
		}
		mc.opts = opts
	}
	h.HandlePublication(ch, &p, sp)
	return sp
}

func (mc *mapChannel) key(key string) *mapKey {
	if mc == nil {
		return nil
	}
	return mc.keys[key]
}

// MapState reads a page of ch's keys in key order; the cursor is the last
// key of the previous page. Keys past their TTL that the janitor has not
// removed yet are left out: their removal follows in the stream.
func (e *Engine) MapState(ctx context.Context, ch string, req engine.MapStateRequest) (engine.MapStatePage, error) {
	if err := e.life.Usable(ctx); err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: %w", ch, err)
	}
	if req.Limit <= 0 {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: limit %d, want a positive one", ch, req.Limit)
	}
	sh := e.shard(ch)
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	now := e.now()
	_, sp := sh.history.read(ch, engine.HistoryRequest{MetaTTL: req.MetaTTL}, now, after(now, metaTTL(req.MetaTTL, e.opts.HistoryMetaTTL)))
	page := engine.MapStatePage{Position: sp}
	mc := sh.maps.channels[ch]
	if mc == nil {
		return page, nil
	}
	if req.Key != "" {
		if k := mc.key(req.Key); k != nil && !k.expired(now) {
			page.Entries = []*engine.Publication{k.pub}
		}
		return page, nil
	}
	sorted := mc.ordered()
	i, _ := slices.BinarySearch(sorted, req.Cursor)
	if i < len(sorted) && sorted[i] == req.Cursor {
		i++
	}
	page.Entries = make([]*engine.Publication, 0, min(req.Limit, len(sorted)-i))
	for ; i < len(sorted) && len(page.Entries) < req.Limit; i++ {
		if k := mc.keys[sorted[i]]; !k.expired(now) {
			page.Entries = append(page.Entries, k.pub)
		}
	}
	if i < len(sorted) {
		page.Cursor = sorted[i-1] // the last key looked at: the next page starts after it
	}
	return page, nil
}

// MapStats counts ch's keys that have not expired.
func (e *Engine) MapStats(ctx context.Context, ch string) (engine.MapStats, error) {
	if err := e.life.Usable(ctx); err != nil {
		return engine.MapStats{}, fmt.Errorf("map stats %q: %w", ch, err)
	}
	sh := e.shard(ch)
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	now := e.now()
	n := 0
	if mc := sh.maps.channels[ch]; mc != nil {
		for _, k := range mc.keys {
			if !k.expired(now) {
				n++
			}
		}
	}
	return engine.MapStats{NumKeys: n}, nil
}

// MapClear drops ch's keys and its stream, whose epoch changes.
func (e *Engine) MapClear(ctx context.Context, ch string) error {
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("map clear %q: %w", ch, err)
	}
	sh := e.shard(ch)
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	if mc := sh.maps.channels[ch]; mc != nil {
		for _, k := range mc.keys {
			k.cancel()
		}
		delete(sh.maps.channels, ch)
	}
	sh.history.drop(ch)
	return nil
}

// expireMapKeys removes at most budget keys whose TTL passed, each as a
// change in its channel's stream, and returns how many deadlines it
// handled.
func (e *Engine) expireMapKeys(sh *shard, now int64, budget int) int {
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	h, err := e.deliverer(context.Background())
	if err != nil {
		return 0 // closed: nothing is delivered any more
	}
	n := 0
	for n < budget {
		d, ok := sh.maps.expiry.popDue(now)
		if !ok {
			break
		}
		n++
		k := d.item
		if !k.fire(d.gen) {
			continue
		}
		mc := sh.maps.channels[k.ch]
		if mc == nil || mc.keys[k.pub.Key] != k {
			continue
		}
		if !k.expired(now) {
			// Touched since this deadline was set: wait for the new one.
			sh.maps.expiry.schedule(&k.timer, k.expireAt, k)
			continue
		}
		e.applyMapChange(h, sh, k.ch, &engine.Publication{Key: k.pub.Key, Removed: true}, mc.opts, now)
	}
	return n
}
