// Package sqlauth authorizes subscriptions and publications with SQL
// functions of the application's own, so that row-level rules live next
// to the data they protect.
//
// A namespace names a query per action, for example
//
//	select app.can_subscribe($1, $2)
//
// called with the user ($1) and the channel ($2); it must return one row
// with one boolean. true allows, false refuses with error 103 (permission
// denied), and a query that fails (an error in the function, no row, not a
// boolean, a timeout) answers error 100 (internal, temporary) and is
// logged: the client is never let in by a failure, and nothing crashes.
//
// Answers are cached for Config.CacheTTL per action, user and channel.
// The application invalidates them with NOTIFY on Config.Channel (payload
// "*" or empty for everything, "user:<id>" or "channel:<name>" for part),
// typically from a trigger on its permission tables. While the listening
// connection is down nothing is cached, since invalidations could be
// missed.
package sqlauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/hub"
)

// Defaults of Config.
const (
	DefaultCacheTTL  = 5 * time.Second
	DefaultTimeout   = 2 * time.Second
	DefaultChannel   = "herald_auth"
	DefaultCacheSize = 100000
)

// Checks are one namespace's queries; an empty one leaves that action to
// the hub's other rules.
type Checks struct {
	Subscribe string
	Publish   string
	// Row decides per publication which users see it (rowcheck.go).
	Row string
}

// Config configures an Authorizer: what New takes.
type Config struct {
	// DSN is the database the queries run on. Required.
	DSN string
	// ListenDSN is the connection string of the listening connection
	// (LISTEN needs a connection of its own, not a transaction-mode
	// pooler); empty means DSN.
	ListenDSN string
	// Namespaces maps namespace names ("" for channels without one) to
	// their checks.
	Namespaces map[string]Checks
	// ChannelSyntax is the hub's (hub.ChannelConfig): how a channel's
	// namespace is read. The zero value is Centrifugo's default syntax.
	ChannelSyntax hub.ChannelSyntax
	// CacheTTL is how long an answer is reused; 0 means DefaultCacheTTL,
	// negative disables the cache.
	CacheTTL time.Duration
	// CacheSize bounds the cached answers; 0 means DefaultCacheSize.
	CacheSize int
	// Timeout bounds one query; 0 means DefaultTimeout.
	Timeout time.Duration
	// Channel is the notification channel that invalidates the cache; empty
	// means DefaultChannel.
	Channel string
	// PoolSize bounds the query connections; 0 means pgxpool's default.
	PoolSize int32
	Logger   *slog.Logger
	// TracerProvider, when set, traces every query (a client span under
	// the subscribe or publish being decided); answers from the cache
	// make no span. Nil means no tracing, at no cost.
	TracerProvider trace.TracerProvider
}

// Authorizer runs the checks. Create it with New, chain its Handlers into
// the hub's, and Close it when done.
type Authorizer struct {
	cfg    Config
	log    *slog.Logger
	pool   *pgxpool.Pool
	tracer trace.Tracer // nil: tracing off
	cache  cache
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New connects the query pool and starts the invalidation listener.
func New(ctx context.Context, cfg Config) (*Authorizer, error) {
	if cfg.DSN == "" {
		return nil, errors.New("sqlauth: DSN is required")
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Channel == "" {
		cfg.Channel = DefaultChannel
	}
	if cfg.ListenDSN == "" {
		cfg.ListenDSN = cfg.DSN
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("sqlauth: dsn: %w", err)
	}
	if cfg.PoolSize > 0 {
		pcfg.MaxConns = cfg.PoolSize
	}
	lcfg, err := pgx.ParseConfig(cfg.ListenDSN)
	if err != nil {
		return nil, fmt.Errorf("sqlauth: listen dsn: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("sqlauth: connect: %w", err)
	}
	a := &Authorizer{cfg: cfg, log: log.With("component", "sqlauth"), pool: pool}
	a.cache.init(cfg.CacheSize)
	if cfg.TracerProvider != nil {
		a.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	if cfg.CacheTTL > 0 {
		a.wg.Add(1)
		go a.listen(lcfg)
	}
	return a, nil
}

// Close stops the listener and closes the connections.
func (a *Authorizer) Close() {
	a.cancel()
	a.wg.Wait()
	a.pool.Close()
}

// Handlers are the checks as hub handlers, for hub.Chain: a channel
// whose namespace has a check is decided by it (unless the client brings
// a subscription token, which the hub checks as usual); any other channel
// gets hub.ErrUseDefault, and goes to the next handlers in the chain or to
// the hub's defaults. An action no namespace checks has no handler.
func (a *Authorizer) Handlers() hub.Handlers {
	var h hub.Handlers
	if a.any(func(c Checks) string { return c.Subscribe }) {
		h.OnSubscribe = func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
			q := a.cfg.Namespaces[a.cfg.ChannelSyntax.Namespace(ev.Channel)].Subscribe
			if q == "" || ev.Token != "" {
				return hub.SubscribeReply{}, hub.ErrUseDefault
			}
			return hub.SubscribeReply{}, a.check(ctx, "subscribe", q, c.User(), ev.Channel)
		}
	}
	if a.any(func(c Checks) string { return c.Publish }) {
		h.OnPublish = func(ctx context.Context, c *hub.Client, ev hub.PublishEvent) (hub.PublishReply, error) {
			q := a.cfg.Namespaces[a.cfg.ChannelSyntax.Namespace(ev.Channel)].Publish
			if q == "" {
				return hub.PublishReply{}, hub.ErrUseDefault
			}
			return hub.PublishReply{}, a.check(ctx, "publish", q, c.User(), ev.Channel)
		}
	}
	return h
}

func (a *Authorizer) any(get func(Checks) string) bool {
	for _, c := range a.cfg.Namespaces {
		if get(c) != "" {
			return true
		}
	}
	return false
}

// check answers nil (allowed), error 103, or error 100.
func (a *Authorizer) check(ctx context.Context, action, query, user, channel string) error {
	key := cacheKey{action: action, user: user, channel: channel}
	if allowed, ok := a.cache.get(key); ok {
		return verdict(allowed)
	}
	gen := a.cache.generation()
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	var allowed bool
	ctx, span := a.traceQuery(ctx, action, user, channel)
	err := a.pool.QueryRow(ctx, query, user, channel).Scan(&allowed)
	endQuery(span, allowed, err)
	if err != nil {
		a.log.Warn("authorization query failed: answering error 100", "action", action, "user", user, "channel", channel, "error", err)
		return &hub.Error{Code: 100, Message: "internal server error", Temporary: true}
	}
	if a.cfg.CacheTTL > 0 {
		a.cache.put(key, allowed, time.Now().Add(a.cfg.CacheTTL), gen)
	}
	return verdict(allowed)
}

func verdict(allowed bool) error {
	if allowed {
		return nil
	}
	return &hub.Error{Code: 103, Message: "permission denied"}
}
