package hub

import (
	"context"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// A client's side of shared poll channels: the subscribe (type 4), track
// and untrack (sub_refresh types 1 and 2), and the pushes of tracked keys.

// Sub-refresh request types (SubRefreshRequest.type).
const (
	subRefreshTrack   = 1
	subRefreshUntrack = 2
)

// pollSub is a shared poll subscription's part: the keys it tracks, with
// the version the client holds of each. keys is guarded by the client's
// mutex.
type pollSub struct {
	c    *Client
	s    *subscription
	ch   *pollChannel
	keys map[string]*trackedKey
	done bool // released: the subscription ended
	// delta: the subscription negotiated Fossil deltas (sharedpoll_delta.go).
	delta bool
}

type trackedKey struct {
	version  uint64
	expireAt int64 // the signature's expiry, Unix seconds; 0: none
	// ready: the client got this key's data from the node (in a track
	// reply or a push), so it holds the data of version: the base of a
	// delta.
	ready bool
}

// handleSharedPollSubscribe subscribes to a shared poll channel: no
// engine subscription, history or recovery; the keys are tracked after.
func (c *Client) handleSharedPollSubscribe(ctx context.Context, id uint32, req *protocol.SubscribeRequest) error {
	h := c.hub
	ch := req.Channel
	if ch == "" {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	if e := h.channels.checkLength(ch); e != nil {
		return e
	}
	r, e := h.channels.resolve(ch)
	if e != nil {
		return e
	}
	if r.SubscriptionType != SubscriptionSharedPoll {
		return newError(protocol.ErrorBadRequest) // every subscriber uses the namespace's type
	}
	if e := r.checkSubscriber(c.proto); e != nil {
		return e
	}
	if err := c.checkSubscriptionSlot(ch); err != nil {
		return err
	}
	g, err := c.authorizeSubscribe(ctx, ch, r, req)
	if err != nil {
		return err
	}
	if g.stream != nil {
		h.releaseStream(g.stream)
		return newError(protocol.ErrorNotAvailable) // a shared poll channel is fed by polling
	}
	s := &subscription{channel: ch, rule: r, chanInfo: g.chanInfo, data: g.data, expiry: newExpiry(g.expireAt, g.hubRefresh)}
	pc := h.polls.acquire(ch, r.SharedPoll)
	s.poll = &pollSub{c: c, s: s, ch: pc, keys: make(map[string]*trackedKey), delta: r.negotiateDelta(req.Delta)}
	res := &protocol.SubscribeResult{Type: requestTypeSharedPoll, Data: s.data, Epoch: pc.currentEpoch(), Delta: s.poll.delta}
	c.mu.Lock()
	switch {
	case c.state != stateConnected:
		err = newDisconnect(protocol.DisconnectBadRequest)
	case c.subs[ch] != nil:
		err = newError(protocol.ErrorAlreadySubscribed)
	case len(c.subs) >= h.client.ChannelLimit:
		err = newError(protocol.ErrorLimitExceeded)
	}
	if err != nil {
		c.mu.Unlock()
		h.polls.release(pc)
		return err
	}
	if c.subs == nil {
		c.subs = make(map[string]*subscription, 1)
	}
	c.subs[ch] = s
	s.active = true
	res.Expires, res.Ttl = s.ttl(time.Now())
	if s.expireAt > 0 {
		c.resetTimerLocked(time.Now())
	}
	c.mu.Unlock()
	c.queueReply(&protocol.Reply{Id: id, Subscribe: res})
	return nil
}

// endLocked releases what a shared poll subscription holds: its keys and
// its count on the channel. Called with the client's mutex held when the
// subscription ends, however it ends.
func (ps *pollSub) endLocked() {
	if ps.done {
		return
	}
	ps.done = true
	untrackKeys(ps, ps.keys)
	ps.c.hub.polls.release(ps.ch)
}

// untrackKeys stops tracking keys for ps; a key no connection of the node
// tracks any more is no longer polled. The client's mutex is held.
func untrackKeys[V any](ps *pollSub, keys map[string]V) {
	pc := ps.ch
	pc.mu.Lock()
	for k := range keys {
		if _, ok := ps.keys[k]; !ok {
			continue
		}
		delete(ps.keys, k)
		if pk := pc.keys[k]; pk != nil {
			delete(pk.trackers, ps)
			if len(pk.trackers) == 0 {
				delete(pc.keys, k)
				delete(pc.pending, k)
			}
		}
	}
	pc.mu.Unlock()
}

// handlePollRefresh answers a track (type 1) or untrack (type 2)
// sub_refresh on a shared poll subscription.
func (c *Client) handlePollRefresh(id uint32, req *protocol.SubRefreshRequest) error {
	c.mu.Lock()
	s := c.subs[req.Channel]
	c.mu.Unlock()
	if s == nil || s.poll == nil {
		return newError(protocol.ErrorPermissionDenied)
	}
	switch req.Type {
	case subRefreshTrack:
		return c.track(id, s, req)
	case subRefreshUntrack:
		c.mu.Lock()
		if !s.poll.done {
			untrackKeys(s.poll, setOf(req.Untrack))
		}
		c.mu.Unlock()
		c.queueReply(&protocol.Reply{Id: id, SubRefresh: &protocol.SubRefreshResult{}})
		return nil
	}
	return newError(protocol.ErrorBadRequest)
}

func setOf(keys []string) map[string]struct{} {
	m := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}

// track checks each batch's signature and starts tracking its keys. The
// reply carries the data the node already holds of keys the client has
// an older version of; keys the node holds no data of yet are polled at
// once and pushed when the answer comes.
func (c *Client) track(id uint32, s *subscription, req *protocol.SubRefreshRequest) error {
	if len(req.Track) == 0 {
		return newError(protocol.ErrorBadRequest)
	}
	now := time.Now()
	want := make(map[string]trackedKey)
	var order []string
	var minExpire int64
	for _, b := range req.Track {
		if b == nil {
			return newError(protocol.ErrorBadRequest)
		}
		keys := make([]string, len(b.Items))
		for i, it := range b.Items {
			if it == nil || it.Key == "" || len(it.Key) > MaxMapKeyLength {
				return newError(protocol.ErrorBadRequest)
			}
			keys[i] = it.Key
		}
		exp, e := c.hub.cfg.SharedPoll.verifyTrack(req.Channel, c.User(), b.Signature, keys, now)
		if e != nil {
			c.logger().Info("shared poll track refused", "channel", req.Channel, "code", e.Code)
			return e
		}
		if exp > 0 && (minExpire == 0 || exp < minExpire) {
			minExpire = exp
		}
		for _, it := range b.Items {
			if _, seen := want[it.Key]; !seen {
				order = append(order, it.Key)
			}
			want[it.Key] = trackedKey{version: it.Version, expireAt: exp} // the last batch wins
		}
	}
	if len(want) == 0 {
		return newError(protocol.ErrorBadRequest) // as Centrifugo: a track needs a key
	}
	untrack := setOf(req.Untrack)
	for k := range want {
		delete(untrack, k)
	}

	ps := s.poll
	pc := ps.ch
	res := &protocol.SubRefreshResult{}
	if minExpire > 0 {
		res.Expires = true
		if d := minExpire - now.Unix(); d > 0 {
			res.Ttl = uint32(d)
		}
	}
	c.mu.Lock()
	if !s.active || ps.done {
		c.mu.Unlock()
		return newError(protocol.ErrorPermissionDenied)
	}
	n := len(ps.keys)
	for k := range want {
		if _, ok := ps.keys[k]; !ok {
			n++
		}
	}
	for k := range untrack {
		if _, ok := ps.keys[k]; ok {
			n--
		}
	}
	if n > pc.opts.MaxKeysPerConnection {
		c.mu.Unlock()
		return newError(protocol.ErrorLimitExceeded)
	}
	untrackKeys(ps, untrack)
	poll := false
	pc.mu.Lock()
	for _, k := range order {
		tk := want[k]
		pk := pc.keys[k]
		if pk == nil {
			pk = &pollKey{trackers: make(map[*pollSub]struct{})}
			pc.keys[k] = pk
		}
		pk.trackers[ps] = struct{}{}
		switch {
		case pk.version == 0:
			pc.pending[k] = struct{}{}
			poll = true
		case pk.version > tk.version && c.canTake(pk.data):
			res.Items = append(res.Items, &protocol.Publication{Key: k, Data: ps.fullData(pk.data), Version: pk.version})
			tk.version, tk.ready = pk.version, true
		}
		ps.keys[k] = &tk
	}
	pc.mu.Unlock()
	if msg, err := c.encodeReply(&protocol.Reply{Id: id, SubRefresh: res}); err == nil {
		// Queued under the mutex that orders the key's pushes, so that no
		// push of a newer version goes out before this reply.
		c.replyQueued = true
		c.enqueueLocked(msg)
		c.hub.metrics.sent["reply"].Inc()
	} else {
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()
	if poll {
		select {
		case pc.wake <- struct{}{}:
		default: // a poll is already due
		}
	}
	return nil
}

// canTake reports whether the client can decode data: a JSON client takes
// JSON only.
func (c *Client) canTake(data []byte) bool {
	return c.proto != protocol.TypeJSON || protocol.ValidJSONPayload(data)
}

// push sends one change of a key to the subscription, if it still tracks
// the key and holds an older version. It encodes under the client's
// mutex, since whether a delta subscriber gets a delta depends on the
// version it holds.
func (ps *pollSub) push(p *pollPush) {
	c := ps.c
	if !p.removed && !c.canTake(p.data) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tk := ps.keys[p.key]
	if ps.done || !ps.s.active || c.state != stateConnected || tk == nil {
		return
	}
	if p.removed {
		untrackKeys(ps, map[string]struct{}{p.key: {}})
	} else {
		if p.version <= tk.version {
			return
		}
		if tk.expireAt > 0 && time.Now().After(time.Unix(tk.expireAt, 0).Add(ps.ch.opts.TrackExpiredExtraDelay)) {
			// The client did not track the key again with a new
			// signature: it no longer may see it.
			untrackKeys(ps, map[string]struct{}{p.key: {}})
			return
		}
	}
	msg, err := c.encodePush(&protocol.Push{Channel: ps.ch.name, Pub: ps.publication(p, tk)})
	if err != nil {
		c.logger().Error("encode shared poll push", "channel", ps.ch.name, "error", err)
		return
	}
	if !p.removed {
		tk.version, tk.ready = p.version, true
	}
	c.enqueueMsgLocked(msg, ps.s.rule.QueuePolicy == QueueDropOldest)
	c.hub.metrics.sent["pub"].Inc()
}
