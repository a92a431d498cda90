package hub_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// TestConnectFlagNoneEnabled: a client that advertises dictionary
// compression (ConnectRequest.flag bit 1<<0, with a profile and a cached
// dictionary id, protocol v0.21+) is told that no feature was enabled: no
// flag and no dict in the connect result, and the frames after it carry no
// codec marker, over JSON and Protobuf.
func TestConnectFlagNoneEnabled(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: compactionNamespaces()}})

	j := n.dial(t)
	tok := token(t, auth.ConnectClaims{User: "j"})
	m := j.ConnectWith(`{"token":"` + tok + `","flag":1,"profile":"chat","dict":"q83vEjRWeJCrze8S"}`)
	res, ok := m["connect"].(map[string]any)
	if !ok || res["flag"] != nil || res["dict"] != nil {
		t.Fatalf("connect reply %v, want a result without flag and dict", m)
	}
	j.MustSubscribe(2, "cc:room", "") // the next frame decodes as plain JSON

	p := n.dialProtobuf(t)
	req, err := (&protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "p"}), Flag: 1}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	// dict = 8 and profile = 9, which Herald's client.proto leaves out.
	req = protowire.AppendString(protowire.AppendTag(req, 8, protowire.BytesType), "q83vEjRWeJCrze8S")
	req = protowire.AppendString(protowire.AppendTag(req, 9, protowire.BytesType), "chat")
	cmd := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
	cmd = protowire.AppendBytes(protowire.AppendTag(cmd, 4, protowire.BytesType), req)
	p.SendRaw(protowire.AppendBytes(nil, cmd))
	r := p.Reply(1)
	if r.Connect == nil || r.Connect.Flag != 0 {
		t.Fatalf("connect reply %v, want a result without flag", r)
	}
	if r := p.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "cc:room"}}); r.Subscribe == nil {
		t.Fatalf("subscribe after connect: %v", r)
	}
}
