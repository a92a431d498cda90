package hub

import (
	"context"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/tagsfilter"
	"github.com/heraldhq/herald/protocol"
)

// Map subscribe phases (SubscribeRequest.phase and SubscribeResult.phase).
// A client reads the state page by page (phaseState), then the changes
// made since the first page (phaseStream), until the server answers with
// phaseLive: from that reply on the client is subscribed and receives the
// channel's changes as publications with a key.
const (
	phaseLive   = 0
	phaseStream = 1
	phaseState  = 2
)

// handleMapSubscribe answers one request of a map subscribe flow. Each
// request is authorized as a subscribe is; only the last one, which
// answers with phaseLive, registers the subscription.
func (c *Client) handleMapSubscribe(ctx context.Context, id uint32, req *protocol.SubscribeRequest) error {
	h := c.hub
	ch := req.Channel
	if ch == "" {
		c.logger().Info("map subscribe without channel")
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	if e := h.channels.checkLength(ch); e != nil {
		return e
	}
	r, e := h.channels.resolve(ch)
	if e != nil {
		return e
	}
	if r.requestType() != req.Type {
		// Every subscriber of a channel uses its namespace's type.
		return newError(protocol.ErrorBadRequest)
	}
	if e := r.checkSubscriber(c.proto); e != nil {
		return e
	}
	limit, e := r.Map.pageLimit(req.Limit)
	if e != nil {
		return e
	}
	if len(req.Cursor) > MaxMapKeyLength {
		return newError(protocol.ErrorBadRequest)
	}
	// The filter comes with every request of the flow (centrifuge-js
	// sends it each time) and applies to the state pages, the stream pages
	// and the live publications alike.
	filter, err := c.requestFilter(ch, r, req)
	if err != nil {
		return err
	}
	if err := c.checkSubscriptionSlot(ch); err != nil {
		return err
	}
	if err := c.checkMapCatchUp(ch, r, req); err != nil {
		return err
	}
	g, err := c.authorizeSubscribe(ctx, ch, r, req)
	if err != nil {
		return err
	}
	mb, e := h.mapBroker()
	if e != nil {
		return e
	}
	if req.Phase != phaseState && req.Phase != phaseStream {
		return newError(protocol.ErrorBadRequest)
	}
	// Every request of the flow may answer with a page of entries, up to
	// a page size of values each (issue 35 #3): refused while the node is
	// behind, as a history with a limit is (replyadmission.go).
	if err := h.shedReply(); err != nil {
		return err
	}
	var (
		res *protocol.SubscribeResult
		s   *subscription // set when the reply makes the client live
	)
	if req.Phase == phaseState {
		res, err = c.mapStatePage(ctx, mb, r, req, limit, filter)
	} else {
		res, s, err = c.mapStreamPage(ctx, r, req, g, limit, filter)
	}
	if err != nil {
		return err
	}
	reserved, e := h.admitReply(publicationsSize(res.State) + publicationsSize(res.Publications))
	if e != nil {
		// As a recovering subscribe refused (startClientSubscription):
		// the client is not left live without the changes it was owed.
		if s != nil {
			c.leaveChannel(s)
		}
		return e
	}
	res.Type = req.Type
	if s != nil {
		c.endMapCatchUp(ch)
	}
	c.queueAdmittedReply(&protocol.Reply{Id: id, Subscribe: res}, reserved)
	if s != nil {
		c.finishSubscribe(ctx, s)
	}
	return nil
}

// mapStatePage answers a state request with a page of the state. The
// position is the stream's at the time of the read: the client keeps the
// first page's and reads the stream from it once the pages end.
func (c *Client) mapStatePage(ctx context.Context, mb engine.MapBroker, r *rule, req *protocol.SubscribeRequest, limit int, filter *tagsfilter.Filter) (*protocol.SubscribeResult, error) {
	page, err := mb.MapState(ctx, req.Channel, engine.MapStateRequest{Cursor: req.Cursor, Limit: limit, MetaTTL: r.Map.MetaTTL})
	if err != nil {
		return nil, err
	}
	res := &protocol.SubscribeResult{
		Phase:  phaseState,
		Cursor: page.Cursor,
		Epoch:  page.Position.Epoch,
		Offset: page.Position.Offset,
		State:  make([]*protocol.Publication, 0, len(page.Entries)),
	}
	for _, p := range page.Entries {
		if !c.canDecodeFrom(req.Channel, page.Position.Epoch, p) || !passesFilter(filter, nil, p) {
			continue // as in delivery: see deliverLocked
		}
		res.State = append(res.State, protoPublication(p))
	}
	if c.mapDeltaWanted(r, req) {
		c.mapDeltaPages(res.State)
		c.hub.deltas.seedMap(req.Channel, page.Position.Epoch, page.Entries, page.Position.Offset, page.Position.Offset)
	}
	return res, nil
}

// mapStreamPage answers a stream request: a page of changes after the
// client's position while more than a page remains, otherwise the live
// reply, for which the subscription is registered first (holding back live
// publications) so that no change falls between the stream read and live
// delivery. It returns the subscription when it went live.
func (c *Client) mapStreamPage(ctx context.Context, r *rule, req *protocol.SubscribeRequest, g grant, limit int, filter *tagsfilter.Filter) (*protocol.SubscribeResult, *subscription, error) {
	h := c.hub
	if req.Epoch == "" {
		return nil, nil, newError(protocol.ErrorBadRequest)
	}
	since := engine.StreamPosition{Offset: req.Offset, Epoch: req.Epoch}
	pubs, top, err := h.engine.History(ctx, req.Channel, engine.HistoryRequest{Since: &since, Limit: limit + 1, MetaTTL: r.Map.MetaTTL})
	if err != nil {
		return nil, nil, err
	}
	if top.Epoch != req.Epoch {
		if req.Recover {
			return nil, nil, newError(protocol.ErrorUnrecoverablePosition)
		}
		// The client reads the state again when the epoch changed.
		return &protocol.SubscribeResult{Phase: phaseStream, Epoch: top.Epoch, Offset: top.Offset}, nil, nil
	}
	if req.Offset > top.Offset || (req.Offset < top.Offset && (len(pubs) == 0 || pubs[0].Offset != req.Offset+1)) {
		// The stream no longer holds the changes after the position.
		return nil, nil, newError(protocol.ErrorUnrecoverablePosition)
	}
	if len(pubs) > limit {
		pubs = pubs[:limit]
		res := &protocol.SubscribeResult{Phase: phaseStream, Epoch: top.Epoch, Offset: pubs[len(pubs)-1].Offset}
		res.Publications = c.mapPublications(req.Channel, top.Epoch, pubs, filter)
		if c.mapDeltaWanted(r, req) {
			c.mapDeltaPages(res.Publications)
			h.deltas.seedMap(req.Channel, top.Epoch, pubs, req.Offset, res.Offset)
		}
		return res, nil, nil
	}
	s := c.newSubscription(req.Channel, r, req, g)
	s.filter = filter
	s.positioned, s.recoverable = true, true
	live := &protocol.SubscribeRequest{Channel: req.Channel, Recover: true, Offset: req.Offset, Epoch: req.Epoch, Flag: req.Flag | flagRejectUnrecovered}
	res, err := c.startSubscription(ctx, s, live)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	res.Offset = s.offset // the top, also after a recovery (the map client's convention)
	c.mu.Unlock()
	res.Phase = phaseLive
	res.Recovered = req.Recover
	res.WasRecovering = req.Recover
	res.Recoverable = r.Map.mode() != MapEphemeral
	return res, s, nil
}

func (c *Client) mapPublications(ch, epoch string, pubs []*engine.Publication, filter *tagsfilter.Filter) []*protocol.Publication {
	out := make([]*protocol.Publication, 0, len(pubs))
	for _, p := range pubs {
		if c.canDecodeFrom(ch, epoch, p) && passesFilter(filter, nil, p) {
			out = append(out, protoPublication(p))
		}
	}
	return out
}

// mapBroker is the engine's map part, or error 108 when it keeps no map
// state (New refuses map namespaces then; the error guards every map
// call anyway). The engine was asked once, in New, with engine.MapsOf.
func (h *Hub) mapBroker() (engine.MapBroker, *Error) {
	if h.maps == nil {
		return nil, newError(protocol.ErrorNotAvailable)
	}
	return h.maps, nil
}
