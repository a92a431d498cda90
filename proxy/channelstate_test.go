package proxy_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

func (b *grpcBackend) NotifyChannelState(ctx context.Context, r *proxyproto.NotifyChannelStateRequest) (*proxyproto.NotifyChannelStateResponse, error) {
	out, err := b.serve(ctx, "NotifyChannelState", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.NotifyChannelStateResponse), nil
}

func channelStateRouter(t *testing.T, url string) hub.Handlers {
	t.Helper()
	r, err := proxy.New(proxy.Config{
		Endpoints:    []proxy.Endpoint{{Name: "state", URL: url, Timeout: 2 * time.Second}},
		ChannelState: "state",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r.Handlers()
}

var stateBatch = []hub.ChannelStateEvent{
	{Channel: "chat:index", Type: hub.ChannelOccupied, TimeMs: 1697206286533},
	{Channel: "chat:index", Type: hub.ChannelVacated, TimeMs: 1697206291533},
}

// TestChannelStateHTTP: Centrifugo PRO's JSON request, an empty result
// taken as done, and an error answer returned so the hub retries.
func TestChannelStateHTTP(t *testing.T) {
	b := newBackend(t)
	b.answer("/state", `{"result":{}}`)
	h := channelStateRouter(t, b.url("/state"))
	if err := h.OnChannelState(context.Background(), stateBatch); err != nil {
		t.Fatal(err)
	}
	c := b.next()
	evs, _ := c.body["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("request: %v", c.body)
	}
	first := evs[0].(map[string]any)
	if first["channel"] != "chat:index" || first["type"] != "occupied" || first["time_ms"] != float64(1697206286533) {
		t.Fatalf("first event: %v", first)
	}
	b.answer("/state", `{"error":{"code":100,"message":"busy"}}`)
	if err := h.OnChannelState(context.Background(), stateBatch); err == nil {
		t.Fatal("an error answer was taken as delivered")
	}
}

// TestChannelStateGRPC: the NotifyChannelState rpc.
func TestChannelStateGRPC(t *testing.T) {
	b := newGRPCBackend(t)
	b.answer("NotifyChannelState", &proxyproto.NotifyChannelStateResponse{Result: &proxyproto.NotifyChannelStateResult{}})
	h := channelStateRouter(t, b.url())
	if err := h.OnChannelState(context.Background(), stateBatch); err != nil {
		t.Fatal(err)
	}
	c := b.next()
	want := &proxyproto.NotifyChannelStateRequest{Events: []*proxyproto.ChannelEvent{
		{Channel: "chat:index", Type: "occupied", TimeMs: 1697206286533},
		{Channel: "chat:index", Type: "vacated", TimeMs: 1697206291533},
	}}
	if !proto.Equal(c.req, want) {
		t.Fatalf("request: %v", c.req)
	}
	b.answer("NotifyChannelState", &proxyproto.NotifyChannelStateResponse{Error: &proxyproto.Error{Code: 100, Message: "busy"}})
	if err := h.OnChannelState(context.Background(), stateBatch); err == nil {
		t.Fatal("an error answer was taken as delivered")
	}
}
