package hub

import (
	"context"
	"errors"
	"github.com/heraldhq/herald/auth"

	"github.com/heraldhq/herald/protocol"
)

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
	if !c.hasPermission(r.presenceGrant(), s != nil) && !c.celAllows(r.cel.presence, r, ch, s != nil) &&
		!c.capsAllow(auth.OpPresence, ch, s) {
		return newError(protocol.ErrorPermissionDenied)
	}
	return nil
}

// handlePresence answers the channel's presence from the engine.
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

// handlePresenceStats answers the channel's client and user counts.
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
