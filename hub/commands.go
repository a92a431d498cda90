package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// channelCommand runs the checks every channel command shares: a channel
// is required (3501 otherwise, as in the reference), then its namespace.
// It also reports whether the client is subscribed, and the subscription.
func (c *Client) channelCommand(ch string) (*rule, *subscription, error) {
	if ch == "" {
		return nil, nil, newDisconnect(protocol.DisconnectBadRequest)
	}
	r, e := c.hub.channels.resolve(ch)
	if e != nil {
		return nil, nil, e
	}
	c.mu.Lock()
	s := c.subs[ch]
	if s != nil && (!s.active || s.syncing) {
		s = nil
	}
	c.mu.Unlock()
	return r, s, nil
}

func (c *Client) handlePublish(ctx context.Context, id uint32, req *protocol.PublishRequest) error {
	if req.Channel == "" || len(req.Data) == 0 {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	data, pubRule := req.Data, r
	decided := false
	if fn := c.hub.cfg.Handlers.OnPublish; fn != nil {
		pr, err := fn(ctx, c, PublishEvent{Channel: req.Channel, Data: req.Data})
		if decided = !errors.Is(err, ErrUseDefault); decided {
			if err != nil {
				return err
			}
			if pr.Data != nil {
				data = pr.Data
			}
			if pr.SkipHistory {
				pubRule = r.withoutHistory()
			}
		}
	}
	if !decided && !permitted(c.User(), r.AllowPublishForAnonymous, r.AllowPublishForClient, r.AllowPublishForSubscriber && s != nil) && !c.hub.client.Insecure {
		return newError(protocol.ErrorPermissionDenied)
	}
	var chanInfo []byte
	if s != nil {
		chanInfo = s.chanInfo
	}
	pub := &engine.Publication{Data: data, Info: c.clientInfo(chanInfo)}
	if _, err := c.hub.publish(ctx, req.Channel, pubRule, pub); err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, Publish: &protocol.PublishResult{}})
	return nil
}

// presenceCommand runs the checks presence and presence_stats share:
// presence on in the namespace (108), then permission (103), which the
// application's OnPresence decides when it has one.
func (c *Client) presenceCommand(ctx context.Context, ch string, stats bool) error {
	r, s, err := c.channelCommand(ch)
	if err != nil {
		return err
	}
	if !r.Presence {
		return newError(protocol.ErrorNotAvailable)
	}
	if fn := c.hub.cfg.Handlers.OnPresence; fn != nil {
		if err := fn(ctx, c, PresenceEvent{Channel: ch, Stats: stats}); !errors.Is(err, ErrUseDefault) {
			return err
		}
	}
	if !c.hasPresencePermission(r, s != nil) {
		return newError(protocol.ErrorPermissionDenied)
	}
	return nil
}

func (c *Client) handlePresence(ctx context.Context, id uint32, req *protocol.PresenceRequest) error {
	if err := c.presenceCommand(ctx, req.Channel, false); err != nil {
		return err
	}
	m, err := c.hub.engine.Presence(ctx, req.Channel)
	if err != nil {
		return err
	}
	res := &protocol.PresenceResult{Presence: make(map[string]*protocol.ClientInfo, len(m))}
	for id, info := range m {
		res.Presence[id] = protoClientInfo(info)
	}
	c.queueReply(&protocol.Reply{Id: id, Presence: res})
	return nil
}

func (c *Client) handlePresenceStats(ctx context.Context, id uint32, req *protocol.PresenceStatsRequest) error {
	if err := c.presenceCommand(ctx, req.Channel, true); err != nil {
		return err
	}
	st, err := c.hub.engine.PresenceStats(ctx, req.Channel)
	if err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, PresenceStats: &protocol.PresenceStatsResult{
		NumClients: uint32(st.NumClients), NumUsers: uint32(st.NumUsers),
	}})
	return nil
}

func (c *Client) handleHistory(ctx context.Context, id uint32, req *protocol.HistoryRequest) error {
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if !r.HasHistory() {
		return newError(protocol.ErrorNotAvailable)
	}
	var since *engine.StreamPosition
	if req.Since != nil {
		since = &engine.StreamPosition{Offset: req.Since.Offset, Epoch: req.Since.Epoch}
	}
	decided := false
	if fn := c.hub.cfg.Handlers.OnHistory; fn != nil {
		ev := HistoryEvent{Channel: req.Channel, Since: since, Limit: int(req.Limit), Reverse: req.Reverse}
		err := fn(ctx, c, ev)
		if decided = !errors.Is(err, ErrUseDefault); decided && err != nil {
			return err
		}
	}
	if !decided && !c.hasHistoryPermission(r, s != nil) {
		return newError(protocol.ErrorPermissionDenied)
	}
	pubs, pos, err := c.hub.history(ctx, req.Channel, r, since, int(req.Limit), req.Reverse, c.hub.client.HistoryMaxPublicationLimit)
	if err != nil {
		return err
	}
	res := &protocol.HistoryResult{Epoch: pos.Epoch, Offset: pos.Offset, Publications: make([]*protocol.Publication, 0, len(pubs))}
	for _, p := range pubs {
		if !c.canDecode(p) {
			continue // as in delivery: see deliverLocked
		}
		res.Publications = append(res.Publications, protoPublication(p))
	}
	c.queueReply(&protocol.Reply{Id: id, History: res})
	return nil
}

func (c *Client) handleRPC(ctx context.Context, id uint32, req *protocol.RPCRequest) error {
	fn := c.hub.cfg.Handlers.OnRPC
	if fn == nil {
		return newError(protocol.ErrorNotAvailable)
	}
	type answer struct {
		r   RPCReply
		err error
	}
	// Buffered, so a reply after the timeout does not block the handler.
	done := make(chan answer, 1)
	var once sync.Once
	fn(ctx, c, RPCEvent{Method: req.Method, Data: req.Data}, func(r RPCReply, err error) {
		once.Do(func() { done <- answer{r, err} })
	})
	select {
	case a := <-done:
		if errors.Is(a.err, ErrUseDefault) {
			return newError(protocol.ErrorNotAvailable)
		}
		if a.err != nil {
			return a.err
		}
		c.queueReply(&protocol.Reply{Id: id, Rpc: &protocol.RPCResult{Data: a.r.Data}})
		return nil
	case <-ctx.Done():
		return fmt.Errorf("rpc %q: no reply: %w", req.Method, ctx.Err())
	}
}

func (c *Client) handleSend(ctx context.Context, req *protocol.SendRequest) error {
	fn := c.hub.cfg.Handlers.OnSend
	if fn == nil {
		return newDisconnect(protocol.DisconnectNotAvailable)
	}
	if err := fn(ctx, c, SendEvent{Data: req.Data}); errors.Is(err, ErrUseDefault) {
		return newDisconnect(protocol.DisconnectNotAvailable)
	} else if err != nil {
		var d *Disconnect
		if errors.As(err, &d) {
			return d
		}
		c.logger().Error("send handler", "error", err)
	}
	return nil
}
