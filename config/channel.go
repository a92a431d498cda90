package config

import (
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
)

// The client and channel sections are the hub's own option types, whose
// struct tags carry the keys, defaults and docs: the file format adds only
// what the hub does not hold (the token keys, the proxies and SQL checks
// of a namespace). Hub converts, without copying field by field.

// ClientConfig is the client section: hub.ClientConfig (connection limits
// and timings), the token keys and the client-wide proxies.
type ClientConfig struct {
	hub.ClientConfig `yaml:",inline"`
	Token            TokenConfig `yaml:"token"`
	// SubscriptionToken: keys of their own for subscription tokens (token.go).
	SubscriptionToken SubscriptionTokenConfig `yaml:"subscription_token"`
	// Proxy names the proxies of connect and refresh (proxy.go).
	Proxy ClientProxyConfig `yaml:"proxy"`
	// RateLimit replaces the hub's, adding the Redis of
	// redis_user_command (ratelimitredis.go).
	RateLimit RateLimitConfig `yaml:"rate_limit"`
	// ConnectionRateLimit is applied by the server in front of the
	// endpoints that open connections (server/connrate.go).
	ConnectionRateLimit int `yaml:"connection_rate_limit" doc:"new connections this node accepts, on every transport but uni_grpc, as Centrifugo counts them: a bucket of this many, refilled at one a second; over it a request is answered '503' before anything opens (0: no limit). Per client address, see 'websocket.ip_rate_limit'"`
	// InsecureSkipTokenSignatureVerify is auth.Config's
	// InsecureSkipSignatureVerify for both kinds of token (token.go).
	InsecureSkipTokenSignatureVerify bool `yaml:"insecure_skip_token_signature_verify" doc:"testing only: accept connection and subscription tokens without checking their signature (their claims are still checked), even with no key configured, as Centrifugo's; anyone can then connect as any user. The log says so at start"`
}

// ChannelConfig is the channel section: hub.ChannelConfig, whose
// namespace options this section's own fields replace with the file's,
// which add each namespace's proxies and SQL checks.
type ChannelConfig struct {
	hub.ChannelConfig `yaml:",inline"`
	WithoutNamespace  NamespaceOptions `yaml:"without_namespace" doc:"the namespace options, for channels without a namespace (no ':' in their name)"`
	Namespaces        []Namespace      `yaml:"namespaces" doc:"a list; each item has 'name' and the namespace options" example:"[{name: chat, presence: true, join_leave: true, force_push_join_leave: true, history_size: 100, history_ttl: 300s, force_recovery: true, allow_subscribe_for_client: true, allow_publish_for_subscriber: true, allow_history_for_subscriber: true, allow_presence_for_subscriber: true}, {name: prices, allow_subscribe_for_client: true, queue_policy: drop_oldest}]"`
	// StateProxy is Centrifugo PRO's channel.proxy.state (proxy.go).
	StateProxy string `yaml:"state_proxy" doc:"the proxy (under 'proxies', HTTP or 'grpc://') that receives the channel state events of the namespaces with 'state_proxy_enabled', in batches, as Centrifugo PRO's NotifyChannelState; see [proxy.md](proxy.md#channel-state-events)"`
	// State replaces the hub's, adding the outputs (channelstate.go).
	State ChannelStateConfig `yaml:"state"`
}

// NamespaceOptions are a namespace's options: the hub's, its proxies and
// its SQL checks.
type NamespaceOptions struct {
	hub.NamespaceOptions `yaml:",inline"`
	// NamespaceProxyOptions: subscribe_proxy, publish_proxy and
	// sub_refresh_proxy (proxy.go).
	NamespaceProxyOptions `yaml:",inline"`
	// NamespaceSQLChecks: subscribe_check and publish_check (sqlauth.go).
	NamespaceSQLChecks `yaml:",inline"`
}

// Namespace is one entry of channel.namespaces: hub.Namespace (the name
// and the hub's options), its proxies and its SQL checks.
type Namespace struct {
	hub.Namespace         `yaml:",inline"`
	NamespaceProxyOptions `yaml:",inline"`
	NamespaceSQLChecks    `yaml:",inline"`
}

// Options are the namespace's options without its name.
func (ns Namespace) Options() NamespaceOptions {
	return NamespaceOptions{NamespaceOptions: ns.NamespaceOptions, NamespaceProxyOptions: ns.NamespaceProxyOptions, NamespaceSQLChecks: ns.NamespaceSQLChecks}
}

// Hub is the hub's part of the configuration. The caller adds what a file
// cannot hold: the engine, token verifier, handlers and logger.
func (c Config) Hub(version string) hub.Config {
	return hub.Config{
		Name:              c.Name,
		Version:           version,
		Channels:          c.Channel.Hub(),
		Client:            c.Client.Hub(),
		IdempotencyWindow: c.HTTPAPI.IdempotencyWindow,
		SharedPoll:        c.SharedPoll,
		Emulation:         c.Emulation.EmulationLimits,
		// What the proxies forward on later calls (proxies[].emulated_headers).
		KeepConnectHeaders: proxy.EmulatedHeaderNames(c.Proxies),
	}
}

// Hub is the channel section as the hub takes it.
func (c ChannelConfig) Hub() hub.ChannelConfig {
	out := c.ChannelConfig
	out.State = c.State.ChannelStateConfig
	out.WithoutNamespace = c.WithoutNamespace.NamespaceOptions
	out.Namespaces = nil
	if c.Namespaces != nil {
		out.Namespaces = make([]hub.Namespace, len(c.Namespaces))
		for i, ns := range c.Namespaces {
			out.Namespaces[i] = ns.Namespace
		}
	}
	return out
}
