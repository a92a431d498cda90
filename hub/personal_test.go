package hub_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestPersonalChannel: with client.subscribe_to_user_personal_channel,
// each connection of an authenticated user is subscribed at connect to
// "namespace:#user", in the connect reply, and publications there reach
// it; anonymous connections get none.
func TestPersonalChannel(t *testing.T) {
	t.Parallel()
	cfg := hub.Config{
		Client: hub.ClientConfig{
			AllowAnonymousConnectWithoutToken: true,
			SubscribeToUserPersonalChannel:    hub.PersonalChannelOptions{Enabled: true, Namespace: "personal"},
		},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: "personal"}}},
	}
	n := startNode(t, cfg)
	c := n.dial(t)
	res := c.Connect("alice")
	if subs, _ := res["subs"].(map[string]any); len(subs) != 1 || subs["personal:#alice"] == nil {
		t.Fatalf("connect result: want the subscription to personal:#alice, got %v", res)
	}
	if _, err := n.hub.Publish(t.Context(), "personal:#alice", []byte(`{"to":"alice"}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := jsonclient.PushesOf([]map[string]any{c.Next()}, "personal:#alice", "pub"); len(p) != 1 {
		t.Fatal("the personal channel's publication did not arrive")
	}
	anon := n.dial(t)
	if m := anon.ConnectWith(`{}`); jsonclient.Path(m, "connect", "subs") != nil {
		t.Fatalf("anonymous connect: want no personal channel, got %v", m)
	}
}

// TestPersonalChannelSingleConnection: with single_connection a new
// connection of a user closes the user's older one with 3504, found by the
// personal channel's presence as Centrifugo does, and keeps its own.
func TestPersonalChannelSingleConnection(t *testing.T) {
	t.Parallel()
	cfg := hub.Config{
		Client:   hub.ClientConfig{SubscribeToUserPersonalChannel: hub.PersonalChannelOptions{Enabled: true, SingleConnection: true}},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{Presence: true}},
	}
	n := startNode(t, cfg)
	first := n.dial(t)
	first.Connect("bob")
	second := n.dial(t)
	if subs, _ := second.Connect("bob")["subs"].(map[string]any); subs["#bob"] == nil {
		t.Fatalf("the second connection is subscribed to #bob: %v", subs)
	}
	first.ExpectClose(3504, "connection limit")
	// The close frame goes out before the node's clean-up of the closed
	// connection removes its presence: await it.
	testenv.Eventually(t, "presence of #bob down to the second connection", 5*time.Second, func() bool {
		st, err := n.hub.PresenceStats(t.Context(), "#bob")
		return err == nil && st.NumClients == 1
	})
}

// TestPersonalChannelOptionsChecked: the personal channels' namespace must
// exist, and keep presence for single_connection.
func TestPersonalChannelOptionsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts hub.PersonalChannelOptions
		want string
	}{
		{hub.PersonalChannelOptions{Enabled: true, Namespace: "nope"}, "SubscribeToUserPersonalChannel.Namespace"},
		{hub.PersonalChannelOptions{Enabled: true, SingleConnection: true}, "SubscribeToUserPersonalChannel.SingleConnection"},
	} {
		err := tc.opts.Validate(hub.ChannelConfig{})
		var oe *hub.OptionError
		if !errors.As(err, &oe) || !strings.Contains(oe.Field, tc.want) {
			t.Errorf("%+v: want a problem with %s, got %v", tc.opts, tc.want, err)
		}
	}
}
