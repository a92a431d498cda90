package hub

import (
	"context"
	"errors"
	"fmt"
	"github.com/heraldhq/herald/auth"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// handlePublish publishes a client's publication, to a stream channel or
// (PublishRequest.type map) to a map channel. The map/stream decision is
// made here once: a stream channel takes plain publications, a map
// channel map ones, and the keys of map_clients and map_users channels are
// the server's.
func (c *Client) handlePublish(ctx context.Context, id uint32, req *protocol.PublishRequest) error {
	toMap := req.Type != 0 || req.Key != "" || req.Removed
	if req.Channel == "" || !toMap && len(req.Data) == 0 {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	if toMap && req.Type != publishTypeMap {
		return newError(protocol.ErrorBadRequest) // not a publish type Herald implements
	}
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if toMap != r.isMap() || toMap && r.SubscriptionType != SubscriptionMap || r.SubscriptionType == SubscriptionSharedPoll {
		return newError(protocol.ErrorBadRequest)
	}
	if toMap {
		err = c.publishToMap(ctx, req, r, s)
	} else {
		err = c.publishToStream(ctx, req, r, s)
	}
	if err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, Publish: &protocol.PublishResult{}})
	return nil
}

// publishToStream publishes a client's publication to a stream channel
// (or to its bidirectional stream subscription): decided by OnPublish,
// else by the namespace's publish permission.
func (c *Client) publishToStream(ctx context.Context, req *protocol.PublishRequest, r *rule, s *subscription) error {
	if s != nil && s.stream != nil && s.stream.publish != nil {
		// A bidirectional stream subscription: the publication is the
		// stream's (subscription_stream.go), not the channel's.
		return s.stream.publish(ctx, req.Data)
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
	if !decided && !c.hasPermission(r.publishGrant(), s != nil) && !c.celAllows(r.cel.publish, r, req.Channel, s != nil) &&
		!c.capsAllow(auth.OpPublish, req.Channel, s) {
		return newError(protocol.ErrorPermissionDenied)
	}
	pub := &engine.Publication{Data: data, Info: c.clientInfo(s.channelInfo())}
	_, err := c.hub.publish(ctx, req.Channel, pubRule, pub, "")
	return err
}

// publish sends pub to the stream channel ch (its callers checked that it
// is not a map channel) with the namespace's history options and an
// idempotency key (none when empty).
func (h *Hub) publish(ctx context.Context, ch string, r *rule, pub *engine.Publication, key string) (engine.StreamPosition, error) {
	if e := h.checkPublicationData(ch, r, pub.Data); e != nil {
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
	e := h.behind("publications")
	if e != nil {
		h.metrics.shed.Inc()
	}
	return e
}

// shedReply refuses, for the same reason, a command whose reply may be
// large (history, a subscribe that recovers, a map subscribe page): with the node's queues
// already over NodeQueueMaxSize, each such reply to a client that does not
// read adds its whole size to the node's memory (issue 35 #3: 200 clients
// that asked for 6 MB of history and stopped reading took the node to
// 2.3 GB). Error 111 is temporary: SDKs resubscribe with backoff, and the
// reply is made once delivery has caught up.
func (h *Hub) shedReply() *Error {
	e := h.behind("replies")
	if e != nil {
		h.metrics.shedReplies.Inc()
	}
	return e
}

// behind is the error 111 of a node whose write queues hold more than
// NodeQueueMaxSize bytes, nil while they do not (or with no bound).
func (h *Hub) behind(what string) *Error {
	limit := h.client.NodeQueueMaxSize
	if limit < 0 {
		return nil
	}
	if q := h.queuedTotal.Load(); q > int64(limit) {
		return behindError(what, q, limit)
	}
	return nil
}

// behindError is error 111 for a node whose write queues hold q bytes
// against client.node_queue_max_size limit.
func behindError(what string, q int64, limit int) *Error {
	return &Error{Code: protocol.ErrorTooManyRequests, Temporary: true,
		Message: fmt.Sprintf("too many requests: this node is behind delivering %s (%d bytes queued to clients, client.node_queue_max_size %d); retry later", what, q, limit)}
}
