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
	// Change is what the change carries besides, as the server API's
	// map_publish and map_remove take it (a map publish proxy's tags,
	// key_mode, version, version_epoch and idempotency_key). A change its
	// conditions leave undone (key mode, version, idempotency key,
	// expected position) is answered to the client as done, as Centrifugo
	// answers a suppressed one (centrifuge v0.40.1 client.go: the publish
	// result is sent whatever MapPublish's Suppressed says).
	Change MapChange
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
	var change MapChange
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
			change = mr.Change
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
	if e := r.checkMapChange(change); e != nil {
		return e
	}
	pub := &engine.Publication{Key: key, Removed: req.Removed, Info: c.clientInfo(s.channelInfo()), Tags: change.Tags}
	var added bool
	if !req.Removed {
		pub.Data, pub.Delta = data, change.Delta
		var e *Error
		if added, e = c.takeMapKey(req.Channel, key, m.maxKeysPerClient()); e != nil {
			return e
		}
	}
	opts := c.hub.mapChangeOptions(r, change)
	opts.SkipMissingRemove = req.Removed // suppressed as key_not_found, see MapRemoveWith
	_, err := c.hub.mapPublishWith(ctx, req.Channel, r, pub, opts)
	if req.Removed && (err == nil || errors.Is(err, engine.ErrMapKeyNotFound)) || added && err != nil {
		c.releaseMapKey(req.Channel, key)
	}
	if MapSuppressReason(err) != "" {
		return nil // suppressed: answered as done (see MapPublishReply.Change)
	}
	return err
}

// MapSuppressReason is Centrifugo's suppress_reason for a map change
// that its conditions left undone (centrifuge v0.40.1 map_broker.go
// SuppressReason): the key mode, the version, the idempotency key or the
// expected position; "" for any other err. The server API answers these
// with suppressed and suppress_reason, not an error.
func MapSuppressReason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, engine.ErrMapKeyExists):
		return "key_exists"
	case errors.Is(err, engine.ErrMapKeyNotFound):
		return "key_not_found"
	case errors.Is(err, engine.ErrMapVersion):
		return "version"
	case errors.Is(err, engine.ErrMapDuplicate):
		return "idempotency"
	case errors.Is(err, engine.ErrMapPositionMismatch):
		return "position_mismatch"
	}
	return ""
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
	// IdempotencyKey, when not empty, makes the change at most once per
	// channel and key within Config.IdempotencyWindow, across the
	// cluster: a repeat changes nothing and fails with an error that is
	// engine.ErrMapDuplicate (errors.Is), returning the first change's
	// position. At most MaxIdempotencyKey bytes.
	IdempotencyKey string
	// ExpectedPosition, when set, makes the change a compare-and-swap:
	// it goes through only when the key was set by the change at
	// ExpectedPosition.Offset of the stream's epoch ExpectedPosition.Epoch
	// (the Offset of the key's entry and the Epoch that MapEntry reads).
	// Otherwise it changes nothing and fails with an error that is
	// engine.ErrMapPositionMismatch, returning the stream's position.
	ExpectedPosition *engine.StreamPosition
	// Delta sends the change as a Fossil delta against the key's previous
	// value to the subscribers that negotiated delta, as the namespace's
	// delta_publish does for every change (PublishOptions.Delta). Removals
	// carry no data and ignore it.
	Delta bool
}

// mapChangeOptions are the namespace's options for a change that carries
// m.
func (h *Hub) mapChangeOptions(r *rule, m MapChange) engine.MapPublishOptions {
	opts := r.Map.publishOptions()
	opts.KeyMode = m.KeyMode
	opts.Version, opts.VersionEpoch = m.Version, m.VersionEpoch
	opts.ExpectedPosition = m.ExpectedPosition
	if m.IdempotencyKey != "" {
		opts.IdempotencyKey, opts.IdempotentResultTTL = m.IdempotencyKey, h.cfg.IdempotencyWindow
	}
	return opts
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
	return h.mapPublishWith(ctx, ch, r, &engine.Publication{Key: key, Data: data, Tags: m.Tags, Delta: m.Delta}, h.mapChangeOptions(r, m))
}

// MapRemove removes key from the map channel ch, as MapPublish. A key
// that is not in the state fails with an error that is
// engine.ErrMapKeyNotFound (errors.Is), with the stream's position, and
// changes nothing.
func (h *Hub) MapRemove(ctx context.Context, ch, key string) (engine.StreamPosition, error) {
	return h.MapRemoveWith(ctx, ch, key, MapChange{})
}

// MapRemoveWith is MapRemove with what the change carries besides.
func (h *Hub) MapRemoveWith(ctx context.Context, ch, key string, m MapChange) (engine.StreamPosition, error) {
	r, err := h.mapRule(ch, key, m)
	if err != nil {
		return engine.StreamPosition{}, err
	}
	// Removals ignore the key mode and the version (engine.MapPublishOptions).
	// A key that is not in the state is not removed: nothing is appended
	// and the error is engine.ErrMapKeyNotFound, as Centrifugo suppresses
	// it with key_not_found (centrifuge v0.40.1 map_broker_memory.go).
	opts := h.mapChangeOptions(r, m)
	opts.SkipMissingRemove = true
	return h.mapPublishWith(ctx, ch, r, &engine.Publication{Key: key, Removed: true, Tags: m.Tags}, opts)
}

func (h *Hub) mapRule(ch, key string, m MapChange) (*rule, error) {
	r, _, err := h.mapChannelRule(ch)
	if err != nil {
		return nil, err
	}
	if e := checkMapKey(key); e != nil {
		return nil, e
	}
	if e := r.checkMapChange(m); e != nil {
		return nil, e
	}
	return r, nil
}

// checkMapChange refuses, with 107, tags beyond the namespace's bound, an
// unknown key mode and an idempotency key over MaxIdempotencyKey bytes.
func (r *rule) checkMapChange(m MapChange) error {
	if err := r.checkTags(m.Tags); err != nil {
		return err
	}
	if !m.KeyMode.Valid() {
		return &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("key_mode %q: want %s or %s (or empty)", m.KeyMode, engine.MapKeyIfNew, engine.MapKeyIfExists)}
	}
	if len(m.IdempotencyKey) > MaxIdempotencyKey {
		return &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("idempotency_key: %d bytes, at most %d", len(m.IdempotencyKey), MaxIdempotencyKey)}
	}
	return nil
}

// removeMapClientKey removes the key named by the client's id from a map
// channel it left (MapOptions.RemoveClientOnUnsubscribe).
func (c *Client) removeMapClientKey(ctx context.Context, s *subscription) {
	opts := s.rule.Map.publishOptions()
	opts.SkipMissingRemove = true // most clients never set their key
	_, err := c.hub.mapPublishWith(ctx, s.channel, s.rule, &engine.Publication{Key: c.id, Removed: true}, opts)
	if err != nil && !errors.Is(err, engine.ErrMapKeyNotFound) {
		c.logger().Error("remove the client's map key", "channel", s.channel, "error", err)
	}
}
