package proxy

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

// The channel state event: occupied and vacated events of the namespaces
// with state_proxy_enabled, in batches. The shapes are Centrifugo 6.9.1's
// (internal/proxyproto/proxy.proto, NotifyChannelStateRequest with its
// ChannelEvent list, and NotifyChannelStateResponse with an empty
// result); over HTTP their JSON form, as Centrifugo PRO documents it:
// {"events": [{"channel": "chat:index", "type": "occupied", "time_ms": 1697206286533}]}.

const eventChannelState = "state"

type notifyChannelStateRequest struct {
	Events []channelEvent `json:"events"`
}

type channelEvent struct {
	TimeMs  int64  `json:"time_ms"`
	Channel string `json:"channel"`
	Type    string `json:"type"`
}

type notifyChannelStateResult struct{}

// onChannelState sends a batch to the state proxy. Any failure, an error
// in the answer included, is returned, so the hub hands the same events
// over again later (Centrifugo PRO retries with backoff the same way).
func (r *Router) onChannelState(ctx context.Context, evs []hub.ChannelStateEvent) error {
	req := notifyChannelStateRequest{Events: make([]channelEvent, len(evs))}
	for i, e := range evs {
		req.Events[i] = channelEvent{TimeMs: e.TimeMs, Channel: e.Channel, Type: e.Type}
	}
	_, err := call(ctx, r.channelState, callInfo{event: eventChannelState}, req, func(*notifyChannelStateResult) (struct{}, error) {
		return struct{}{}, nil
	})
	if err != nil {
		return fmt.Errorf("state proxy %q: %w", r.channelState.Name, err)
	}
	return nil
}

// invokeChannelState is the gRPC call of a channel state batch.
func (g *grpcEndpoint) invokeChannelState(ctx context.Context, r notifyChannelStateRequest) (any, error) {
	req := &proxyproto.NotifyChannelStateRequest{Events: make([]*proxyproto.ChannelEvent, len(r.Events))}
	for i, e := range r.Events {
		req.Events[i] = &proxyproto.ChannelEvent{TimeMs: e.TimeMs, Channel: e.Channel, Type: e.Type}
	}
	resp, err := g.client.NotifyChannelState(ctx, req, g.opts...)
	if err != nil {
		return nil, err
	}
	env := &envelope[notifyChannelStateResult]{Error: grpcError(resp.GetError())}
	if resp.GetResult() != nil {
		env.Result = &notifyChannelStateResult{}
	}
	return env, nil
}
