package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// handlePublish publishes a client's publication: decided by OnPublish,
// else by the namespace's publish permission.
func (c *Client) handlePublish(ctx context.Context, id uint32, req *protocol.PublishRequest) error {
	if req.Type != 0 || req.Key != "" || req.Removed {
		return c.handleMapPublish(ctx, id, req)
	}
	if req.Channel == "" || len(req.Data) == 0 {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if r.isMap() {
		return newError(protocol.ErrorBadRequest) // a map channel takes map publications only
	}
	if s != nil && s.stream != nil && s.stream.publish != nil {
		// A bidirectional stream subscription: the publication is the
		// stream's (stream.go), not the channel's.
		if err := s.stream.publish(ctx, req.Data); err != nil {
			return err
		}
		c.queueReply(&protocol.Reply{Id: id, Publish: &protocol.PublishResult{}})
		return nil
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
	if !decided && !c.hasPermission(r.publishGrant(), s != nil) {
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

// publish sends pub to ch with the namespace's history options.
func (h *Hub) publish(ctx context.Context, ch string, r *rule, pub *engine.Publication) (engine.StreamPosition, error) {
	return h.publishKeyed(ctx, ch, r, pub, "")
}

// publishKeyed is publish with an idempotency key (none when empty).
func (h *Hub) publishKeyed(ctx context.Context, ch string, r *rule, pub *engine.Publication, key string) (engine.StreamPosition, error) {
	if r.isMap() {
		// A publication without a key would corrupt subscribers' maps.
		return engine.StreamPosition{}, &Error{Code: uint32(protocol.ErrorBadRequest), Message: fmt.Sprintf("bad request: channel %q is in a map namespace: set keys with map_publish", ch)}
	}
	if e := r.checkPublicationData(pub.Data); e != nil {
		return engine.StreamPosition{}, e
	}
	if e := h.shedPublish(); e != nil {
		return engine.StreamPosition{}, e
	}
	start := time.Now()
	defer func() { h.metrics.publishDuration.Observe(time.Since(start).Seconds()) }()
	sp, err := h.engine.Publish(ctx, ch, pub, engine.PublishOptions{
		HistorySize:    r.HistorySize,
		HistoryTTL:     r.HistoryTTL,
		HistoryMetaTTL: r.HistoryMetaTTL,
		IdempotencyKey: key, IdempotentResultTTL: h.cfg.IdempotencyWindow,
	})
	if err != nil {
		return sp, fmt.Errorf("publish to %q: %w", ch, err)
	}
	h.published.Add(1)
	return sp, nil
}

// shedPublish refuses a publication while this node's write queues hold
// more than NodeQueueMaxSize bytes: the node is not keeping up with
// delivery, and what it would accept now only grows the queues until
// clients are closed for the node's own slowness. Error 111 is temporary,
// so SDKs and API callers retry later. Only publications made on this
// node are shed; the engine still delivers those of other nodes.
func (h *Hub) shedPublish() *Error {
	limit := h.client.NodeQueueMaxSize
	if limit < 0 {
		return nil
	}
	if q := h.queuedTotal.Load(); q > int64(limit) {
		h.metrics.shed.Inc()
		return &Error{Code: uint32(protocol.ErrorTooManyRequests), Temporary: true,
			Message: fmt.Sprintf("too many requests: this node is behind delivering publications (%d bytes queued to clients, more than client.node_queue_max_size %d); retry later", q, limit)}
	}
	return nil
}
