package hub

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/protocol"
)

// handleSend hands a send command (no reply) to OnSend; without OnSend,
// or when it passes, the connection is closed with 3508.
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
