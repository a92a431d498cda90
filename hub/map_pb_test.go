package hub_test

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// TestMapProtobuf runs a map subscription over Protobuf: state entries,
// the live reply, and live changes and removals with binary values.
func TestMapProtobuf(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("bm", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap, PublicationDataFormat: hub.DataFormatBinary,
			Map: hub.MapOptions{Mode: hub.MapPersistent, AllowPublishForSubscriber: true, AllowRemoveForSubscriber: true}}),
	}}})
	value := []byte{0, 0xff, 1}
	if _, err := n.hub.MapPublish(t.Context(), "bm:x", "a", value); err != nil {
		t.Fatal(err)
	}
	c := n.dialProtobuf(t)
	c.Connect("pb")
	state := c.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "bm:x", Type: 1, Phase: 2}})
	res := state.Subscribe
	if res == nil || res.Type != 1 || res.Phase != 2 || len(res.State) != 1 || res.State[0].Key != "a" || !bytes.Equal(res.State[0].Data, value) || res.Offset != 1 {
		t.Fatalf("state page: %v", state)
	}
	live := c.Call(&protocol.Command{Id: 3, Subscribe: &protocol.SubscribeRequest{Channel: "bm:x", Type: 1, Phase: 1, Offset: res.Offset, Epoch: res.Epoch}})
	if live.Subscribe == nil || live.Subscribe.Phase != 0 || !live.Subscribe.Recoverable || live.Subscribe.Offset != 1 {
		t.Fatalf("live reply: %v", live)
	}
	c.Send(&protocol.Command{Id: 4, Publish: &protocol.PublishRequest{Channel: "bm:x", Type: 1, Key: "b", Data: value}})
	c.Send(&protocol.Command{Id: 5, Publish: &protocol.PublishRequest{Channel: "bm:x", Type: 1, Key: "a", Removed: true}})
	var pubs []*protocol.Publication
	for replies := 0; replies < 2; {
		r := c.Next()
		switch {
		case r.Push != nil && r.Push.Pub != nil:
			pubs = append(pubs, r.Push.Pub)
		case r.Publish != nil:
			replies++
		default:
			t.Fatalf("unexpected %v", r)
		}
	}
	for len(pubs) < 2 {
		if r := c.Next(); r.Push != nil && r.Push.Pub != nil {
			pubs = append(pubs, r.Push.Pub)
		}
	}
	if pubs[0].Key != "b" || !bytes.Equal(pubs[0].Data, value) || pubs[0].Offset != 2 || pubs[1].Key != "a" || !pubs[1].Removed || len(pubs[1].Data) != 0 || pubs[1].Offset != 3 {
		t.Fatalf("live changes: %v", pubs)
	}
}
