package permission

import (
	"testing"

	"github.com/heraldhq/herald/auth"
)

func TestGrantAllows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		g          Grant
		user       string
		subscribed bool
		want       bool
	}{
		{Grant{}, "u", true, false},
		{Grant{Client: true}, "u", false, true},
		{Grant{Client: true}, "", false, false},
		{Grant{Client: true, Anonymous: true}, "", false, true},
		{Grant{Anonymous: true}, "", false, false}, // anonymous needs a grant too
		{Grant{Subscriber: true}, "u", false, false},
		{Grant{Subscriber: true}, "u", true, true},
		{Grant{Subscriber: true}, "", true, false},
		{Grant{Subscriber: true, Anonymous: true}, "", true, true},
	} {
		if got := c.g.Allows(c.user, c.subscribed); got != c.want {
			t.Errorf("%+v.Allows(%q, %v) = %v, want %v", c.g, c.user, c.subscribed, got, c.want)
		}
	}
}

// centrifugo is Centrifugo's default channel syntax.
var centrifugo = &Syntax{PrivatePrefix: "$", UserBoundary: "#", UserSeparator: ","}

func TestSubscribe(t *testing.T) {
	t.Parallel()
	open := Grant{Client: true}
	for _, c := range []struct {
		g           Grant
		userLimited bool
		ch, user    string
		want        bool
	}{
		{open, false, "news", "u", true},
		{open, false, "$news", "u", false}, // private: a token only
		{Grant{}, false, "news", "u", false},
		{Grant{}, true, "dm#a,b", "a", true},
		{Grant{}, true, "dm#a,b", "b", true},
		{Grant{}, true, "dm#a,b", "c", false},
		{Grant{}, true, "dm#a,b", "", false},
		{Grant{}, false, "dm#a,b", "a", false}, // namespace does not allow user-limited channels
		{open, true, "$dm#a", "a", false},
		{Grant{Subscriber: true}, false, "news", "u", false}, // subscribing is not being subscribed
	} {
		if got := centrifugo.Subscribe(c.g, c.userLimited, c.ch, c.user); got != c.want {
			t.Errorf("Subscribe(%+v, %v, %q, %q) = %v, want %v", c.g, c.userLimited, c.ch, c.user, got, c.want)
		}
	}
}

func TestUserListed(t *testing.T) {
	t.Parallel()
	if !centrifugo.UserListed("a#x#b,c", "c") || centrifugo.UserListed("a#x#b,c", "x") {
		t.Error("the last # starts the user list")
	}
	if centrifugo.UserListed("plain", "u") || centrifugo.UserListed("dm#", "") {
		t.Error("listed without a list")
	}
	other := &Syntax{PrivatePrefix: "private-", UserBoundary: "@@", UserSeparator: ";"}
	if !other.UserListed("dm@@a;bob", "bob") || other.UserListed("dm#bob", "bob") || other.UserListed("dm@@a,bob", "bob") {
		t.Error("a configured boundary and separator")
	}
	if !other.Private("private-x") || other.Private("$x") {
		t.Error("a configured private prefix")
	}
}

func TestOwnsToken(t *testing.T) {
	t.Parallel()
	tok := auth.SubscribeToken{Channel: "$c", User: "u"}
	if !OwnsToken(tok, "$c", "u", "id") {
		t.Error("token without client refused")
	}
	if OwnsToken(tok, "$d", "u", "id") || OwnsToken(tok, "$c", "v", "id") {
		t.Error("token of another channel or user accepted")
	}
	tok.Client = "id"
	if !OwnsToken(tok, "$c", "u", "id") || OwnsToken(tok, "$c", "u", "other") {
		t.Error("token naming a client")
	}
}
