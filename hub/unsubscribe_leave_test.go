package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/transport/websocket"
)

// heldRemoveEngine is the memory engine with RemovePresence held until the
// test releases it, and given up when its context ends, as a database call
// is.
type heldRemoveEngine struct {
	*memory.Engine
	entered chan struct{}
	release chan struct{}
}

func (e *heldRemoveEngine) RemovePresence(ctx context.Context, ch, client string) error {
	select {
	case e.entered <- struct{}{}:
	default:
	}
	select {
	case <-e.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return e.Engine.RemovePresence(ctx, ch, client)
}

// A client that unsubscribes and goes away before the engine has removed
// its presence must not leave that presence behind until its TTL: the
// removal outlives the connection. (centrifuge-js's "subscribe and
// unsubscribe loop" on two PostgreSQL nodes counted such entries.)
func TestUnsubscribeThenDisconnectRemovesPresence(t *testing.T) {
	eng := &heldRemoveEngine{Engine: memory.New(memory.Config{}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	n := startNodeWS(t, hub.Config{Engine: eng, Channels: isolationChannels()}, websocket.Config{})
	c := n.dial(t)
	c.Connect("u1")
	c.MustSubscribe(2, "room", "")
	c.Send(`{"id":3,"unsubscribe":{"channel":"room"}}`)
	select {
	case <-eng.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the unsubscribe did not reach RemovePresence")
	}
	c.Drop()
	testenv.Eventually(t, "the client gone", 5*time.Second, func() bool { return n.hub.NumClients() == 0 })
	close(eng.release)
	testenv.Eventually(t, "presence of room empty", 5*time.Second, func() bool {
		p, err := eng.Engine.Presence(context.Background(), "room")
		return err == nil && len(p) == 0
	})
}
