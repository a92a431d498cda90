package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

// A new key beyond map.max_keys, or beyond map.max_keys_per_client for one
// connection, is error 106 and changes nothing; changes of held keys and
// removals go through, and a removal frees a place.
func TestMapKeyBounds(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Engine: memory.New(memory.Config{JanitorInterval: 50 * time.Millisecond}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("kb", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap,
				Map: hub.MapOptions{Mode: hub.MapPersistent, MaxKeys: 5, MaxKeysPerClient: 2, AllowPublishForClient: true, AllowRemoveForClient: true}}),
		}},
	})
	c := n.dial(t)
	c.Connect("u")
	publish := func(id int, ch, key string) map[string]any {
		return c.Call(fmt.Sprintf(`{"id":%d,"publish":{"channel":%q,"type":1,"key":%q,"data":{"v":%d}}}`, id, ch, key, id))
	}
	for i, key := range []string{"a", "b", "a"} {
		if m := publish(10+i, "kb:x", key); m["publish"] == nil {
			t.Fatalf("publish %s: %v", key, m)
		}
	}
	jsonclient.WantError(t, publish(20, "kb:x", "c"), int(protocol.ErrorLimitExceeded))
	if m := c.Call(`{"id":21,"publish":{"channel":"kb:x","type":1,"key":"b","removed":true}}`); m["publish"] == nil {
		t.Fatalf("remove: %v", m)
	}
	if m := publish(22, "kb:x", "c"); m["publish"] == nil {
		t.Fatalf("a key after a removal made room: %v", m)
	}
	// The channel's bound, for the server API too.
	for i := range 3 {
		mapSet(t, n.hub, "kb:x", fmt.Sprintf("s%d", i), `1`)
	}
	_, err := n.hub.MapPublish(context.Background(), "kb:x", "s9", []byte(`1`))
	var he *hub.Error
	if !errors.As(err, &he) || he.Code != protocol.ErrorLimitExceeded {
		t.Fatalf("a sixth key: %v", err)
	}
	mapSet(t, n.hub, "kb:x", "s0", `2`) // a held key changes
	st, err := n.hub.MapStats(context.Background(), "kb:x")
	if err != nil || st.NumKeys != 5 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	other := n.dial(t)
	other.Connect("w")
	jsonclient.WantError(t, other.Call(`{"id":2,"publish":{"channel":"kb:x","type":1,"key":"new","data":{}}}`), int(protocol.ErrorLimitExceeded))
}

func TestMapKeyBoundsValidation(t *testing.T) {
	t.Parallel()
	_, err := hub.New(hub.Config{Engine: memory.New(memory.Config{}), Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("kb", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent, MaxKeys: -2, MaxKeysPerClient: -3}}),
	}}})
	if err == nil || !strings.Contains(err.Error(), "MaxKeys") || !strings.Contains(err.Error(), "MaxKeysPerClient") {
		t.Fatalf("negative bounds: %v", err)
	}
}
