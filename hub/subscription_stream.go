package hub

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/protocol"
)

// Stream subscriptions: a subscription whose publications come from the
// application, for this client only (SubscribeReply.Stream, used by the
// subscribe-stream proxy), instead of from the engine.

// StreamFunc feeds a stream subscription: it calls deliver for each
// publication to the subscribing client, until ctx ends (the subscription
// or the connection ended) or its source is exhausted. deliver fails once
// the subscription has ended, and for data a JSON client cannot receive.
// The hub calls it exactly once, on a goroutine of its own: with a
// context already ended when the subscription did not come about (so
// that it releases what it holds).
type StreamFunc func(ctx context.Context, deliver func(data []byte, tags map[string]string) error) error

// ErrStreamEnded is what deliver returns once the subscription is gone.
var ErrStreamEnded = errors.New("hub: stream subscription ended")

// subStream is a stream subscription's feed.
type subStream struct {
	run     StreamFunc
	publish func(ctx context.Context, data []byte) error // nil: unidirectional
	cancel  context.CancelFunc                           // set once running
}

// startStream runs s's feed once its subscribe reply is queued. When the
// feed returns on its own, the client is unsubscribed with 2500 and so
// subscribes again, as after any lost publication.
func (c *Client) startStream(s *subscription) {
	h := c.hub
	ctx, cancel := context.WithCancel(h.ctx)
	c.mu.Lock()
	if !s.active {
		c.mu.Unlock()
		cancel()
		h.releaseStream(s.stream.run)
		return
	}
	s.stream.cancel = cancel
	c.mu.Unlock()
	h.goBackground(func() {
		defer cancel()
		err := s.stream.run(ctx, func(data []byte, tags map[string]string) error {
			return c.deliverStream(s, data, tags)
		})
		if ctx.Err() != nil {
			return
		}
		c.logger().Info("subscription stream ended", "channel", s.channel, "error", err)
		c.unsubscribeIf(s.channel, s, protocol.UnsubscribeInsufficientState)
	})
}

// releaseStream runs a feed whose subscription did not come about, with
// an ended context, so that it releases what it holds.
func (h *Hub) releaseStream(run StreamFunc) {
	h.goBackground(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = run(ctx, func([]byte, map[string]string) error { return ErrStreamEnded })
	})
}

// endStream stops s's feed, if it has one; s has just stopped being
// active. Called with c.mu held.
func (s *subscription) endStream() {
	if s.stream != nil && s.stream.cancel != nil {
		s.stream.cancel()
	}
	if s.poll != nil {
		// Every way a subscription ends comes here, under the client's
		// mutex: a shared poll one releases its keys.
		s.poll.endLocked()
	}
}

// deliverStream queues one publication of a stream subscription.
func (c *Client) deliverStream(s *subscription, data []byte, tags map[string]string) error {
	if c.proto == protocol.TypeJSON && !protocol.ValidJSONPayload(data) {
		return errors.New("hub: stream publication data is not JSON, which a JSON client cannot receive")
	}
	msg, err := c.encodePush(&protocol.Push{Channel: s.channel, Pub: &protocol.Publication{Data: data, Tags: tags}})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.active || c.state != stateConnected {
		return ErrStreamEnded
	}
	c.enqueueMsgLocked(msg, s.rule.QueuePolicy == QueueDropOldest)
	c.hub.metrics.sent["pub"].Inc()
	return nil
}
