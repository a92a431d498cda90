package hub

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// controlSharedPoll carries a shared_poll_publish to every node: each
// pushes the new version to the connections tracking the key there.
type controlSharedPoll struct {
	Channel string `json:"channel"`
	Key     string `json:"key"`
	Version uint64 `json:"version"`
	Epoch   string `json:"epoch,omitempty"`
	Data    []byte `json:"data,omitempty"`
}

// SharedPollPublish pushes version of key in the shared poll channel ch at
// once, on every node, without waiting for the next poll: connections
// tracking the key with an older version receive data. The namespace must
// have SharedPollOptions.PublishEnabled (error 108 otherwise) and the
// versioned mode; a channel of another type is error 107, as are an empty
// key and version 0 (the checks of Centrifugo 6.9.1's
// internal/api/api.go, SharedPollPublish).
func (h *Hub) SharedPollPublish(ctx context.Context, ch, key string, data []byte, version uint64, epoch string) error {
	if ch == "" || key == "" || version == 0 || len(key) > MaxMapKeyLength {
		return newError(protocol.ErrorBadRequest)
	}
	r, err := h.resolveForServer(ch)
	if err != nil {
		return err
	}
	if r.SubscriptionType != SubscriptionSharedPoll {
		return &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("channel %q is not in a shared_poll namespace", ch)}
	}
	if !r.SharedPoll.PublishEnabled {
		return &Error{Code: protocol.ErrorNotAvailable, Message: fmt.Sprintf("publish_enabled is off in the namespace of channel %q", ch)}
	}
	return h.sendControl(ctx, controlMessage{SharedPoll: &controlSharedPoll{Channel: ch, Key: key, Version: version, Epoch: epoch, Data: data}})
}
