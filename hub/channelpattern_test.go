package hub_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// patternChannels is a configuration with channel patterns whose
// permissions are CEL expressions over the pattern's variables and the
// connection's meta.
func patternChannels() hub.ChannelConfig {
	return hub.ChannelConfig{Patterns: true, Namespaces: []hub.Namespace{
		{Name: "/users/:name", NamespaceOptions: hub.NamespaceOptions{
			Presence:     true,
			SubscribeCEL: "vars.name == user || 'admin' in meta.roles",
			PresenceCEL:  "'admin' in meta.roles",
			PublishCEL:   "subscribed && vars.name == user",
		}},
		{Name: "/users/all", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true}},
		{Name: "/personal/user_:user", NamespaceOptions: hub.NamespaceOptions{SubscribeCEL: "vars.user == user"}},
		{Name: "chat", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true}},
	}}
}

// TestChannelPatternsCEL: a user subscribes to the channel of its own name
// only, an admin (by meta) to any; static patterns win; a channel no
// pattern matches is unknown; namespaces by prefix still work.
func TestChannelPatternsCEL(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: patternChannels()})
	mary := n.dial(t)
	mary.Connect("mary")
	mary.MustSubscribe(2, "/users/mary", "")
	jsonclient.WantError(t, mary.Subscribe(3, "/users/john", ""), 103)
	mary.MustSubscribe(4, "/users/all", "")
	mary.MustSubscribe(5, "/personal/user_mary", "")
	jsonclient.WantError(t, mary.Subscribe(6, "/personal/user_john", ""), 103)
	jsonclient.WantError(t, mary.Subscribe(7, "/users/mary/profile", ""), 102)
	jsonclient.WantError(t, mary.Subscribe(8, "/events/1", ""), 102)
	mary.MustSubscribe(9, "chat:room", "")
	// publish_cel needs the subscription, presence_cel the admin role.
	if m := mary.Call(`{"id":10,"publish":{"channel":"/users/mary","data":{}}}`); m["error"] != nil {
		t.Fatalf("publish to the own channel: %v", m)
	}
	jsonclient.WantError(t, mary.Call(`{"id":11,"presence":{"channel":"/users/mary"}}`), 103)

	admin := n.dial(t)
	admin.ConnectToken(token(t, auth.ConnectClaims{User: "root", Meta: []byte(`{"roles":["admin"]}`)}))
	admin.MustSubscribe(2, "/users/john", "")
	if m := admin.Call(`{"id":3,"presence":{"channel":"/users/john"}}`); m["error"] != nil {
		t.Fatalf("presence for an admin: %v", m)
	}
	jsonclient.WantError(t, admin.Call(`{"id":4,"publish":{"channel":"/users/john","data":{}}}`), 103)
}

// TestChannelPatternsValidate: conflicting patterns, bad patterns and CEL
// that does not compile or is not a bool are refused naming the field.
func TestChannelPatternsValidate(t *testing.T) {
	t.Parallel()
	cfg := hub.ChannelConfig{Patterns: true, Namespaces: []hub.Namespace{
		{Name: "/users/:name"},
		{Name: "/users/:id"},
		{Name: "/a/:x/:x"},
		{Name: "/b", NamespaceOptions: hub.NamespaceOptions{SubscribeCEL: "user =="}},
		{Name: "/c", NamespaceOptions: hub.NamespaceOptions{PublishCEL: "user"}},
	}}
	got := map[string]string{}
	for _, oe := range hub.OptionErrors(cfg.Validate()) {
		got[oe.Field] = oe.Message
	}
	for field, want := range map[string]string{
		"Namespaces[1].Name":         `conflicts with "/users/:name"`,
		"Namespaces[2].Name":         `variable "x" twice`,
		"Namespaces[3].SubscribeCEL": `"user =="`,
		"Namespaces[4].PublishCEL":   "want a bool",
	} {
		if !strings.Contains(got[field], want) {
			t.Errorf("%s: got %q, want it to contain %q (all: %v)", field, got[field], want, got)
		}
	}
	// Without channel.patterns a name with '/' is no namespace name.
	cfg.Patterns = false
	if hub.OptionErrors(cfg.Validate()) == nil {
		t.Error("pattern names accepted without Patterns")
	}
}
