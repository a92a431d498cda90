package hub

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/hub/internal/tagsfilter"
	"github.com/heraldhq/herald/protocol"
)

// Subscribe request flag bit 2: answer a failed recovery with error 112
// instead of recovered=false.
const flagRejectUnrecovered = 2

// subscriptions are the client's channels. A subscription's own mutable
// fields are guarded by the client's mutex too.
type subscriptions struct {
	subs map[string]*subscription
}

// subscription is a client's membership of a channel. Its mutable fields are
// guarded by the client's mutex.
type subscription struct {
	channel  string
	rule     *rule
	chanInfo []byte
	data     []byte // from the token, for the subscribe result
	expiry

	presence      bool
	joinLeave     bool
	pushJoinLeave bool
	positioned    bool
	recoverable   bool
	// compact: the client asked for channel compaction where the
	// namespace allows it (compaction.go).
	compact bool
	// allow is the subscription's capabilities, from its token or the
	// subscribe handler (capabilities.go); guarded by the client's mutex.
	allow auth.Ops
	// viaCaps: only a connection capability allowed the subscription, so
	// new caps without it end it (capabilities.go).
	viaCaps bool
	// stream, for a stream subscription, is its feed (subscription_stream.go); nil
	// for the others.
	stream *subStream
	// serverSide subscriptions were made by the server at connect; they
	// cannot be resubscribed by the client, so losing one closes the
	// connection instead of sending an unsubscribe push.
	serverSide bool

	active bool // false once the client left the channel
	// syncing holds publications back until the subscribe reply is queued:
	// the client must see the reply (and any recovered publications)
	// before live ones, and none of them twice.
	syncing  bool
	buffered []bufferedPub
	// offset and epoch are the stream position the client has reached, for
	// positioned subscriptions.
	offset uint64
	epoch  string
	// delta is set when the subscription negotiated delta compression
	// (fixed before it is registered); deltaHave names the publication
	// data the client holds, the base a delta must have (delivery_delta.go).
	delta     bool
	deltaHave deltaRef
	// filter is the subscriber's tags filter (hub/internal/tagsfilter), nil for the
	// subscriptions that take every publication. Set before the
	// subscription is registered (addSubscriber interns it) and fixed
	// after, so the fan-out reads it without the client's mutex.
	filter *tagsfilter.Filter
	// poll is a shared poll subscription's tracked keys
	// (sharedpoll_client.go); nil for the others.
	poll *pollSub
	// compactID is the channel's id a compact subscription was given
	// (compaction.go), set before the subscription is registered and
	// fixed after, as filter.
	compactID int64
}

// channelInfo is the chan_info of the client's publications in the
// subscription's channel: the subscription's, none without one.
func (s *subscription) channelInfo() []byte {
	if s == nil {
		return nil
	}
	return s.chanInfo
}

type bufferedPub struct {
	offset uint64
	epoch  string
	msg    []byte // nil when the payload cannot be encoded for this client
	skip   bool   // not for this client (PublishOptions.ExceptClient)
	// For delta subscriptions: the publication as a delta against base
	// (nil if none), and the reference of its own data.
	diff      []byte
	base, ref deltaRef
	// keyed: a map change, whose base is its key's previous value (the
	// node checked it, delivery_delta_map.go), not the channel's.
	keyed bool
}

// grant is what a subscription's authorization adds to it.
type grant struct {
	chanInfo []byte
	data     []byte // returned in the subscribe result
	expireAt int64
	override *auth.SubOverride
	// hubRefresh: the hub renews the subscription (server-side refresh).
	hubRefresh bool
	stream     StreamFunc // a stream subscription's feed (subscription_stream.go)
	streamPub  func(ctx context.Context, data []byte) error
	allow      auth.Ops // the subscription's capabilities
	viaCaps    bool     // allowed by a connection capability alone
}

func (c *Client) handleSubscribe(ctx context.Context, id uint32, req *protocol.SubscribeRequest) error {
	switch req.Type {
	case requestTypeStream:
	case requestTypeMap, requestTypeMapClients, requestTypeMapUsers:
		return c.handleMapSubscribe(ctx, id, req)
	case requestTypeSharedPoll:
		return c.handleSharedPollSubscribe(ctx, id, req)
	default:
		// A type Herald does not implement is refused, never taken for a
		// stream subscription.
		return newError(protocol.ErrorBadRequest)
	}
	h := c.hub
	ch := req.Channel
	if ch == "" {
		c.logger().Info("subscribe without channel")
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	if e := h.channels.checkLength(ch); e != nil {
		return e
	}
	if err := c.checkSubscriptionSlot(ch); err != nil {
		return err
	}
	r, e := h.channels.resolve(ch)
	if e != nil {
		return e
	}
	if r.isMap() || r.SubscriptionType == SubscriptionSharedPoll {
		return newError(protocol.ErrorBadRequest) // a map or shared poll channel takes its own subscriptions only
	}
	if e := r.checkSubscriber(c.proto); e != nil {
		return e
	}
	if err := c.checkStreamFields(ch, req); err != nil {
		return err
	}
	filter, err := c.requestFilter(ch, r, req)
	if err != nil {
		return err
	}
	g, err := c.authorizeSubscribe(ctx, ch, r, req)
	if err != nil {
		return err
	}
	s := c.newSubscription(ch, r, req, g)
	s.filter = filter
	res, reserved, err := c.startClientSubscription(ctx, s, req)
	if err != nil {
		if s.stream != nil {
			h.releaseStream(s.stream.run)
		}
		return err
	}
	c.queueAdmittedReply(&protocol.Reply{Id: id, Subscribe: res}, reserved)
	c.finishSubscribe(ctx, s)
	if s.stream != nil {
		c.startStream(s)
	}
	return nil
}

// newServerSideSubscription is a subscription the server makes, at
// connect or through the server API: no permission check, since the
// server chose the channel, but the channel must exist and carry data the
// client can decode.
func (c *Client) newServerSideSubscription(req *protocol.SubscribeRequest, g grant) (*subscription, error) {
	r, e := c.hub.channels.resolve(req.Channel)
	if e != nil {
		return nil, e
	}
	if r.isMap() || r.SubscriptionType == SubscriptionSharedPoll {
		return nil, newError(protocol.ErrorBadRequest) // no server-side map or shared poll subscriptions
	}
	if e := r.checkSubscriber(c.proto); e != nil {
		return nil, e
	}
	s := c.newSubscription(req.Channel, r, req, g)
	s.serverSide = true
	s.compact = false // pushes of server-side subscriptions are routed by name
	return s, nil
}

// subscribeServerSide subscribes the client to a channel named by its
// credentials.
func (c *Client) subscribeServerSide(ctx context.Context, req *protocol.SubscribeRequest, opts auth.SubOptions) (*subscription, *protocol.SubscribeResult, error) {
	s, err := c.newServerSideSubscription(req, grant{chanInfo: opts.Info, data: opts.Data, override: opts.Override})
	if err != nil {
		return nil, nil, err
	}
	res, err := c.startSubscription(ctx, s, req)
	if err != nil {
		return nil, nil, err
	}
	return s, res, nil
}

func (c *Client) checkSubscriptionSlot(ch string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[ch]; ok {
		return newError(protocol.ErrorAlreadySubscribed)
	}
	if len(c.subs) >= c.hub.client.ChannelLimit {
		return newError(protocol.ErrorLimitExceeded)
	}
	return nil
}

// authorizeSubscribe applies the permission order of the reference server:
// the application's OnSubscribe, subscription token, then the namespace's
// permissions (command_permissions.go).
func (c *Client) authorizeSubscribe(ctx context.Context, ch string, r *rule, req *protocol.SubscribeRequest) (grant, error) {
	h := c.hub
	if fn := h.cfg.Handlers.OnSubscribe; fn != nil {
		sr, err := fn(ctx, c, SubscribeEvent{Channel: ch, Token: req.Token, Data: req.Data})
		if !errors.Is(err, ErrUseDefault) {
			if err != nil {
				return grant{}, err
			}
			if sr.ExpireAt > 0 && sr.ExpireAt <= time.Now().Unix() {
				if sr.Stream != nil {
					h.releaseStream(sr.Stream)
				}
				return grant{}, newError(protocol.ErrorExpired)
			}
			return grant{chanInfo: sr.Info, data: sr.Data, expireAt: sr.ExpireAt, override: sr.Override, hubRefresh: sr.ServerSideRefresh, stream: sr.Stream, streamPub: sr.StreamPublish, allow: sr.Allow}, nil
		}
	}
	if req.Token != "" {
		if h.cfg.Tokens == nil {
			return grant{}, newError(protocol.ErrorPermissionDenied)
		}
		tok, err := h.cfg.Tokens.VerifySubscribeToken(req.Token)
		if err != nil {
			if errors.Is(err, auth.ErrTokenExpired) {
				return grant{}, newError(protocol.ErrorTokenExpired)
			}
			c.logger().Info("invalid subscription token", "channel", ch, "error", err)
			if errors.Is(err, auth.ErrInvalidCaps) {
				// The problem in the error's message, for the developer.
				return grant{}, protocol.ErrorPermissionDenied.Codedf("permission denied: %v", err)
			}
			return grant{}, newError(protocol.ErrorPermissionDenied)
		}
		if !c.ownsSubscribeToken(tok, ch) {
			c.logger().Info("subscription token for another channel, user or client", "channel", ch)
			return grant{}, newDisconnect(protocol.DisconnectInvalidToken)
		}
		if tok.ExpireAt > 0 && tok.ExpireAt <= time.Now().Unix() {
			return grant{}, newError(protocol.ErrorExpired)
		}
		if v := h.access.CheckSubscription(access.Token{User: tok.User, ID: tok.ID, IssuedAt: tok.IssuedAt}, ch, time.Now()); v != access.Allowed {
			return grant{}, accessRefusal(v)
		}
		return grant{chanInfo: tok.Info, data: tok.Data, expireAt: tok.ExpireAt, override: tok.Override, allow: tok.Allow}, nil
	}
	if c.hasSubscribePermission(r, ch) {
		return grant{}, nil
	}
	// A connection capability, last: a private channel still needs a
	// token, as in Centrifugo PRO.
	if !r.perm.Private(ch) && c.capsAllow(auth.OpSubscribe, ch, nil) {
		return grant{viaCaps: true}, nil
	}
	return grant{}, newError(protocol.ErrorPermissionDenied)
}

// newSubscription works out a subscription's features from the namespace,
// the request and the token's overrides.
func (c *Client) newSubscription(ch string, r *rule, req *protocol.SubscribeRequest, g grant) *subscription {
	s := &subscription{
		channel:   ch,
		rule:      r,
		chanInfo:  g.chanInfo,
		data:      g.data,
		expiry:    newExpiry(g.expireAt, g.hubRefresh),
		presence:  r.Presence,
		joinLeave: r.JoinLeave,
		allow:     g.allow,
		viaCaps:   g.viaCaps,
	}
	forcePush := r.ForcePushJoinLeave
	forceRecovery := r.ForceRecovery
	forcePositioning := r.ForcePositioning
	if o := g.override; o != nil {
		set := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		set(&s.presence, o.Presence)
		set(&s.joinLeave, o.JoinLeave)
		set(&forcePush, o.ForcePushJoinLeave)
		set(&forceRecovery, o.ForceRecovery)
		set(&forcePositioning, o.ForcePositioning)
	}
	if g.stream != nil {
		// Its publications are the feed's only: no stream position, and
		// no delta base shared with the channel's other subscribers.
		s.stream = &subStream{run: g.stream, publish: g.streamPub}
		s.pushJoinLeave = false
		return s
	}
	// A subscriber with a tags filter never reaches this with delta
	// (requestFilter refuses the pair): a delta is against the previous
	// publication of the channel, which a filtered subscriber may not
	// have received.
	// For the same reason a channel under a row check (rowcheck.go)
	// negotiates no delta.
	s.delta = req.Tf == nil && !c.hub.rowChecked(s.channel) && r.negotiateDelta(req.Delta)
	s.compact = c.wantsCompaction(r, req)
	// The subscription is not registered yet: its own allow is read from
	// the grant, and capsAllow asks the connection's caps only.
	s.pushJoinLeave = s.joinLeave && (forcePush || (req.JoinLeave && (c.hasPermission(r.presenceGrant(), true) ||
		g.allow&auth.OpPresence != 0 || c.capsAllow(auth.OpPresence, ch, nil))))
	if r.HasHistory() {
		historyAllowed := c.hasPermission(r.historyGrant(), true) || g.allow&auth.OpHistory != 0 || c.capsAllow(auth.OpHistory, ch, nil)
		s.recoverable = forceRecovery || (req.Recoverable && (r.AllowRecovery || historyAllowed))
		s.positioned = s.recoverable || forcePositioning || (req.Positioned && (r.AllowPositioning || historyAllowed))
	}
	return s
}

// startClientSubscription is startSubscription for a client's subscribe
// command; one that recovers may answer with a page of publications, and
// is refused while the node is behind (shedReply) or when its
// publications would take the node's queues past their budget
// (admitReply): the subscription is then undone. It returns the bytes
// reserved for the reply, to give back once it is queued. Server-side
// subscriptions are not refused here: nothing would retry them.
func (c *Client) startClientSubscription(ctx context.Context, s *subscription, req *protocol.SubscribeRequest) (*protocol.SubscribeResult, int, error) {
	if (req.Recover || s.rule.cacheRecovery() && s.rule.AutoCacheRecover) && s.recoverable {
		if err := c.hub.shedReply(); err != nil {
			return nil, 0, err
		}
	}
	res, err := c.startSubscription(ctx, s, req)
	if err != nil {
		return nil, 0, err
	}
	reserved, e := c.hub.admitReply(publicationsSize(res.Publications))
	if e != nil {
		c.leaveChannel(s)
		return nil, 0, e
	}
	return res, reserved, nil
}

// startSubscription registers s (holding back its publications), declares
// interest to the engine, and answers with the stream position or the
// recovered publications.
func (c *Client) startSubscription(ctx context.Context, s *subscription, req *protocol.SubscribeRequest) (*protocol.SubscribeResult, error) {
	h := c.hub
	c.mu.Lock()
	if c.state != stateConnected {
		c.mu.Unlock()
		return nil, newDisconnect(protocol.DisconnectBadRequest)
	}
	if _, ok := c.subs[s.channel]; ok {
		c.mu.Unlock()
		return nil, newError(protocol.ErrorAlreadySubscribed)
	}
	if len(c.subs) >= h.client.ChannelLimit {
		c.mu.Unlock()
		return nil, newError(protocol.ErrorLimitExceeded)
	}
	if c.subs == nil {
		c.subs = make(map[string]*subscription, 1)
	}
	c.subs[s.channel] = s
	s.active, s.syncing = true, true
	c.mu.Unlock()

	if s.stream != nil {
		// Not through the engine: the feed delivers (subscription_stream.go).
		s.syncing = false
		res := &protocol.SubscribeResult{Data: s.data}
		res.Expires, res.Ttl = s.ttl(time.Now())
		return res, nil
	}
	cache := s.rule.cacheRecovery()
	recovering := (req.Recover || cache && s.rule.AutoCacheRecover) && s.recoverable
	var metaTTL *time.Duration
	if s.positioned && !recovering {
		// The reply needs the position alone: the engine may read it as
		// it subscribes, saving a round trip (interest.await).
		metaTTL = &s.rule.HistoryMetaTTL
	}
	subscribedAt, err := h.addSubscriber(ctx, c, s, metaTTL)
	if err != nil {
		// The client may try again: answered with error 100, as a command
		// that timed out is.
		c.dropSubscription(s)
		return nil, err
	}
	res := &protocol.SubscribeResult{Data: s.data, Delta: s.delta, Id: s.compactID}
	res.Expires, res.Ttl = s.ttl(time.Now())
	s.rule.announcePublishDebounce(res)
	// As the reference, was_recovering mirrors the request even when the
	// subscription is not recoverable.
	res.WasRecovering = req.Recover
	if !s.positioned {
		return res, nil
	}
	var (
		pubs []*engine.Publication
		pos  engine.StreamPosition
		ok   bool
	)
	switch {
	case subscribedAt != nil:
		pos = *subscribedAt
	case recovering && cache:
		res.WasRecovering = true // also when the namespace recovered on its own
		pubs, pos, ok, err = c.recoverCache(ctx, s, req)
	default:
		hreq := engine.HistoryRequest{MetaTTL: s.rule.HistoryMetaTTL}
		if recovering {
			hreq.Since = &engine.StreamPosition{Offset: req.Offset, Epoch: req.Epoch}
			hreq.Limit = h.client.RecoveryMaxPublicationLimit
			if s.rule.isMap() {
				// A map flow goes live only with at most a page left to
				// read, plus what came since (mapcatchup.go).
				hreq.Limit = s.rule.Map.liveTransitionLimit()
			}
		}
		pubs, pos, err = h.engine.History(ctx, s.channel, hreq)
		ok = recovering && recovered(req, pubs, pos)
	}
	if err != nil {
		c.leaveChannel(s)
		return nil, err
	}
	res.Positioned = true
	res.Recoverable = s.recoverable
	res.Epoch, res.Offset = pos.Epoch, pos.Offset
	if recovering {
		if ok {
			res.Recovered = true
			res.Offset = req.Offset
			res.Publications = make([]*protocol.Publication, 0, len(pubs))
			for _, p := range h.rowFilter(ctx, s.channel, c.User(), pubs) {
				if !c.canDecodeFrom(s.channel, pos.Epoch, p) {
					continue // as in delivery: see deliverLocked
				}
				if !passesFilter(s.filter, nil, p) {
					continue // as the reference: recovery is judged on the whole stream, then filtered
				}
				res.Publications = append(res.Publications, protoPublication(p))
			}
		} else if req.Flag&flagRejectUnrecovered != 0 {
			c.leaveChannel(s)
			return nil, newError(protocol.ErrorUnrecoverablePosition)
		}
	}
	var have deltaRef
	if s.delta && s.rule.isMap() {
		// A map flow goes live only by recovering (or error 112).
		c.mapRecovered(s, res.Publications, pubs, req.Offset, pos)
		have = mapDeltaIntact
	} else if s.delta && res.Recovered {
		var data []byte
		have, data = recoveredDeltas(c.proto, res.Publications, pos.Epoch)
		h.deltas.seed(s.channel, have, data)
	}
	c.mu.Lock()
	s.offset, s.epoch = pos.Offset, pos.Epoch
	s.deltaHave = have
	c.mu.Unlock()
	return res, nil
}

// recovered applies the reference's rule: recovery is all or nothing.
func recovered(req *protocol.SubscribeRequest, pubs []*engine.Publication, top engine.StreamPosition) bool {
	if req.Epoch != "" && req.Epoch != top.Epoch {
		return false
	}
	if len(pubs) == 0 {
		return top.Offset == req.Offset
	}
	return pubs[0].Offset == req.Offset+1 && pubs[len(pubs)-1].Offset == top.Offset
}

// finishSubscribe releases the publications held back while subscribing
// (after the reply is queued), then announces the client in the channel.
func (c *Client) finishSubscribe(ctx context.Context, s *subscription) {
	c.mu.Lock()
	if !s.active {
		c.mu.Unlock()
		return
	}
	buf := s.buffered
	s.buffered, s.syncing = nil, false
	for _, b := range buf {
		if b.skip {
			s.skipLocked(b.offset, b.epoch)
			continue
		}
		c.deliverLocked(s, b, nil)
	}
	if s.expireAt > 0 {
		c.resetTimerLocked(time.Now())
	}
	c.mu.Unlock()
	if c.hub.traces.active() {
		c.hub.traceClient(c, TraceSubscribe, s.channel, 0, "")
	}
	c.join(ctx, s)
}

func (c *Client) join(ctx context.Context, s *subscription) {
	h := c.hub
	if s.rule.hasMapPresence() {
		c.touchMapPresence(ctx, s)
	}
	if !s.presence && !s.joinLeave {
		return
	}
	info := c.clientInfo(s.chanInfo)
	join := s.joinLeave && h.joinLeaveAllowed(s.channel, s.rule)
	if pj, ok := engine.PresenceJoinerOf(h.engine); ok && s.presence && join {
		// One step where the engine can: the connection's next command
		// waits for this (engine.PresenceJoiner).
		if err := pj.AddPresenceJoin(ctx, s.channel, info, h.client.PresenceTTL); err != nil {
			c.logger().Error("add presence and publish join", "channel", s.channel, "error", err)
		}
		return
	}
	if s.presence {
		if err := h.engine.AddPresence(ctx, s.channel, info, h.client.PresenceTTL); err != nil {
			c.logger().Error("add presence", "channel", s.channel, "error", err)
		}
	}
	if join {
		if err := h.engine.PublishJoin(ctx, s.channel, info); err != nil {
			c.logger().Error("publish join", "channel", s.channel, "error", err)
		}
	}
}

// requestFilter is the subscribe request's tags filter, compiled; nil
// when it has none. As the reference, a filter where the namespace does
// not allow one (allow_tags_filter), or a malformed one, is error 107. So
// is a filter with delta compression: the reference makes the two
// mutually exclusive, and a subscriber asking for both would otherwise not
// get what it asked for without knowing why.
func (c *Client) requestFilter(ch string, r *rule, req *protocol.SubscribeRequest) (*tagsfilter.Filter, error) {
	if req.Tf == nil {
		return nil, nil
	}
	if !r.AllowTagsFilter {
		c.logger().Info("tags filter where the namespace does not allow it", "channel", ch)
		return nil, newError(protocol.ErrorBadRequest)
	}
	if req.Delta != "" {
		c.logger().Info("tags filter with delta compression", "channel", ch)
		return nil, newError(protocol.ErrorBadRequest)
	}
	f, why := tagsfilter.Compile(req.Tf)
	if f == nil {
		c.logger().Info("invalid tags filter", "channel", ch, "reason", why)
		return nil, newError(protocol.ErrorBadRequest)
	}
	return f, nil
}

// presenceSubs lists the subscriptions whose presence the client keeps
// alive (a channel's or a map presence).
func (c *Client) presenceSubs() []*subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*subscription
	for _, s := range c.subs {
		if (s.presence || s.rule.hasMapPresence()) && s.active && !s.syncing {
			out = append(out, s)
		}
	}
	return out
}
