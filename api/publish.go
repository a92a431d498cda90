package api

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/heraldhq/herald/hub"
)

func (a *handler) publish(ctx context.Context, req *publishRequest) (*publishResult, *Error) {
	if req.Channel == "" {
		return nil, badRequest("channel required")
	}
	data, e := payload(req.Data, req.B64Data)
	if e != nil {
		return nil, e
	}
	sp, err := a.hub.Publish(ctx, req.Channel, data, hub.PublishOptions{Tags: req.Tags, SkipHistory: req.SkipHistory, IdempotencyKey: req.IdempotencyKey, Delta: req.Delta})
	if err != nil {
		return nil, a.fromHub(ctx, "publish", req.Channel, "", err)
	}
	return &publishResult{Offset: sp.Offset, Epoch: sp.Epoch}, nil
}

// broadcast publishes the same data to every channel, concurrently; each
// channel's outcome is its own response, in the order of the request.
func (a *handler) broadcast(ctx context.Context, req *broadcastRequest) (*broadcastResult, *Error) {
	if len(req.Channels) == 0 {
		return nil, badRequest("channels required")
	}
	data, e := payload(req.Data, req.B64Data)
	if e != nil {
		return nil, e
	}
	// The key is per channel: a retried broadcast repeats on each.
	opts := hub.PublishOptions{Tags: req.Tags, SkipHistory: req.SkipHistory, IdempotencyKey: req.IdempotencyKey, Delta: req.Delta}
	res := &broadcastResult{Responses: make([]publishResponse, len(req.Channels))}
	forEach(len(req.Channels), maxConcurrency, func(i int) {
		ch, out := req.Channels[i], &res.Responses[i]
		if ch == "" {
			out.Error = badRequest("channels[%d]: channel required", i)
			return
		}
		// The hub and the engine only read data and tags, so every
		// channel shares them.
		sp, err := a.hub.Publish(ctx, ch, data, opts)
		if err != nil {
			out.Error = a.fromHub(ctx, "broadcast", ch, "", err)
			return
		}
		out.Result = &publishResult{Offset: sp.Offset, Epoch: sp.Epoch}
	})
	return res, nil
}

// payload returns the publication's bytes: b64data decoded when set,
// otherwise data (JSON, already validated with the body).
func payload(data json.RawMessage, b64 string) ([]byte, *Error) {
	if b64 != "" {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, badRequest("b64data: %v", err)
		}
		return b, nil
	}
	if len(data) == 0 {
		return nil, badRequest("data required (or b64data)")
	}
	return data, nil
}
