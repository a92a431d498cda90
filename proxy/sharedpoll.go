package proxy

import (
	"context"
	"encoding/json"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

// The shared poll refresh event: a node asks the backend of a shared_poll
// namespace for the current data of the keys tracked on it. The shapes
// are Centrifugo 6.9.1's (internal/proxyproto/proxy.proto,
// SharedPollRefreshRequest and SharedPollRefreshResponse; over HTTP their
// JSON form, with data and prev_data as raw JSON).

const eventSharedPollRefresh = "shared_poll_refresh"

type sharedPollRefreshRequest struct {
	Channel string                  `json:"channel"`
	Items   []sharedPollRefreshItem `json:"items"`
}

type sharedPollRefreshItem struct {
	Key     string `json:"key"`
	Version uint64 `json:"version,omitempty"`
}

type sharedPollRefreshResult struct {
	Items []sharedPollResultItem `json:"items"`
	Epoch string                 `json:"epoch"`
}

type sharedPollResultItem struct {
	Key      string          `json:"key"`
	Data     json.RawMessage `json:"data"`
	Version  uint64          `json:"version"`
	Removed  bool            `json:"removed"`
	PrevData json.RawMessage `json:"prev_data"`
}

// onSharedPollRefresh asks the refresh proxy of the channel's namespace;
// a namespace without one is left to the next handler.
func (r *Router) onSharedPollRefresh(ctx context.Context, ev hub.SharedPollRefreshEvent) (hub.SharedPollRefreshReply, error) {
	e := r.sharedPoll[hub.ChannelNamespace(ev.Channel)]
	if e == nil {
		return hub.SharedPollRefreshReply{}, hub.ErrUseDefault
	}
	req := sharedPollRefreshRequest{Channel: ev.Channel, Items: make([]sharedPollRefreshItem, len(ev.Items))}
	for i, it := range ev.Items {
		req.Items[i] = sharedPollRefreshItem{Key: it.Key, Version: it.Version}
	}
	return call(ctx, e, callInfo{event: eventSharedPollRefresh}, req, func(res *sharedPollRefreshResult) (hub.SharedPollRefreshReply, error) {
		if res == nil {
			return hub.SharedPollRefreshReply{}, nil
		}
		out := hub.SharedPollRefreshReply{Epoch: res.Epoch, Items: make([]hub.SharedPollRefreshItem, len(res.Items))}
		for i, it := range res.Items {
			out.Items[i] = hub.SharedPollRefreshItem{Key: it.Key, Data: rawOrNil(it.Data), Version: it.Version, Removed: it.Removed, PrevData: rawOrNil(it.PrevData)}
		}
		return out, nil
	})
}

func rawOrNil(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// invokeSharedPollRefresh is the gRPC call of a shared poll refresh.
func (g *grpcEndpoint) invokeSharedPollRefresh(ctx context.Context, r sharedPollRefreshRequest) (any, error) {
	req := &proxyproto.SharedPollRefreshRequest{Channel: r.Channel, Items: make([]*proxyproto.SharedPollRefreshItem, len(r.Items))}
	for i, it := range r.Items {
		req.Items[i] = &proxyproto.SharedPollRefreshItem{Key: it.Key, Version: it.Version}
	}
	resp, err := g.client.SharedPollRefresh(ctx, req, g.opts...)
	if err != nil {
		return nil, err
	}
	env := &envelope[sharedPollRefreshResult]{Error: grpcError(resp.GetError())}
	if res := resp.GetResult(); res != nil {
		out := &sharedPollRefreshResult{Epoch: res.Epoch, Items: make([]sharedPollResultItem, len(res.Items))}
		for i, it := range res.Items {
			out.Items[i] = sharedPollResultItem{Key: it.GetKey(), Data: it.GetData(), Version: it.GetVersion(), Removed: it.GetRemoved(), PrevData: it.GetPrevData()}
		}
		env.Result = out
	}
	return env, nil
}
