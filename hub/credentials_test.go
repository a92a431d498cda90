package hub_test

import (
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// A connection the server opened for itself connects with the credentials
// it was opened with: no token, no handler, and its server-side channels
// need no client permission.
func TestTrustedCredentials(t *testing.T) {
	t.Parallel()
	// No namespace lets clients subscribe, and no anonymous access.
	n := startNodeMem(t, hub.Config{})
	c, client := n.openWith(t, hub.ConnInfo{Transport: "admin", Unidirectional: true,
		Credentials: &hub.ConnectReply{User: "admin", Channels: []string{"news"}}})
	client.Connect(&protocol.ConnectRequest{})
	m := c.ReadOne()
	res, _ := m["connect"].(map[string]any)
	if res == nil || res["subs"] == nil {
		t.Fatalf("trusted connect: want a result with the channel subscribed: %v", m)
	}
	if client.User() != "admin" {
		t.Fatalf("user %q, want admin", client.User())
	}
	// Without credentials the same connect is refused.
	bad, badClient := n.openWith(t, hub.ConnInfo{Transport: "admin", Unidirectional: true})
	badClient.Connect(&protocol.ConnectRequest{})
	bad.ExpectClose(3501, "")
}
