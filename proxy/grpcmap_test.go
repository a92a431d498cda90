package proxy_test

import (
	"context"
	"testing"

	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

func (b *grpcBackend) MapPublish(ctx context.Context, r *proxyproto.MapPublishRequest) (*proxyproto.MapPublishResponse, error) {
	out, err := b.serve(ctx, "MapPublish", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.MapPublishResponse), nil
}

func (b *grpcBackend) MapRemove(ctx context.Context, r *proxyproto.MapRemoveRequest) (*proxyproto.MapRemoveResponse, error) {
	out, err := b.serve(ctx, "MapRemove", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.MapRemoveResponse), nil
}

// TestGRPCMapPublishAndRemove: map publish and remove proxies served by a
// gRPC backend (proxy.proto's MapPublish and MapRemove, as Centrifugo 6.9
// declares them) decide as over HTTP: the backend receives the client's
// key and data, may replace both, set the change's conditions and tags,
// or refuse, and a result field Herald does not implement fails the
// command.
func TestGRPCMapPublishAndRemove(t *testing.T) {
	t.Parallel()
	b := newGRPCBackend(t)
	n := startMapNode(t, b.url(), b.url())
	c := n.dial(nil)
	c.Connect("u1")

	b.answer("MapPublish", &proxyproto.MapPublishResponse{Result: &proxyproto.MapPublishResult{Key: "u1:pos", Data: []byte(`{"x":2}`)}})
	if m := c.Call(`{"id":2,"publish":{"channel":"board:a","type":1,"key":"pos","data":{"x":1}}}`); m["publish"] == nil {
		t.Fatalf("map publish: %v", m)
	}
	got := b.next()
	req, ok := got.req.(*proxyproto.MapPublishRequest)
	if !ok || got.method != "MapPublish" || req.Channel != "board:a" || req.Key != "pos" || req.User != "u1" ||
		string(req.Data) != `{"x":1}` || req.Client == "" || req.Transport != "websocket" || req.Encoding != "json" {
		t.Fatalf("map publish request: %s %v", got.method, got.req)
	}
	page, err := n.hub.MapState(t.Context(), "board:a", "", 0)
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Key != "u1:pos" || string(page.Entries[0].Data) != `{"x":2}` {
		t.Fatalf("state after the proxy's rewrite: %+v, %v", page.Entries, err)
	}

	b.answer("MapRemove", &proxyproto.MapRemoveResponse{Result: &proxyproto.MapRemoveResult{Key: "u1:pos"}})
	if m := c.Call(`{"id":3,"publish":{"channel":"board:a","type":1,"key":"pos","removed":true}}`); m["publish"] == nil {
		t.Fatalf("map remove: %v", m)
	}
	got = b.next()
	if rreq, ok := got.req.(*proxyproto.MapRemoveRequest); !ok || rreq.Key != "pos" || rreq.Channel != "board:a" || rreq.User != "u1" {
		t.Fatalf("map remove request: %s %v", got.method, got.req)
	}
	if st, err := n.hub.MapStats(t.Context(), "board:a"); err != nil || st.NumKeys != 0 {
		t.Fatalf("keys after the remove: %+v, %v", st, err)
	}

	// Refusals and disconnects come through as over HTTP.
	b.answer("MapPublish", &proxyproto.MapPublishResponse{Error: &proxyproto.Error{Code: 1001, Message: "not yours"}})
	jsonclient.WantError(t, c.Call(`{"id":4,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`), 1001)
	b.next()
	b.answer("MapRemove", &proxyproto.MapRemoveResponse{Error: &proxyproto.Error{Code: 1002, Message: "keep it"}})
	jsonclient.WantError(t, c.Call(`{"id":5,"publish":{"channel":"board:a","type":1,"key":"k","removed":true}}`), 1002)
	b.next()
	// The result's conditions and tags go with the change; score, which
	// Centrifugo declares and never reads, fails the command (100).
	b.answer("MapPublish", &proxyproto.MapPublishResponse{Result: &proxyproto.MapPublishResult{KeyMode: "if_exists", Tags: map[string]string{"a": "b"}}})
	if m := c.Call(`{"id":6,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`); m["publish"] == nil {
		t.Fatalf("map publish suppressed by key_mode: %v", m)
	}
	b.next()
	if st, err := n.hub.MapStats(t.Context(), "board:a"); err != nil || st.NumKeys != 0 {
		t.Fatalf("keys after an if_exists publish of a missing key: %+v, %v", st, err)
	}
	// The key must be there: the removal of a missing one is suppressed.
	if _, err := n.hub.MapPublish(t.Context(), "board:a", "k", []byte(`{}`)); err != nil {
		t.Fatalf("map publish: %v", err)
	}
	b.answer("MapRemove", &proxyproto.MapRemoveResponse{Result: &proxyproto.MapRemoveResult{Tags: map[string]string{"a": "b"}, IdempotencyKey: "r1"}})
	if m := c.Call(`{"id":7,"publish":{"channel":"board:a","type":1,"key":"k","removed":true}}`); m["publish"] == nil {
		t.Fatalf("map remove with tags: %v", m)
	}
	b.next()
	if pubs, _, err := n.hub.MapStream(t.Context(), "board:a", nil, -1, true); err != nil || len(pubs) == 0 || pubs[0].Tags["a"] != "b" {
		t.Fatalf("stream: %+v, %v; want the removal with the proxy's tags last", pubs, err)
	}
	b.answer("MapPublish", &proxyproto.MapPublishResponse{Result: &proxyproto.MapPublishResult{Score: 3}})
	jsonclient.WantError(t, c.Call(`{"id":9,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`), 100)
	b.next()
	b.answer("MapPublish", &proxyproto.MapPublishResponse{Disconnect: &proxyproto.Disconnect{Code: 4100, Reason: "go away"}})
	c.Send(`{"id":8,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`)
	b.next()
	c.ExpectClose(4100, "go away")
}
