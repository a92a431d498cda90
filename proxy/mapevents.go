package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
)

// The map publish and map remove events, with Centrifugo's request and
// result fields. The result's tags, key_mode, version, version_epoch and
// idempotency_key go with the change as Centrifugo 6.9.1 applies them
// (internal/proxy/map_publish_handler.go, lines 127-159), delta included:
// the change goes as a delta to the subscribers that negotiated one, as
// the server API's map_publish with delta. score and stream_data, which
// Centrifugo 6.9.1 declares and never reads, fail the command (see
// unsupportedResult) rather than being dropped.

type mapPublishRequest struct {
	baseRequest
	User    string          `json:"user"`
	Channel string          `json:"channel"`
	Key     string          `json:"key"`
	Data    json.RawMessage `json:"data,omitempty"`
	B64Data string          `json:"b64data,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

type mapRemoveRequest struct {
	baseRequest
	User    string          `json:"user"`
	Channel string          `json:"channel"`
	Key     string          `json:"key"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

type mapPublishResult struct {
	Key     string          `json:"key"`
	Data    json.RawMessage `json:"data"`
	B64Data string          `json:"b64data"`

	Tags           map[string]string `json:"tags"`
	Score          int64             `json:"score"`
	KeyMode        string            `json:"key_mode"`
	StreamData     json.RawMessage   `json:"stream_data"`
	B64StreamData  string            `json:"b64stream_data"`
	IdempotencyKey string            `json:"idempotency_key"`
	Delta          bool              `json:"delta"`
	Version        uint64            `json:"version"`
	VersionEpoch   string            `json:"version_epoch"`
}

// unsupportedResult is the failure of a result that sets a field Herald
// does not implement: the backend's answer cannot be carried out as it
// meant, so the command fails (as for any unusable result) instead of
// going on without the field.
func unsupportedResult(field string) error {
	return fmt.Errorf("result field %s is not supported by Herald's map channels", field)
}

// unsupportedField names the first field of the result that Herald does
// not implement, or "".
func (r *mapPublishResult) unsupportedField() string {
	switch {
	case r.Score != 0:
		return "score"
	case len(r.StreamData) > 0 && string(r.StreamData) != "null", r.B64StreamData != "":
		return "stream_data"
	}
	return ""
}

// change is what the result makes the change carry besides the key and
// the value; the hub checks it as the server API's.
func (r *mapPublishResult) change() hub.MapChange {
	return hub.MapChange{Tags: r.Tags, KeyMode: engine.MapKeyMode(r.KeyMode), Version: r.Version, VersionEpoch: r.VersionEpoch, IdempotencyKey: r.IdempotencyKey, Delta: r.Delta}
}

// onMapPublish asks the backend of the channel's namespace about a map
// publish or remove; a namespace without that proxy is left to the next
// handler and the namespace's map permissions.
func (r *Router) onMapPublish(ctx context.Context, c *hub.Client, ev hub.MapPublishEvent) (hub.MapPublishReply, error) {
	ns := r.syntax.Namespace(ev.Channel)
	if ev.Removed {
		e := r.mapRemove[ns]
		if e == nil {
			return hub.MapPublishReply{}, hub.ErrUseDefault
		}
		req := mapRemoveRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Channel: ev.Channel, Key: ev.Key, Meta: e.meta(c)}
		return call(ctx, e, clientCall(eventMapRemove, c), req, func(res *mapPublishResult) (hub.MapPublishReply, error) {
			if res == nil {
				return hub.MapPublishReply{}, nil
			}
			// Centrifugo's MapRemoveResult has key, tags and idempotency_key.
			return hub.MapPublishReply{Key: res.Key, Change: hub.MapChange{Tags: res.Tags, IdempotencyKey: res.IdempotencyKey}}, nil
		})
	}
	e := r.mapPublish[ns]
	if e == nil {
		return hub.MapPublishReply{}, hub.ErrUseDefault
	}
	req := mapPublishRequest{baseRequest: e.base(c.ID(), c.Transport(), c.Protocol()), User: c.User(), Channel: ev.Channel, Key: ev.Key, Meta: e.meta(c)}
	req.Data, req.B64Data = e.putData(&req.baseRequest, ev.Data)
	return call(ctx, e, clientCall(eventMapPublish, c), req, func(res *mapPublishResult) (hub.MapPublishReply, error) {
		if res == nil {
			return hub.MapPublishReply{}, nil
		}
		if f := res.unsupportedField(); f != "" {
			return hub.MapPublishReply{}, unsupportedResult(f)
		}
		data, err := payload(res.Data, res.B64Data, c.Protocol(), "data")
		if err != nil {
			return hub.MapPublishReply{}, err
		}
		return hub.MapPublishReply{Key: res.Key, Data: data, Change: res.change()}, nil
	})
}
