package hub_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestChannelSyntax: a configured syntax replaces Centrifugo's default
// ':' '$' '#' ',' wherever a channel name is read: the namespace, private
// channels and user-limited channels; the default markers are then plain
// characters.
func TestChannelSyntax(t *testing.T) {
	t.Parallel()
	open := hub.NamespaceOptions{AllowSubscribeForClient: true, AllowUserLimitedChannels: true}
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{
			ChannelSyntax:    hub.ChannelSyntax{PrivatePrefix: "private-", NamespaceBoundary: "/", UserBoundary: "@", UserSeparator: ";"},
			WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true},
			Namespaces:       []hub.Namespace{ns("dm", open)},
		},
	})
	if got := n.hub.ChannelSyntax().Namespace("private-dm/x"); got != "dm" {
		t.Errorf("Namespace(private-dm/x) = %q, want dm", got)
	}
	c := n.dial(t)
	c.Connect("u1")
	c.MustSubscribe(2, "dm/chat@u1;u2", "")                           // the dm namespace, u1 listed
	jsonclient.WantError(t, c.Subscribe(3, "dm/chat@u2;u3", ""), 103) // not listed
	jsonclient.WantError(t, c.Subscribe(4, "unknown/x", ""), 102)     // '/' selects a namespace
	c.MustSubscribe(5, "dm:x#u2", "")                                 // ':' and '#' mean nothing now: no namespace, open
	c.MustSubscribe(6, "$x", "")                                      // '$' is a plain character
	jsonclient.WantError(t, c.Subscribe(7, "private-x", ""), 103)     // the configured prefix needs a token
}

// TestChannelSyntaxValidate: markers must differ.
func TestChannelSyntaxValidate(t *testing.T) {
	t.Parallel()
	err := hub.ChannelConfig{ChannelSyntax: hub.ChannelSyntax{UserBoundary: ":"}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "UserBoundary") {
		t.Errorf("user boundary ':' as the namespace boundary: %v, want refused", err)
	}
}

// TestNamespaceNameWithDot: a namespace name may hold dots, as Centrifugo
// 6.9.1's pattern allows (^[-a-zA-Z0-9_.]{2,}$); its channels resolve to it.
func TestNamespaceNameWithDot(t *testing.T) {
	t.Parallel()
	open := hub.NamespaceOptions{AllowSubscribeForClient: true}
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("eu.chat", open)}},
	})
	if got := n.hub.ChannelSyntax().Namespace("eu.chat:room"); got != "eu.chat" {
		t.Errorf("Namespace(eu.chat:room) = %q, want eu.chat", got)
	}
	c := n.dial(t)
	c.Connect("u1")
	c.MustSubscribe(2, "eu.chat:room", "")
	jsonclient.WantError(t, c.Subscribe(3, "eu:room", ""), 102) // no namespace "eu"
	for _, bad := range []string{"a", "a b", "a:b", "é."} {
		if err := (hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: bad}}}).Validate(); err == nil {
			t.Errorf("namespace %q accepted, want refused", bad)
		}
	}
}
