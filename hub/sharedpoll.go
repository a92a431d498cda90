package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// Shared poll channels (SubscriptionSharedPoll): each subscriber tracks
// keys, and each node keeps, per channel with subscribers on it, one
// poller that asks the application's refresh handler for every key
// tracked on the node, once per key per refresh interval however many
// connections track it, and pushes what changed to those connections. The
// data of each key is kept, so that a connection that starts tracking a
// key already polled gets it at once in its track reply.
//
// Locks: Client.mu, then sharedPolls.mu, then pollChannel.mu. A poller
// takes the connections to push to under pollChannel.mu and pushes after
// releasing it.

// SharedPollRefreshEvent asks the application for the current data of
// keys of a shared poll channel.
type SharedPollRefreshEvent struct {
	Channel string
	// Items are the keys with, in the versioned mode, the version the node
	// holds (0: none), so that the backend may leave out keys it has no
	// newer version of. In the versionless mode versions are 0.
	Items []SharedPollItem
}

// SharedPollItem is a key and a version.
type SharedPollItem struct {
	Key     string
	Version uint64
}

// SharedPollRefreshReply is the application's answer: the keys it has
// data for (others are left as they are) and, in the versioned mode, the
// epoch of its versions.
type SharedPollRefreshReply struct {
	Items []SharedPollRefreshItem
	// Epoch names the versions' series: when it changes, the versions
	// the node and its clients hold mean nothing any more, and the
	// channel's subscribers are unsubscribed with 2500 so that they
	// subscribe again and track from scratch (versioned mode).
	Epoch string
}

// SharedPollRefreshItem is the data of one key, or its removal.
type SharedPollRefreshItem struct {
	Key     string
	Data    []byte
	Version uint64
	// Removed ends the key: its trackers get a publication with removed
	// set and stop tracking it.
	Removed bool
	// PrevData is Centrifugo's base for delta compression; the node
	// diffs against the data it holds instead (sharedpoll_delta.go).
	PrevData []byte
}

// sharedPolls holds a node's shared poll channels.
type sharedPolls struct {
	h        *Hub
	mu       sync.Mutex
	channels map[string]*pollChannel
	metrics  pollMetrics
}

// pollChannel is a shared poll channel with subscribers on this node.
type pollChannel struct {
	name string
	opts SharedPollOptions // with defaults
	h    *Hub

	mu   sync.Mutex
	subs int // subscriptions on this node; the channel goes at 0
	// epoch: in the versioned mode the backend's (empty until it names
	// one); in the versionless mode one made for this channel state,
	// since the versions are its own counter's.
	epoch   string
	counter uint64 // versionless: the last version given
	keys    map[string]*pollKey
	pending map[string]struct{} // keys to poll at once (tracked with no data yet)
	wake    chan struct{}       // capacity 1: pending has keys
	cancel  context.CancelFunc
}

// pollKey is a key tracked on this node.
type pollKey struct {
	version uint64
	data    []byte
	// fresh: set by a publish, so that the next timed poll skips the key.
	fresh    bool
	trackers map[*pollSub]struct{}
}

func (m *sharedPolls) init(h *Hub) {
	m.h = h
	m.channels = make(map[string]*pollChannel)
	m.metrics = newPollMetrics()
}

// acquire counts a new subscription to ch, making the channel's state and
// starting its poller if it is the first on this node.
func (m *sharedPolls) acquire(ch string, opts SharedPollOptions) *pollChannel {
	m.mu.Lock()
	defer m.mu.Unlock()
	pc := m.channels[ch]
	if pc == nil {
		pc = &pollChannel{
			name:    ch,
			opts:    opts.WithDefaults(),
			h:       m.h,
			keys:    make(map[string]*pollKey),
			pending: make(map[string]struct{}),
			wake:    make(chan struct{}, 1),
		}
		if pc.opts.versionless() {
			pc.epoch = newPollEpoch()
		}
		ctx, cancel := context.WithCancel(m.h.ctx)
		pc.cancel = cancel
		m.channels[ch] = pc
		m.h.goBackground(func() { pc.run(ctx) })
	}
	pc.mu.Lock()
	pc.subs++
	pc.mu.Unlock()
	return pc
}

// release takes back a subscription of acquire, stopping the poller with
// the last one.
func (m *sharedPolls) release(pc *pollChannel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pc.mu.Lock()
	pc.subs--
	last := pc.subs == 0
	pc.mu.Unlock()
	if last && m.channels[pc.name] == pc {
		delete(m.channels, pc.name)
		pc.cancel()
	}
}

func (m *sharedPolls) get(ch string) *pollChannel {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.channels[ch]
}

func newPollEpoch() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// currentEpoch is the epoch of the subscribe result.
func (pc *pollChannel) currentEpoch() string {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.epoch
}

// run polls every key at each refresh interval, and the keys tracked
// without data as soon as they are.
func (pc *pollChannel) run(ctx context.Context) {
	t := time.NewTicker(pc.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pc.poll(ctx, pc.dueKeys())
		case <-pc.wake:
			pc.poll(ctx, pc.pendingKeys())
		}
	}
}

// dueKeys are the keys of a timed poll: all but those a publish has just
// set.
func (pc *pollChannel) dueKeys() []SharedPollItem {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	items := make([]SharedPollItem, 0, len(pc.keys))
	for k, pk := range pc.keys {
		if pk.fresh {
			pk.fresh = false
			continue
		}
		items = append(items, pc.itemLocked(k, pk))
	}
	clear(pc.pending) // polled now
	return items
}

func (pc *pollChannel) pendingKeys() []SharedPollItem {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	items := make([]SharedPollItem, 0, len(pc.pending))
	for k := range pc.pending {
		if pk := pc.keys[k]; pk != nil {
			items = append(items, pc.itemLocked(k, pk))
		}
	}
	clear(pc.pending)
	return items
}

func (pc *pollChannel) itemLocked(k string, pk *pollKey) SharedPollItem {
	it := SharedPollItem{Key: k}
	if !pc.opts.versionless() {
		it.Version = pk.version
	}
	return it
}

// poll asks the handler for items, refresh_batch_size keys per call, in
// key order, and applies the answers.
func (pc *pollChannel) poll(ctx context.Context, items []SharedPollItem) {
	fn := pc.h.cfg.Handlers.OnSharedPollRefresh
	if len(items) == 0 || fn == nil {
		return
	}
	slices.SortFunc(items, func(a, b SharedPollItem) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	for batch := range slices.Chunk(items, pc.opts.RefreshBatchSize) {
		if ctx.Err() != nil {
			return
		}
		reply, err := fn(ctx, SharedPollRefreshEvent{Channel: pc.name, Items: batch})
		pc.h.polls.metrics.keys.Add(float64(len(batch)))
		if err != nil {
			pc.h.polls.metrics.requests.WithLabelValues("error").Inc()
			if !errors.Is(err, context.Canceled) {
				pc.h.log.Warn("shared poll refresh", "channel", pc.name, "keys", len(batch), "error", err)
			}
			continue
		}
		pc.h.polls.metrics.requests.WithLabelValues("ok").Inc()
		pc.apply(reply.Epoch, reply.Items)
	}
}

// pollPush is one change to push to the trackers of a key.
type pollPush struct {
	key      string
	version  uint64
	data     []byte
	removed  bool
	trackers []*pollSub
	// base is the key's data at baseVersion, before this change: what a
	// delta is made against (sharedpoll_delta.go); baseVersion 0: none.
	base        []byte
	baseVersion uint64
	diff        []byte
	patchDone   bool
}

// apply takes the items of a refresh answer or a publish.
func (pc *pollChannel) apply(epoch string, items []SharedPollRefreshItem) {
	pc.mu.Lock()
	var reset []*pollSub
	if !pc.opts.versionless() && epoch != pc.epoch {
		reset = pc.flipEpochLocked(epoch)
	}
	var pushes []*pollPush
	for _, it := range items {
		pk := pc.keys[it.Key]
		if pk == nil {
			continue // no longer tracked on this node
		}
		if it.Removed {
			pushes = append(pushes, &pollPush{key: it.Key, removed: true, trackers: trackerList(pk)})
			delete(pc.keys, it.Key)
			continue
		}
		base, baseVersion := pk.data, pk.version
		if pc.opts.versionless() {
			if pk.version > 0 && bytes.Equal(pk.data, it.Data) {
				continue
			}
			pc.counter++
			pk.version = pc.counter
		} else {
			if it.Version <= pk.version {
				continue
			}
			pk.version = it.Version
		}
		pk.data = it.Data
		pushes = append(pushes, &pollPush{key: it.Key, version: pk.version, data: pk.data, trackers: trackerList(pk), base: base, baseVersion: baseVersion})
	}
	pc.mu.Unlock()
	for _, ps := range reset {
		ps.c.unsubscribeIf(pc.name, ps.s, protocol.UnsubscribeInsufficientState)
	}
	for _, p := range pushes {
		for _, ps := range p.trackers {
			ps.push(p)
		}
	}
}

// flipEpochLocked starts a new epoch: the versions held mean nothing
// now, so every key is reset and the trackers are returned, to be
// unsubscribed with 2500 and subscribe again (Centrifugo's
// flipEpochAndCollectClients does the same).
func (pc *pollChannel) flipEpochLocked(epoch string) []*pollSub {
	pc.epoch = epoch
	seen := make(map[*pollSub]struct{})
	for _, pk := range pc.keys {
		pk.version, pk.data, pk.fresh = 0, nil, false
		for ps := range pk.trackers {
			seen[ps] = struct{}{}
		}
	}
	out := make([]*pollSub, 0, len(seen))
	for ps := range seen {
		out = append(out, ps)
	}
	return out
}

func trackerList(pk *pollKey) []*pollSub {
	out := make([]*pollSub, 0, len(pk.trackers))
	for ps := range pk.trackers {
		out = append(out, ps)
	}
	return out
}

// publish applies a shared_poll_publish on this node: a new version of
// key, pushed at once to its trackers here.
func (m *sharedPolls) publish(ch, key string, version uint64, epoch string, data []byte) {
	pc := m.get(ch)
	if pc == nil || pc.opts.versionless() {
		return // a publish needs the versioned mode (checked by the API)
	}
	pc.mu.Lock()
	if pk := pc.keys[key]; pk != nil && version > pk.version {
		pk.fresh = true
	}
	pc.mu.Unlock()
	pc.apply(epoch, []SharedPollRefreshItem{{Key: key, Data: data, Version: version}})
}

// chainSharedPollRefresh asks fns in order; the first answer other than
// ErrUseDefault decides.
func chainSharedPollRefresh(fns []func(context.Context, SharedPollRefreshEvent) (SharedPollRefreshReply, error)) func(context.Context, SharedPollRefreshEvent) (SharedPollRefreshReply, error) {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(ctx context.Context, ev SharedPollRefreshEvent) (SharedPollRefreshReply, error) {
		for _, fn := range fns {
			if r, err := fn(ctx, ev); !errors.Is(err, ErrUseDefault) {
				return r, err
			}
		}
		return SharedPollRefreshReply{}, ErrUseDefault
	}
}
