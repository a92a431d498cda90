package hub

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/ratelimit"
	"github.com/heraldhq/herald/protocol"
)

// Operation rate limits (ClientConfig.RateLimit, ratelimit_options.go):
// the layers compiled at New, and the checks a command passes before it
// runs. A command is checked against its connection's buckets, then its
// user's; the first layer that refuses it answers error 111 and the
// layers after it are not charged. Every error reply then draws from the
// connection's client_error buckets, which close it with 3509 when empty.

// commandLimits is one layer compiled: the buckets of each command key.
type commandLimits struct {
	layer  string // the metric's label: client_command or user_command
	dryRun bool
	total  []ratelimit.Bucket
	def    []ratelimit.Bucket
	byKey  map[string][]ratelimit.Bucket // command, "rpc.<method>" for a method's own, "<command>@<namespace>" for a namespace's
	// byNamespace says whether any namespace has buckets of its own, so
	// that commands look up their channel's namespace only then.
	byNamespace bool
	// idle is the longest interval of the layer: a set unused for longer
	// is full again.
	idle time.Duration
}

// rateLimits is the hub's compiled rate limits; nil layers are off.
type rateLimits struct {
	client, user *commandLimits
	// shared is redis_user_command, kept by engine (the engine's, or
	// Config.RateLimiter).
	shared       *commandLimits
	engine       engine.RateLimiter
	errors       []ratelimit.Bucket
	errorsDryRun bool
	users        *ratelimit.Keyed // user_command's sets, by user
	byNamespace  bool             // some layer has namespace overrides
	overLimit    func(layer, command string, dryRun bool)
}

func bucketsOf(b RateBuckets) []ratelimit.Bucket {
	out := make([]ratelimit.Bucket, len(b.Buckets))
	for i, k := range b.Buckets {
		out[i] = ratelimit.Bucket{Interval: k.Interval, Rate: k.Rate}
	}
	return out
}

// compileCommandLimits compiles a layer; nil when it is off or sets no
// buckets.
func compileCommandLimits(layer string, l CommandRateLimits) *commandLimits {
	if !l.Enabled {
		return nil
	}
	out := &commandLimits{layer: layer, dryRun: l.DryRun, byKey: make(map[string][]ratelimit.Bucket)}
	for _, n := range l.named() {
		if !n.buckets.Enabled {
			continue
		}
		switch n.command {
		case "":
			if n.field == "Total" {
				out.total = bucketsOf(n.buckets)
			} else {
				out.def = bucketsOf(n.buckets)
			}
		default:
			out.byKey[n.command] = bucketsOf(n.buckets)
		}
	}
	for _, n := range l.channelNamed() {
		for _, o := range n.buckets.NamespaceOverrides {
			if !o.Enabled {
				continue
			}
			spec := bucketsOf(o.RateBuckets)
			if len(spec) == 0 {
				spec = out.def // as a method's override
			}
			out.byKey[n.command+"@"+o.NamespaceName] = spec
			out.byNamespace = true
		}
	}
	for _, m := range l.RPC.MethodOverrides {
		if !m.Enabled {
			continue
		}
		spec := bucketsOf(m.RateBuckets)
		if len(spec) == 0 {
			// As Centrifugo PRO: an override without buckets takes the
			// default ones, not the rpc command's.
			spec = out.def
		}
		out.byKey["rpc."+m.Method] = spec
	}
	for _, spec := range out.byKey {
		out.idle = max(out.idle, longest(spec))
	}
	out.idle = max(out.idle, longest(out.total), longest(out.def))
	if out.idle == 0 {
		return nil
	}
	return out
}

func longest(spec []ratelimit.Bucket) time.Duration {
	var d time.Duration
	for _, b := range spec {
		d = max(d, b.Interval)
	}
	return d
}

// buckets returns the key and buckets of a command (method: the rpc's;
// namespace: the channel's, for a channel command), nil when the layer
// sets none for it.
func (l *commandLimits) buckets(command, method, namespace string) (string, []ratelimit.Bucket) {
	if l.byNamespace && namespace != "" {
		if spec, ok := l.byKey[command+"@"+namespace]; ok {
			return command + "@" + namespace, spec
		}
	}
	if command == "rpc" && method != "" {
		if spec, ok := l.byKey["rpc."+method]; ok {
			return "rpc." + method, spec
		}
	}
	if spec, ok := l.byKey[command]; ok {
		return command, spec
	}
	if command == "connect" && l.layer == rateLayerClient {
		return "", nil
	}
	return command, l.def
}

// Metric labels of the layers.
const (
	rateLayerClient = "client_command"
	rateLayerUser   = "user_command"
	rateLayerError  = "client_error"
	rateLayerShared = "redis_user_command"
)

// totalKey is the key of a layer's total buckets, which no command has.
const totalKey = " total"

// compileRateLimits compiles c; nil when every layer is off. shared keeps
// the redis_user_command buckets; nil: e does.
func compileRateLimits(c RateLimitConfig, e engine.Engine, shared engine.RateLimiter, overLimit func(layer, command string, dryRun bool)) (*rateLimits, error) {
	r := &rateLimits{
		client:    compileCommandLimits(rateLayerClient, c.ClientCommand),
		user:      compileCommandLimits(rateLayerUser, c.UserCommand),
		shared:    compileCommandLimits(rateLayerShared, c.RedisUserCommand),
		overLimit: overLimit,
	}
	switch {
	case r.shared == nil:
	case shared != nil:
		r.engine = shared
	default:
		rl, ok := engine.RateLimiterOf(e)
		if !ok {
			var ps optionProblems
			ps.add("Client.RateLimit", "RedisUserCommand", fmt.Sprintf("the engine (%T) keeps no buckets for the cluster: use the redis or postgres engine, or user_command (per node)", e))
			return nil, ps.err()
		}
		r.engine = rl
	}
	if c.ClientError.Enabled && c.ClientError.Total.Enabled && len(c.ClientError.Total.Buckets) > 0 {
		r.errors, r.errorsDryRun = bucketsOf(c.ClientError.Total), c.ClientError.DryRun
	}
	if r.client == nil && r.user == nil && r.shared == nil && r.errors == nil {
		return nil, nil
	}
	if r.user != nil {
		r.users = ratelimit.NewKeyed(r.user.idle)
	}
	for _, l := range []*commandLimits{r.client, r.user, r.shared} {
		r.byNamespace = r.byNamespace || l != nil && l.byNamespace
	}
	return r, nil
}

// allow charges set for a command in layer l, and reports whether the
// layer lets it run. Unsubscribe is charged but never refused.
func (r *rateLimits) allow(l *commandLimits, set *ratelimit.Set, command, method, namespace string, now time.Time) bool {
	force := command == "unsubscribe"
	key, spec := l.buckets(command, method, namespace)
	if len(spec) > 0 && !set.Allow(key, spec, now, force) {
		r.overLimit(l.layer, key, l.dryRun)
		if !force && !l.dryRun {
			return false
		}
	}
	if len(l.total) > 0 && command != "connect" && !set.Allow(totalKey, l.total, now, force) {
		r.overLimit(l.layer, key, l.dryRun)
		if !force && !l.dryRun {
			return false
		}
	}
	return true
}

// rateLimited reports whether the rate limits refuse a command of c
// (method: the rpc's) from user ("" for anonymous: not counted per user).
func (c *Client) rateLimited(ctx context.Context, command, method, channel, user string) bool {
	r := c.hub.rates
	if r == nil {
		return false
	}
	var namespace string
	if channel != "" && r.byNamespace {
		if nr, e := c.hub.channels.resolve(channel); e == nil {
			namespace = nr.name
		}
	}
	now := time.Now()
	if r.client != nil && command != "connect" && !r.allow(r.client, c.rateSet(), command, method, namespace, now) {
		return true
	}
	if r.user != nil && user != "" && !r.allow(r.user, r.users.Set(user, now), command, method, namespace, now) {
		return true
	}
	if r.shared != nil && user != "" && command != "unsubscribe" && !r.allowShared(ctx, c, command, method, namespace, user) {
		return true
	}
	return false
}

// allowShared asks the engine (or Config.RateLimiter) for the user's
// redis_user_command buckets of a command. One that fails allows it: a
// limit must not take the service down with Redis.
func (r *rateLimits) allowShared(ctx context.Context, c *Client, command, method, namespace, user string) bool {
	key, spec := r.shared.buckets(command, method, namespace)
	if len(spec) == 0 {
		return true
	}
	buckets := make([]engine.RateBucket, len(spec))
	for i, b := range spec {
		buckets[i] = engine.RateBucket{Interval: b.Interval, Rate: b.Rate}
	}
	// The key holds the user and the command: a user's buckets for one
	// command, whichever node asks.
	ok, err := r.engine.TakeRate(ctx, "user:"+strconv.Itoa(len(user))+":"+user+":"+key, buckets)
	if err != nil {
		c.logger().Warn("rate limit: the buckets' store did not answer; command allowed", "layer", rateLayerShared, "error", err)
		return true
	}
	if ok {
		return true
	}
	r.overLimit(rateLayerShared, key, r.shared.dryRun)
	return r.shared.dryRun
}

// rateSet is the connection's client_command buckets, made on first use
// (in rareState: most connections never have them).
func (c *Client) rateSet() *ratelimit.Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rareLocked()
	if r.rates == nil {
		r.rates = ratelimit.NewSet()
	}
	return r.rates
}

// errorSet is the connection's client_error buckets, made on first use.
func (c *Client) errorSet() *ratelimit.Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rareLocked()
	if r.errorRates == nil {
		r.errorRates = ratelimit.NewSet()
	}
	return r.errorRates
}

// tooManyErrors charges an error reply of code to the connection's
// client_error buckets, and reports whether the connection must be closed
// for it. Internal errors are not the client's doing and are not counted.
func (c *Client) tooManyErrors(code protocol.ErrorCode) bool {
	r := c.hub.rates
	if r == nil || r.errors == nil || code == protocol.ErrorInternal {
		return false
	}
	if c.errorSet().Allow(totalKey, r.errors, time.Now(), false) {
		return false
	}
	r.overLimit(rateLayerError, "error", r.errorsDryRun)
	return !r.errorsDryRun
}

// rateRefusal is the reply to a command the rate limits refuse.
func rateRefusal() *Error { return newError(protocol.ErrorTooManyRequests) }

// dryRunLabel is the metric's dry_run label.
func dryRunLabel(dryRun bool) string { return strconv.FormatBool(dryRun) }

// commandChannel is the channel of a channel command, "" for others
// (concurrencyKey names it, command_concurrent.go).
func commandChannel(cmd *protocol.Command) string {
	ch, _ := concurrencyKey(cmd)
	return ch
}

// rpcMethod is the method of an rpc command, "" for other commands.
func rpcMethod(cmd *protocol.Command) string {
	if cmd.Rpc != nil {
		return cmd.Rpc.Method
	}
	return ""
}
