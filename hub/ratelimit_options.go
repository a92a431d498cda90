package hub

import (
	"fmt"
	"time"
)

// The options of operation rate limits, client.rate_limit, in the shape of
// Centrifugo PRO's (centrifugal.dev docs/pro/rate_limiting.md):
// client_command (per connection), user_command (per user, on this node)
// and client_error (closes a connection that keeps getting errors). Each
// bucket is 'rate' operations per 'interval', as many at once.

// RateLimitConfig is client.rate_limit.
type RateLimitConfig struct {
	ClientCommand CommandRateLimits `yaml:"client_command" doc:"token buckets per connection, for each command the client sends; a command over its buckets gets error 111 (too many requests) and is not run"`
	UserCommand   CommandRateLimits `yaml:"user_command" doc:"as 'client_command', per user on this node (all the user's connections to it draw from one set of buckets); anonymous connections are not counted. 'connect' counts here only"`
	// RedisUserCommand is kept in the engine (engine.RateLimiter), or in
	// Config.RateLimiter, for the whole cluster.
	RedisUserCommand CommandRateLimits `yaml:"redis_user_command" doc:"as 'user_command', with the buckets kept in the engine for the whole cluster (Centrifugo PRO's Redis layer with 'reuse_from_engine'; Herald keeps them in PostgreSQL too): a user draws from one set of buckets whichever nodes its connections reach, at the cost of a round trip to the engine per command (a transaction on PostgreSQL). Checked after the in-memory layers, which make a cheap first filter. No 'total' or 'unsubscribe'; needs an engine that keeps them (redis or postgres, sharded or not; memory, in the process, for one node) or a store of their own (Config.RateLimiter). If the store fails the command is allowed"`
	ClientError      ErrorRateLimits   `yaml:"client_error" doc:"buckets of error replies per connection: a connection that gets more errors than they allow (internal errors are not counted) is closed with 3509 (too many errors), which clients do not reconnect after"`
}

// CommandRateLimits is one layer of command limits: a set of buckets per
// command, 'default' for the commands without their own, and 'total' for
// all together.
type CommandRateLimits struct {
	Enabled bool        `yaml:"enabled" doc:"turn the layer on"`
	DryRun  bool        `yaml:"dry_run" doc:"count what the buckets would refuse ('herald_rate_limit_over_limit_total' with dry_run=\"true\") but refuse nothing, to size the limits against real traffic first"`
	Total   RateBuckets `yaml:"total" doc:"buckets every command draws from, after its own allowed it (a command its own buckets refuse takes nothing from them)"`
	Default RateBuckets `yaml:"default" doc:"buckets for each command that has none of its own, one set per command (not a combined cap: that is 'total')"`
	// Connect is per user only: a connection has sent one connect when
	// its buckets would be read.
	Connect       RateBuckets        `yaml:"connect" doc:"connects of the user ('user_command' only), counted once the user is known (after the token or the connect proxy)"`
	Subscribe     ChannelRateBuckets `yaml:"subscribe" doc:"subscribe commands"`
	Unsubscribe   ChannelRateBuckets `yaml:"unsubscribe" doc:"unsubscribe commands: counted but never refused, as in Centrifugo PRO (refusing one makes the client reconnect); they still draw from 'total'"`
	Publish       ChannelRateBuckets `yaml:"publish" doc:"publish commands"`
	History       ChannelRateBuckets `yaml:"history" doc:"history commands"`
	Presence      ChannelRateBuckets `yaml:"presence" doc:"presence commands"`
	PresenceStats ChannelRateBuckets `yaml:"presence_stats" doc:"presence_stats commands"`
	Refresh       RateBuckets        `yaml:"refresh" doc:"refresh commands (the client's, with a new connection token)"`
	SubRefresh    ChannelRateBuckets `yaml:"sub_refresh" doc:"sub_refresh commands"`
	RPC           RPCRateBuckets     `yaml:"rpc" doc:"rpc commands, with buckets of their own for some methods"`
}

// RateBuckets is the buckets of one command; all must allow it.
type RateBuckets struct {
	Enabled bool         `yaml:"enabled" doc:"apply these buckets"`
	Buckets []RateBucket `yaml:"buckets" doc:"a list of '{interval: 1s, rate: 10}': 'rate' operations per 'interval', and as many at once; all must allow"`
}

// RateBucket is one token bucket.
type RateBucket struct {
	Interval time.Duration `yaml:"interval" doc:"the bucket's period, from 1s to 1h"`
	Rate     int           `yaml:"rate" doc:"operations per 'interval' (and at once), at least 1"`
}

// ChannelRateBuckets is a channel command's buckets and its namespaces'
// own.
type ChannelRateBuckets struct {
	RateBuckets        `yaml:",inline"`
	NamespaceOverrides []NamespaceRateBuckets `yaml:"namespace_overrides" doc:"a list of '{namespace_name: NAME, enabled: true, buckets: [...]}': the buckets of the command on the channels of one namespace, instead of the command's (not beside them); enabled without buckets: the 'default' buckets"`
}

// NamespaceRateBuckets is one namespace's buckets for a command.
type NamespaceRateBuckets struct {
	NamespaceName string `yaml:"namespace_name" doc:"the namespace (for channel patterns, the pattern as written in 'channel.namespaces')"`
	RateBuckets   `yaml:",inline"`
}

// RPCRateBuckets is the rpc command's buckets and its methods' own.
type RPCRateBuckets struct {
	RateBuckets     `yaml:",inline"`
	MethodOverrides []RPCMethodRateBuckets `yaml:"method_overrides" doc:"a list of '{method: NAME, enabled: true, buckets: [...]}': the buckets of one rpc method, instead of the rpc command's (enabled without buckets: the 'default' buckets)"`
}

// RPCMethodRateBuckets is one method's buckets.
type RPCMethodRateBuckets struct {
	Method      string `yaml:"method" doc:"the rpc method"`
	RateBuckets `yaml:",inline"`
}

// ErrorRateLimits is client.rate_limit.client_error.
type ErrorRateLimits struct {
	Enabled bool        `yaml:"enabled" doc:"turn the layer on"`
	DryRun  bool        `yaml:"dry_run" doc:"count the connections that would be closed, close none"`
	Total   RateBuckets `yaml:"total" doc:"the buckets of error replies of one connection"`
}

// Centrifugo PRO's bounds on a bucket's interval.
const (
	minRateInterval = time.Second
	maxRateInterval = time.Hour
)

// check adds the problems of l to ps; perUser says whether connect may be
// set.
func (l CommandRateLimits) check(prefix string, perUser bool, ps *optionProblems) {
	for _, n := range l.named() {
		n.buckets.check(joinField(prefix, n.field), ps)
	}
	for _, n := range l.channelNamed() {
		for i, o := range n.buckets.NamespaceOverrides {
			field := joinField(prefix, fmt.Sprintf("%s.NamespaceOverrides[%d]", n.field, i))
			if o.NamespaceName == "" {
				ps.add(field, "NamespaceName", "want the namespace the buckets are for")
			}
			o.RateBuckets.check(field, ps)
		}
	}
	for i, m := range l.RPC.MethodOverrides {
		field := joinField(prefix, fmt.Sprintf("RPC.MethodOverrides[%d]", i))
		if m.Method == "" {
			ps.add(field, "Method", "want the rpc method the buckets are for")
		}
		m.RateBuckets.check(field, ps)
	}
	if !perUser && l.Connect.Enabled {
		ps.add(prefix, "Connect", "connect is limited per user only ('user_command'): a connection sends one")
	}
}

// namedBuckets is one command's buckets with its key and Go field name.
type namedBuckets struct {
	command, field string
	buckets        RateBuckets
}

// named is the layer's buckets, in field order; Total and Default have no
// command.
func (l CommandRateLimits) named() []namedBuckets {
	return []namedBuckets{
		{"", "Total", l.Total}, {"", "Default", l.Default}, {"connect", "Connect", l.Connect},
		{"subscribe", "Subscribe", l.Subscribe.RateBuckets}, {"unsubscribe", "Unsubscribe", l.Unsubscribe.RateBuckets},
		{"publish", "Publish", l.Publish.RateBuckets}, {"history", "History", l.History.RateBuckets},
		{"presence", "Presence", l.Presence.RateBuckets}, {"presence_stats", "PresenceStats", l.PresenceStats.RateBuckets},
		{"refresh", "Refresh", l.Refresh}, {"sub_refresh", "SubRefresh", l.SubRefresh.RateBuckets}, {"rpc", "RPC", l.RPC.RateBuckets},
	}
}

// channelBuckets is a channel command's buckets with its key and Go
// field name.
type channelBuckets struct {
	command, field string
	buckets        ChannelRateBuckets
}

// channelNamed is the layer's channel commands, in field order.
func (l CommandRateLimits) channelNamed() []channelBuckets {
	return []channelBuckets{
		{"subscribe", "Subscribe", l.Subscribe}, {"unsubscribe", "Unsubscribe", l.Unsubscribe},
		{"publish", "Publish", l.Publish}, {"history", "History", l.History}, {"presence", "Presence", l.Presence},
		{"presence_stats", "PresenceStats", l.PresenceStats}, {"sub_refresh", "SubRefresh", l.SubRefresh},
	}
}

func (b RateBuckets) check(prefix string, ps *optionProblems) {
	for i, k := range b.Buckets {
		field := fmt.Sprintf("Buckets[%d]", i)
		if k.Interval < minRateInterval || k.Interval > maxRateInterval {
			ps.add(prefix, field+".Interval", fmt.Sprintf("%s: want from %s to %s", k.Interval, minRateInterval, maxRateInterval))
		}
		if k.Rate < 1 {
			ps.add(prefix, field+".Rate", fmt.Sprintf("%d: want at least 1", k.Rate))
		}
	}
}

// check adds the problems of the rate limit options to ps.
func (c RateLimitConfig) check(prefix string, ps *optionProblems) {
	c.ClientCommand.check(joinField(prefix, "ClientCommand"), false, ps)
	c.UserCommand.check(joinField(prefix, "UserCommand"), true, ps)
	c.ClientError.Total.check(joinField(prefix, "ClientError.Total"), ps)
	c.RedisUserCommand.check(joinField(prefix, "RedisUserCommand"), true, ps)
	if c.RedisUserCommand.Total.Enabled {
		ps.add(prefix, "RedisUserCommand.Total", "no total in the Redis layer, as Centrifugo PRO's: use the in-memory layers'")
	}
	if c.RedisUserCommand.Unsubscribe.Enabled {
		ps.add(prefix, "RedisUserCommand.Unsubscribe", "unsubscribe is never refused, so a Redis round trip for it would change nothing: set it in the in-memory layers")
	}
}
