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

func (b *grpcBackend) SharedPollRefresh(ctx context.Context, r *proxyproto.SharedPollRefreshRequest) (*proxyproto.SharedPollRefreshResponse, error) {
	out, err := b.serve(ctx, "SharedPollRefresh", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.SharedPollRefreshResponse), nil
}

func sharedPollRouter(t *testing.T, url string) hub.Handlers {
	t.Helper()
	r, err := proxy.New(proxy.Config{
		Endpoints:         []proxy.Endpoint{{Name: "poll", URL: url, Timeout: 2 * time.Second}},
		SharedPollRefresh: map[string]string{"scores": "poll"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r.Handlers()
}

var pollEvent = hub.SharedPollRefreshEvent{Channel: "scores:m1", Items: []hub.SharedPollItem{{Key: "home", Version: 3}, {Key: "away"}}}

func checkPollReply(t *testing.T, got hub.SharedPollRefreshReply, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != "e1" || len(got.Items) != 2 || got.Items[0].Key != "away" || string(got.Items[0].Data) != `{"goals":1}` ||
		got.Items[0].Version != 4 || !got.Items[1].Removed {
		t.Fatalf("reply: %+v", got)
	}
}

// TestSharedPollRefreshHTTP: the request and result of Centrifugo's HTTP
// shape, and a namespace without the proxy left to the next handler.
func TestSharedPollRefreshHTTP(t *testing.T) {
	b := newBackend(t)
	b.answer("/refresh", `{"result":{"items":[{"key":"away","data":{"goals":1},"version":4},{"key":"old","removed":true}],"epoch":"e1"}}`)
	h := sharedPollRouter(t, b.url("/refresh"))
	got, err := h.OnSharedPollRefresh(context.Background(), pollEvent)
	checkPollReply(t, got, err)
	c := b.next()
	items, _ := c.body["items"].([]any)
	if c.body["channel"] != "scores:m1" || len(items) != 2 || items[0].(map[string]any)["version"] != float64(3) {
		t.Fatalf("request: %v", c.body)
	}
	if _, ok := items[1].(map[string]any)["version"]; ok {
		t.Fatalf("version 0 sent: %v", c.body)
	}
	if _, err := h.OnSharedPollRefresh(context.Background(), hub.SharedPollRefreshEvent{Channel: "other:x"}); err != hub.ErrUseDefault {
		t.Fatalf("another namespace: %v", err)
	}
}

// TestSharedPollRefreshGRPC: the SharedPollRefresh rpc.
func TestSharedPollRefreshGRPC(t *testing.T) {
	b := newGRPCBackend(t)
	b.answer("SharedPollRefresh", &proxyproto.SharedPollRefreshResponse{Result: &proxyproto.SharedPollRefreshResult{
		Epoch: "e1",
		Items: []*proxyproto.SharedPollRefreshResultItem{{Key: "away", Data: []byte(`{"goals":1}`), Version: 4}, {Key: "old", Removed: true}},
	}})
	h := sharedPollRouter(t, b.url())
	got, err := h.OnSharedPollRefresh(context.Background(), pollEvent)
	checkPollReply(t, got, err)
	c := b.next()
	want := &proxyproto.SharedPollRefreshRequest{Channel: "scores:m1", Items: []*proxyproto.SharedPollRefreshItem{{Key: "home", Version: 3}, {Key: "away"}}}
	if !proto.Equal(c.req, want) {
		t.Fatalf("request: %v", c.req)
	}
}
