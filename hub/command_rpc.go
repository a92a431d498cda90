package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/heraldhq/herald/protocol"
)

// handleRPC hands an rpc command to OnRPC and waits for its reply (the
// client's next command waits with it, so replies stay in order); without
// OnRPC, or when it passes, 108 (not available).
func (c *Client) handleRPC(ctx context.Context, id uint32, req *protocol.RPCRequest) error {
	if req.Method == userStatusRPC && c.hub.client.UserStatusRPC {
		return c.updateOwnStatus(ctx, id)
	}
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
