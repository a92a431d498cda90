package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestShutdown(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: openChannels()})
	js := n.dial(t)
	js.Connect("u")
	js.MustSubscribe(2, "a", "")
	pb := n.dialProtobuf(t)
	pb.Connect("v")
	pending := n.dial(t) // never sends connect
	testenv.Eventually(t, "two clients", 5*time.Second, func() bool { return n.hub.NumClients() == 2 })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.hub.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	js.ExpectClose(3001, "shutdown")
	pb.ExpectClose(3001, "shutdown")
	pending.ExpectClose(3001, "shutdown")
	if n.hub.NumClients() != 0 || n.hub.NumSubscriptions() != 0 {
		t.Fatalf("after shutdown: %d clients, %d subscriptions", n.hub.NumClients(), n.hub.NumSubscriptions())
	}
	// Connections that arrive during shutdown are closed at once.
	late := n.dial(t)
	late.ExpectClose(3001, "shutdown")
	if err := n.hub.Shutdown(ctx); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
}
