package hub_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestNumPendingCountsUnauthenticated checks the count a server bounds
// unauthenticated connections with: every new connection counts until it
// connects or closes, and each leaves the count exactly once.
func TestNumPendingCountsUnauthenticated(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{})
	a, b, c := n.dial(t), n.dial(t), n.dial(t)
	testenv.Eventually(t, "three pending connections", 5*time.Second, func() bool { return n.hub.NumPending() == 3 })

	a.Connect("alice")
	if got, clients := n.hub.NumPending(), n.hub.NumClients(); got != 2 || clients != 1 {
		t.Fatalf("after one connect: pending %d, clients %d; want 2 and 1", got, clients)
	}
	b.Drop()
	testenv.Eventually(t, "a closed connection leaves the count", 5*time.Second, func() bool { return n.hub.NumPending() == 1 })
	// A refused connect closes the connection: it leaves the count too.
	c.Send(`{"id":1,"connect":{"token":"not-a-token"}}`)
	testenv.Eventually(t, "a refused connection leaves the count", 5*time.Second, func() bool { return n.hub.NumPending() == 0 })
	a.Drop()
	testenv.Eventually(t, "a connected client's close leaves pending at zero", 5*time.Second, func() bool {
		return n.hub.NumClients() == 0 && n.hub.NumPending() == 0
	})
}
