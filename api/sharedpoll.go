package api

import (
	"context"
	"encoding/json"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

// shared_poll_publish: a new version of a key of a shared poll channel,
// pushed at once to the connections tracking it on every node. The fields
// are Centrifugo 6.9.1's (internal/apiproto/api.proto,
// SharedPollPublishRequest).

type sharedPollPublishRequest struct {
	Channel string          `json:"channel"`
	Key     string          `json:"key"`
	Data    json.RawMessage `json:"data"`
	B64Data string          `json:"b64data"`
	Version uint64          `json:"version"`
	Epoch   string          `json:"epoch"`
}

func (a *handler) sharedPollPublish(ctx context.Context, req *sharedPollPublishRequest) (*emptyResult, *Error) {
	switch {
	case req.Channel == "":
		return nil, badRequest("channel required")
	case req.Key == "":
		return nil, badRequest("key required")
	case req.Version == 0:
		return nil, badRequest("version required: a shared poll publish sets a version of the key, above 0")
	}
	data, e := payload(req.Data, req.B64Data)
	if e != nil {
		return nil, e
	}
	if err := a.hub.SharedPollPublish(ctx, req.Channel, req.Key, data, req.Version, req.Epoch); err != nil {
		return nil, a.fromHub(ctx, "shared_poll_publish", req.Channel, "shared_poll.publish_enabled", err)
	}
	return &emptyResult{}, nil
}

func fromPBSharedPollPublish(r *apiproto.SharedPollPublishRequest) *sharedPollPublishRequest {
	return &sharedPollPublishRequest{Channel: r.GetChannel(), Key: r.GetKey(), Data: r.GetData(), B64Data: r.GetB64Data(), Version: r.GetVersion(), Epoch: r.GetEpoch()}
}
