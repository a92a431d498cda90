package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
)

// Validate checks what the types alone cannot. It reports every problem
// it finds, each naming its key. The options of the hub, the API and the
// WebSocket transport are checked by those packages (hub.ClientConfig,
// hub.ChannelConfig, api.Config and websocket.Config's Validate), once;
// their problems come back here under the keys the file wrote. What is checked
// here is what only the file has (listeners, engines, keys) or what
// concerns several sections at once.
func (c Config) Validate() error {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	caps, ok := c.engineCaps()
	if !ok {
		bad("engine.type", "unknown engine %q (available: %s)", c.Engine.Type, strings.Join(Engines().Names(), ", "))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q: want debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "%q: want text or json", c.Log.Format)
	}
	if c.Admin.MutexProfileFraction < 0 {
		bad("admin.mutex_profile_fraction", "%d: must not be negative", c.Admin.MutexProfileFraction)
	}
	if c.Admin.BlockProfileRate < 0 {
		bad("admin.block_profile_rate", "%d: must not be negative", c.Admin.BlockProfileRate)
	}
	if (c.Admin.MutexProfileFraction > 0 || c.Admin.BlockProfileRate > 0) && c.Admin.Address == "" {
		bad("admin.address", "must be set for admin.mutex_profile_fraction or admin.block_profile_rate: the profiles are served on the admin listener")
	}
	if c.Shutdown.Timeout > 0 && c.Shutdown.DrainWindow >= c.Shutdown.Timeout {
		bad("shutdown.drain_window", "%s must be shorter than shutdown.timeout (%s)", c.Shutdown.DrainWindow, c.Shutdown.Timeout)
	}
	ps = append(ps, hubProblems(c.Client.Hub().Validate(), reflect.TypeOf(c.Client), "client")...)
	ps = append(ps, hubProblems(c.Client.SubscribeToUserPersonalChannel.Validate(c.Channel.Hub()), reflect.TypeOf(c.Client), "client")...)
	ps = append(ps, hubProblems(c.Channel.Hub().Validate(), reflect.TypeOf(c.Channel), "channel")...)
	ps = append(ps, hubProblems(c.HTTPAPI.API().Validate(), reflect.TypeOf(c.HTTPAPI), "http_api")...)
	ps = append(ps, hubProblems(c.WebSocket.Transport().Validate(), reflect.TypeOf(c.WebSocket), "websocket")...)
	ps = append(ps, hubProblems(c.WebSocket.Admission().Validate(), reflect.TypeOf(c.WebSocket), "websocket")...)
	c.Admin.UI.validate(bad)
	c.pathProblems(bad)           // paths.go
	c.rateLimitRedisProblems(bad) // ratelimitredis.go
	if ok && !caps.RateLimits && c.Client.RateLimit.RedisUserCommand.Enabled && !c.Client.RateLimit.RedisUserCommand.Redis.separate() {
		bad("client.rate_limit.redis_user_command.enabled", "engine %q keeps no token buckets for the cluster (use the %s engine, or user_command for buckets per node)", c.Engine.Type, enginesWith(func(k engine.Kind) bool { return k.Caps.RateLimits }))
	}
	for key, ns := range c.namespaces() {
		if ok && !caps.History {
			for _, o := range historyOptions(ns) {
				bad(key+"."+o, "engine %q keeps no history, so channels cannot have history, positioning or recovery (use the %s engine)", c.Engine.Type, enginesWith(func(k engine.Kind) bool { return k.Caps.History }))
			}
		}
		if ok && !caps.Maps && isMapType(ns.SubscriptionType) {
			bad(key+".subscription_type", "engine %q keeps no map state, so channels cannot be maps (use the %s engine)", c.Engine.Type, enginesWith(func(k engine.Kind) bool { return k.Caps.Maps }))
		}
		if ok && !caps.ChannelStates && ns.StateEvents {
			bad(key+".state_proxy_enabled", "engine %q keeps no channel occupancy for the cluster, so channels cannot have state events (use the %s engine)", c.Engine.Type, enginesWith(func(k engine.Kind) bool { return k.Caps.ChannelStates }))
		}
		if ok && !caps.Presence && ns.Presence {
			bad(key+".presence", "engine %q keeps no presence (set engine.presence: redis, or use another engine)", c.Engine.Type)
		}
	}
	if c.Engine.Type == "postgres" && c.Engine.Postgres.DSN == "" && len(c.Engine.Postgres.Shards) == 0 {
		bad("engine.postgres.dsn", "required with engine.type postgres, e.g. postgres://user:pass@host:5432/db")
	}
	c.Engine.shardProblems(bad)
	ps = append(ps, clientTLSProblems("engine.redis.tls", c.Engine.Redis.TLS.Validate())...)
	ps = append(ps, c.Engine.Redis.SentinelTLS.problems()...)
	ps = append(ps, clientTLSProblems("engine.nats.tls", c.Engine.NATS.TLS.Validate())...)
	if p := c.Engine.NATS.Presence; p != "" && p != "none" {
		if k, ok := Engines().Lookup(p); !ok || !k.KeepsPresenceAlone() {
			bad("engine.nats.presence", "%q: want none or %s", p, enginesWith(engine.Kind.KeepsPresenceAlone))
		}
	}
	if p := c.Engine.Presence; p != "" && p != c.Engine.Type {
		if k, ok := Engines().Lookup(p); !ok || !k.KeepsPresenceAlone() {
			bad("engine.presence", "%q: want empty, the engine of engine.type, or %s", p, enginesWith(engine.Kind.KeepsPresenceAlone))
		}
		if n := c.Engine.NATS.Presence; c.Engine.Type == "nats" && n != "" && n != "none" {
			bad("engine.presence", "not with engine.nats.presence: set one of them")
		}
	}
	if w := c.HTTPAPI.IdempotencyWindow; w < 0 || w > 24*time.Hour {
		bad("http_api.idempotency_window", "%s: want 0 (the default, %s) to 24h", w, hub.DefaultIdempotencyWindow)
	}
	if c.HTTP.IdleTimeout < 0 {
		bad("http.idle_timeout", "%s: must not be negative (0 means the default, %s)", c.HTTP.IdleTimeout, DefaultIdleTimeout)
	}
	if c.HTTP.NotSentLowat < 0 {
		bad("http.tcp_notsent_lowat", "%d: must not be negative (0 leaves the kernel's default)", c.HTTP.NotSentLowat)
	}
	ps = append(ps, c.TransportsConfig.problems()...)
	c.tokenProblems(bad)
	ps = append(ps, c.proxyProblems()...)
	ps = append(ps, c.uniGRPCProblems()...)
	ps = append(ps, c.webTransportProblems()...)
	ps = append(ps, c.sqlAuthProblems()...)
	ps = append(ps, c.tlsProblems()...)
	ps = append(ps, c.internalProblems()...) // internal.go
	ps = append(ps, c.debugProblems()...)    // debug.go
	ps = append(ps, c.graphiteProblems()...) // graphite.go
	ps = append(ps, c.h2cProblems()...)      // h2c.go
	ps = append(ps, c.grpcAPIProblems()...)
	ps = append(ps, c.consumerProblems()...)
	ps = append(ps, c.stateEventProblems()...) // channelstate.go
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// hubProblems translates the hub.OptionErrors (from the hub, package api
// or the transports) about the section at key, of the file type t, into
// problems naming the keys: the Go field path becomes the key path, and
// Go field names in the message become keys. renames are pairs of a
// package's field name and t's, where the two differ.
func hubProblems(err error, t reflect.Type, key string, renames ...string) Problems {
	var ps Problems
	for _, oe := range hub.OptionErrors(err) {
		field, message := oe.Field, oe.Message
		if len(renames) > 0 {
			field, message = replaceWords(field, renames), replaceWords(message, renames)
		}
		parent := t
		if i := strings.LastIndex(field, "."); i >= 0 {
			parent = typeAt(t, field[:i])
		}
		ps = append(ps, Problem{Key: join(key, goPathToKey(t, field)), Message: goNamesToKeys(parent, message)})
	}
	if err != nil && len(ps) == 0 {
		ps = append(ps, Problem{Key: key, Message: err.Error()})
	}
	return ps
}

// typeAt is the type of the field at the Go path below the struct type t.
func typeAt(t reflect.Type, goPath string) reflect.Type {
	for _, part := range strings.Split(goPath, ".") {
		name, _, _ := strings.Cut(part, "[")
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return t
		}
		o, ok := optionByGoName(t, name)
		if !ok {
			return t
		}
		t = o.typ
	}
	return t
}

// AuthUnconfigured reports whether nothing about authentication is set:
// no token key, no API key, no connect proxy, and neither anonymous nor
// insecure access.
// Such a node would refuse every connection and keep its API off, so
// `herald serve` generates keys for the run instead (see
// docs/configuration.md), and Warnings says so for `herald config check`
// and `herald serve` alike.
func (c Config) AuthUnconfigured() bool {
	return !c.Client.Token.Configured() && c.HTTPAPI.Key == "" && !c.HTTPAPI.Insecure &&
		!c.Client.Insecure && !c.Client.AllowAnonymousConnectWithoutToken && c.Client.Proxy.Connect == ""
}

// Warnings lists settings that are valid but probably not what is meant.
func (c Config) Warnings() []string {
	w := c.centrifugo.warnings()
	if c.AuthUnconfigured() {
		// One warning for both keys: serve treats this case as a whole.
		w = append(w, "client.token and http_api.key: no keys are configured: `herald serve` generates random ones "+
			"at each start and prints them (with --ephemeral-keys=false it refuses every connection and keeps the API off); "+
			"`herald config init` writes a configuration file with permanent keys")
		return w
	}
	if !c.Client.Token.Configured() && !c.Client.AllowAnonymousConnectWithoutToken && !c.Client.Insecure && c.Client.Proxy.Connect == "" {
		w = append(w, "client.token: no key is configured, so every connection will be refused: set client.token.hmac_secret_key (or a public key), or allow anonymous access")
	}
	if c.HTTPAPI.Key == "" && !c.HTTPAPI.Insecure {
		w = append(w, "http_api.key is empty: the server API under /api is off")
	}
	if c.HTTPAPI.Insecure {
		w = append(w, "http_api.insecure is on: anyone who reaches the server can publish and disconnect users")
	}
	if c.Client.Insecure {
		w = append(w, "client.insecure is on: every client may connect and use every channel; never use it in production")
	}
	w = append(w, c.shortSecretWarnings()...)
	w = append(w, c.clientTLSWarnings()...)
	return w
}

// namespaces maps each namespace's key path to its options.
func (c Config) namespaces() map[string]NamespaceOptions {
	out := map[string]NamespaceOptions{"channel.without_namespace": c.Channel.WithoutNamespace}
	for i, ns := range c.Channel.Namespaces {
		out[fmt.Sprintf("channel.namespaces[%d]", i)] = ns.Options()
	}
	return out
}

// historyOptions names the options of ns that need an engine with history.
func historyOptions(ns NamespaceOptions) []string {
	var out []string
	for _, o := range []struct {
		name string
		on   bool
	}{
		{"history_size", ns.HistorySize > 0}, {"history_ttl", ns.HistoryTTL > 0}, {"history_meta_ttl", ns.HistoryMetaTTL > 0},
		{"force_positioning", ns.ForcePositioning}, {"allow_positioning", ns.AllowPositioning},
		{"force_recovery", ns.ForceRecovery}, {"allow_recovery", ns.AllowRecovery},
	} {
		if o.on {
			out = append(out, o.name)
		}
	}
	return out
}

// isMapType reports whether t makes a namespace's channels maps.
func isMapType(t hub.SubscriptionType) bool {
	return t == hub.SubscriptionMap || t == hub.SubscriptionMapClients || t == hub.SubscriptionMapUsers
}
