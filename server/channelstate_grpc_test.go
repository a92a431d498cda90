package server

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

// stateGRPCBackend is a gRPC state proxy that hands on every event.
type stateGRPCBackend struct {
	proxyproto.UnimplementedCentrifugoProxyServer
	events chan *proxyproto.ChannelEvent
}

func (b *stateGRPCBackend) NotifyChannelState(_ context.Context, r *proxyproto.NotifyChannelStateRequest) (*proxyproto.NotifyChannelStateResponse, error) {
	for _, e := range r.Events {
		b.events <- e
	}
	return &proxyproto.NotifyChannelStateResponse{Result: &proxyproto.NotifyChannelStateResult{}}, nil
}

// next returns the next event of ch, keeping the others' order per
// channel in pending.
func (b *stateGRPCBackend) next(t *testing.T, pending map[string][]string, ch string) string {
	t.Helper()
	for len(pending[ch]) == 0 {
		select {
		case e := <-b.events:
			pending[e.Channel] = append(pending[e.Channel], e.Type)
		case <-time.After(20 * time.Second):
			t.Fatalf("no event of %s (pending %v)", ch, pending)
		}
	}
	typ := pending[ch][0]
	pending[ch] = pending[ch][1:]
	return typ
}

// TestChannelStateRedisGRPC runs two nodes in this process on Redis with a
// gRPC state proxy and WebSocket clients on both: one occupied event per
// channel whichever node subscribes, a stopped node's lone channel vacated
// (the node releases its channels as it stops; a killed one is
// TestChannelStateNodeKilled's), the shared one when its last subscriber
// leaves.
func TestChannelStateRedisGRPC(t *testing.T) {
	b := &stateGRPCBackend{events: make(chan *proxyproto.ChannelEvent, 64)}
	gs := grpc.NewServer()
	proxyproto.RegisterCentrifugoProxyServer(gs, b)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	cfg := config.Default()
	networkedEngines()["redis"](t, &cfg)
	cfg.Proxies = []config.ProxyEndpointConfig{{Name: "state", URL: "grpc://" + lis.Addr().String(), Timeout: 2 * time.Second}}
	cfg.Channel.StateProxy = "state"
	cfg.Channel.State.ChannelStateConfig = hub.ChannelStateConfig{VacatedEventDelay: 200 * time.Millisecond}
	cfg.Channel.Namespaces = []config.Namespace{{Namespace: hub.Namespace{Name: "cs", NamespaceOptions: hub.NamespaceOptions{
		AllowSubscribeForClient: true, StateEvents: true,
	}}}}
	var nodes []*Server
	for range 2 {
		s := startServer(t, cfg)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		nodes = append(nodes, s)
	}
	c1, c2 := mustDial(t, nodes[0], "u1"), mustDial(t, nodes[1], "u2")
	c1.mustSubscribe(t, "cs:shared")
	c2.mustSubscribe(t, "cs:shared")
	c2.mustSubscribe(t, "cs:only2")
	pending := map[string][]string{}
	for _, ch := range []string{"cs:shared", "cs:only2"} {
		if got := b.next(t, pending, ch); got != hub.ChannelOccupied {
			t.Fatalf("%s: %s, want occupied", ch, got)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := nodes[1].Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.next(t, pending, "cs:only2"); got != hub.ChannelVacated {
		t.Fatalf("cs:only2 after its node stopped: %s, want vacated", got)
	}
	id, err := c1.Send(map[string]any{"unsubscribe": map[string]string{"channel": "cs:shared"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.AwaitReply(id, time.Now().Add(10*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	// Had node 2's stop vacated cs:shared too, that event would come here.
	if got := b.next(t, pending, "cs:shared"); got != hub.ChannelVacated {
		t.Fatalf("cs:shared: %s, want vacated", got)
	}
	testenv.Eventually(t, "no event left", 5*time.Second, func() bool { return len(b.events) == 0 })
	for ch, rest := range pending {
		if len(rest) > 0 {
			t.Errorf("%s: more events %v", ch, rest)
		}
	}
}
