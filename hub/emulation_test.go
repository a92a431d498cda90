package hub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// openWith connects a JSON client in memory with conn info, as an HTTP
// transport would open it.
func (n *node) openWith(t *testing.T, info hub.ConnInfo) (*rawClient, *hub.Client) {
	t.Helper()
	conn := hubtest.NewConn(protocol.TypeJSON)
	client := n.hub.Open(conn, info)
	conn.Attach(client)
	t.Cleanup(conn.Drop)
	return jsonclient.New(t, wire.Mem(conn), testSecret), client
}

func TestEmulationSession(t *testing.T) {
	t.Parallel()
	n := startNodeMem(t, hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}}})
	s1 := n.hub.NewSession()
	c, client := n.openWith(t, hub.ConnInfo{Transport: hub.TransportSSE, Session: s1, Header: map[string][]string{"X-Test": {"1"}}})
	res := c.Connect("u")
	if res["session"] != s1 || res["node"] != n.hub.NodeID() {
		t.Fatalf("connect result of an emulated session: %v", res)
	}
	if client.Transport() != hub.TransportSSE || client.Session() != s1 || client.Header()["X-Test"][0] != "1" {
		t.Fatalf("client conn info: %q %q %v", client.Transport(), client.Session(), client.Header())
	}
	ctx := context.Background()
	// Later commands arrive through the emulation endpoint, not the stream.
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: n.hub.NodeID(), Session: s1, Data: []byte(`{"id":2,"subscribe":{"channel":"news"}}`)}); err != nil {
		t.Fatal(err)
	}
	if m := c.Reply(2); m["subscribe"] == nil {
		t.Fatalf("subscribe through emulation: %v", m)
	}
	// No node named means this one.
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Session: s1, Data: []byte(`{"id":3,"unsubscribe":{"channel":"news"}}`)}); err != nil {
		t.Fatal(err)
	}
	if m := c.Reply(3); m["unsubscribe"] == nil {
		t.Fatalf("unsubscribe through emulation: %v", m)
	}
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Session: "nope", Data: []byte(`{}`)}); !errors.Is(err, hub.ErrUnknownSession) {
		t.Fatalf("unknown session: %v", err)
	}
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Node: "no-such-node", Session: s1, Data: []byte(`{}`)}); !errors.Is(err, hub.ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}
	// A malformed frame closes the session as it would the connection.
	if err := n.hub.HandleEmulation(ctx, hub.EmulationRequest{Session: s1, Data: []byte(`{"id":`)}); err == nil {
		t.Fatal("malformed emulation frame accepted")
	}
	c.ExpectClose(3501, "bad request")
	// A closed session is unknown.
	testenv.Eventually(t, "session forgotten", 5*time.Second, func() bool {
		return errors.Is(n.hub.HandleEmulation(ctx, hub.EmulationRequest{Session: s1, Data: []byte(`{}`)}), hub.ErrUnknownSession)
	})
}

func TestUnidirectionalConnect(t *testing.T) {
	t.Parallel()
	n := startNodeMem(t, hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}}})
	c, client := n.openWith(t, hub.ConnInfo{Transport: hub.TransportUniSSE, Unidirectional: true})
	client.Connect(&protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "u", Channels: []string{"news"}})})
	m := c.ReadOne()
	res, _ := m["connect"].(map[string]any)
	if res == nil || res["pong"] != nil || res["subs"] == nil {
		t.Fatalf("unidirectional connect: want a result without pong, with the token's channels: %v", m)
	}
	if !client.Unidirectional() {
		t.Fatal("Unidirectional() false")
	}

	// A refused connect is a disconnect: the client cannot read an error.
	bad, badClient := n.openWith(t, hub.ConnInfo{Transport: hub.TransportUniSSE, Unidirectional: true})
	past := time.Now().Add(-time.Hour).Unix()
	badClient.Connect(&protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "u", ExpireAt: &past})})
	bad.ExpectClose(3005, "")
}
