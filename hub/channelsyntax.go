package hub

import (
	"fmt"
	"strings"

	"github.com/heraldhq/herald/hub/internal/permission"
)

// ChannelSyntax is how channel names are read: "ns:name" selects a
// namespace, a leading "$" makes a channel private (token required) and
// "name#u1,u2" limits a channel to the listed users, with Centrifugo's
// keys and defaults (v6.9.1 configtypes.Channel: private_prefix,
// namespace_boundary, user_boundary, user_separator). An empty field
// takes its default. The hub resolves it once (New); resolving a channel
// costs what the fixed syntax did.
type ChannelSyntax struct {
	PrivatePrefix     string `yaml:"private_prefix" default:"'$'" doc:"a channel whose name starts with this is private: subscribing needs a subscription token (or the server subscribes the client)"`
	NamespaceBoundary string `yaml:"namespace_boundary" default:"':'" doc:"separates a channel's namespace from the rest of its name ('chat:room')"`
	UserBoundary      string `yaml:"user_boundary" default:"'#'" doc:"starts the list of users allowed in a user-limited channel ('dm#alice,bob'; see 'allow_user_limited_channels')"`
	UserSeparator     string `yaml:"user_separator" default:"','" doc:"separates the users of a user-limited channel"`
}

// DefaultChannelSyntax is Centrifugo's default syntax.
var DefaultChannelSyntax = ChannelSyntax{PrivatePrefix: "$", NamespaceBoundary: ":", UserBoundary: "#", UserSeparator: ","}

// withDefaults is s with the empty fields given their defaults.
func (s ChannelSyntax) withDefaults() ChannelSyntax {
	d := DefaultChannelSyntax
	for _, f := range []struct {
		v   *string
		def string
	}{
		{&s.PrivatePrefix, d.PrivatePrefix}, {&s.NamespaceBoundary, d.NamespaceBoundary},
		{&s.UserBoundary, d.UserBoundary}, {&s.UserSeparator, d.UserSeparator},
	} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	return s
}

// check adds s's problems to ps: a marker that is also another's would
// make names ambiguous, and control characters could not be sent.
func (s ChannelSyntax) check(prefix string, ps *optionProblems) {
	r := s.withDefaults()
	fields := []struct{ name, v string }{
		{"PrivatePrefix", r.PrivatePrefix}, {"NamespaceBoundary", r.NamespaceBoundary},
		{"UserBoundary", r.UserBoundary}, {"UserSeparator", r.UserSeparator},
	}
	for i, f := range fields {
		if hasControl(f.v) {
			ps.add(prefix, f.name, fmt.Sprintf("%q: must not hold control characters", f.v))
			continue
		}
		for _, o := range fields[:i] {
			if o.v == f.v {
				ps.add(prefix, f.name, fmt.Sprintf("%q: also the %s; give each its own", f.v, o.name))
				break
			}
		}
	}
}

// permission is the part of s the permission rules read.
func (s ChannelSyntax) permission() *permission.Syntax {
	r := s.withDefaults()
	return &permission.Syntax{PrivatePrefix: r.PrivatePrefix, UserBoundary: r.UserBoundary, UserSeparator: r.UserSeparator}
}

// Namespace returns the name of ch's namespace under s ("" for the
// channels without namespace), for applications that route by namespace
// (the proxy, the SQL checks). It does not check that the namespace
// exists.
func (s ChannelSyntax) Namespace(ch string) string {
	s = s.withDefaults()
	ns, _, ok := strings.Cut(strings.TrimPrefix(ch, s.PrivatePrefix), s.NamespaceBoundary)
	if !ok {
		return ""
	}
	return ns
}

// ChannelNamespace is DefaultChannelSyntax.Namespace(ch): ch's namespace
// under Centrifugo's default syntax. A hub configured with another syntax
// resolves with Hub.ChannelSyntax().Namespace.
func ChannelNamespace(ch string) string { return DefaultChannelSyntax.Namespace(ch) }

// ChannelSyntax is the syntax the hub reads channel names with, defaults
// applied.
func (h *Hub) ChannelSyntax() ChannelSyntax { return h.channels.syntax }
