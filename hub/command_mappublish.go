package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// Publish request type (PublishRequest.type) of a map publish or remove.
const publishTypeMap = 1

// MapPublishEvent is a client's map publish (or, with Removed, map
// remove) command. Key is the key the client sent.
type MapPublishEvent struct {
	Channel string
	Key     string
	Data    []byte
	Removed bool
}

// MapPublishReply is the application's verdict on a map publish or
// remove command.
type MapPublishReply struct {
	// Key, when not empty, is set or removed instead of the client's key.
	Key string
	// Data, when not nil, is set instead of the client's data (ignored for
	// a removal).
	Data []byte
}

// publishToMap sets or removes a key of a map channel for a client
// (handlePublish decided it is one): decided by OnMapPublish, else by the
// namespace's map permissions.
func (c *Client) publishToMap(ctx context.Context, req *protocol.PublishRequest, r *rule, s *subscription) error {
	m := r.Map
	subscribed := s != nil
	if req.Removed == (len(req.Data) > 0) {
		return newError(protocol.ErrorBadRequest) // a removal without data, a value with
	}
	key, data := req.Key, req.Data
	decided := false
	if fn := c.hub.cfg.Handlers.OnMapPublish; fn != nil {
		mr, err := fn(ctx, c, MapPublishEvent{Channel: req.Channel, Key: req.Key, Data: req.Data, Removed: req.Removed})
		if decided = !errors.Is(err, ErrUseDefault); decided {
			if err != nil {
				return err
			}
			if mr.Key != "" {
				key = mr.Key
			}
			if mr.Data != nil && !req.Removed {
				data = mr.Data
			}
		}
	}
	if !decided {
		if req.Removed {
			if !c.hasPermission(m.removeGrant(), subscribed) {
				return newError(protocol.ErrorPermissionDenied)
			}
		} else if !c.hasPermission(m.publishGrant(), subscribed) {
			return newError(protocol.ErrorPermissionDenied)
		}
		switch m.ClientKey {
		case MapKeyClientID:
			key = c.id
		case MapKeyUserID:
			key = c.User()
		}
	}
	if e := checkMapKey(key); e != nil {
		return e
	}
	pub := &engine.Publication{Key: key, Removed: req.Removed, Info: c.clientInfo(s.channelInfo())}
	var added bool
	if !req.Removed {
		pub.Data = data
		var e *Error
		if added, e = c.takeMapKey(req.Channel, key, m.maxKeysPerClient()); e != nil {
			return e
		}
	}
	_, err := c.hub.mapPublish(ctx, req.Channel, r, pub)
	if req.Removed && err == nil || added && err != nil {
		c.releaseMapKey(req.Channel, key)
	}
	return err
}

// checkMapKey refuses an empty key, one longer than MaxMapKeyLength, and
// one with control characters (keys reach engine keys and logs).
func checkMapKey(key string) *Error {
	if key == "" || len(key) > MaxMapKeyLength || hasControl(key) {
		return newError(protocol.ErrorBadRequest)
	}
	return nil
}

// mapPublish records a change of a map channel with its namespace's
// options.
func (h *Hub) mapPublish(ctx context.Context, ch string, r *rule, pub *engine.Publication) (engine.StreamPosition, error) {
	return h.mapPublishWith(ctx, ch, r, pub, r.Map.publishOptions())
}

func (h *Hub) mapPublishWith(ctx context.Context, ch string, r *rule, pub *engine.Publication, opts engine.MapPublishOptions) (engine.StreamPosition, error) {
	if len(pub.Data) > 0 { // a key may carry its Info alone (presence)
		if e := h.checkPublicationData(ch, r, pub.Data); e != nil {
			return engine.StreamPosition{}, e
		}
	}
	if e := h.shedPublish(); e != nil {
		return engine.StreamPosition{}, e
	}
	mb, e := h.mapBroker()
	if e != nil {
		return engine.StreamPosition{}, e
	}
	start := time.Now()
	defer func() { h.metrics.publishDuration.Observe(time.Since(start).Seconds()) }()
	sp, err := mb.MapPublish(ctx, ch, pub, opts)
	if e := mapKeyLimitError(ch, err, opts.MaxKeys); e != nil {
		return sp, e
	}
	if err != nil {
		return sp, fmt.Errorf("map publish to %q: %w", ch, err)
	}
	h.published.Add(1)
	return sp, nil
}

// MapChange is what a server map publish or remove may carry besides
// the key and its value.
type MapChange struct {
	// Tags go with the change to subscribers' tags filters (bounded by
	// the namespace's TagsMaxSize). A removal without tags reaches every
	// filtered subscriber (see passesFilter).
	Tags map[string]string
	// KeyMode makes a publication conditional (engine.MapKeyIfNew,
	// engine.MapKeyIfExists): a refused one changes nothing and fails with
	// an error that is engine.ErrMapKeyExists or engine.ErrMapKeyNotFound
	// (errors.Is). Removals ignore it.
	KeyMode engine.MapKeyMode
	// Version, when positive, orders the changes of the key within
	// VersionEpoch: one not above the key's fails with an error that is
	// engine.ErrMapVersion (errors.Is) and changes nothing.
	Version      uint64
	VersionEpoch string
}

// MapPublish sets key of the map channel ch to data, as the server (no
// client info), with the channel's namespace options. The namespace must
// be a map one; data must be of its publication data format.
func (h *Hub) MapPublish(ctx context.Context, ch, key string, data []byte) (engine.StreamPosition, error) {
	return h.MapPublishWith(ctx, ch, key, data, MapChange{})
}

// MapPublishWith is MapPublish with what the change carries besides.
func (h *Hub) MapPublishWith(ctx context.Context, ch, key string, data []byte, m MapChange) (engine.StreamPosition, error) {
	r, err := h.mapRule(ch, key, m)
	if err != nil {
		return engine.StreamPosition{}, err
	}
	opts := r.Map.publishOptions()
	opts.KeyMode = m.KeyMode
	opts.Version, opts.VersionEpoch = m.Version, m.VersionEpoch
	return h.mapPublishWith(ctx, ch, r, &engine.Publication{Key: key, Data: data, Tags: m.Tags}, opts)
}

// MapRemove removes key from the map channel ch, as MapPublish.
func (h *Hub) MapRemove(ctx context.Context, ch, key string) (engine.StreamPosition, error) {
	return h.MapRemoveWith(ctx, ch, key, MapChange{})
}

// MapRemoveWith is MapRemove with what the change carries besides.
func (h *Hub) MapRemoveWith(ctx context.Context, ch, key string, m MapChange) (engine.StreamPosition, error) {
	r, err := h.mapRule(ch, key, m)
	if err != nil {
		return engine.StreamPosition{}, err
	}
	return h.mapPublish(ctx, ch, r, &engine.Publication{Key: key, Removed: true, Tags: m.Tags})
}

func (h *Hub) mapRule(ch, key string, m MapChange) (*rule, error) {
	r, _, err := h.mapChannelRule(ch)
	if err != nil {
		return nil, err
	}
	if e := checkMapKey(key); e != nil {
		return nil, e
	}
	if err := r.checkTags(m.Tags); err != nil {
		return nil, err
	}
	if !m.KeyMode.Valid() {
		return nil, &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("key_mode %q: want %s or %s (or empty)", m.KeyMode, engine.MapKeyIfNew, engine.MapKeyIfExists)}
	}
	return r, nil
}

// removeMapClientKey removes the key named by the client's id from a map
// channel it left (MapOptions.RemoveClientOnUnsubscribe).
func (c *Client) removeMapClientKey(ctx context.Context, s *subscription) {
	opts := s.rule.Map.publishOptions()
	opts.SkipMissingRemove = true // most clients never set their key
	if _, err := c.hub.mapPublishWith(ctx, s.channel, s.rule, &engine.Publication{Key: c.id, Removed: true}, opts); err != nil {
		c.logger().Error("remove the client's map key", "channel", s.channel, "error", err)
	}
}
