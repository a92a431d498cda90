// Package hub keeps client connections, their subscriptions and the fan-out
// of publications to them. It speaks the Centrifugo client protocol v2
// through any Transport (WebSocket, HTTP streaming, SSE), and reaches
// other nodes, history and presence only through an engine.Engine, so it
// knows no database.
//
// An application embeds a Hub to get a real-time server inside its own
// process: it authenticates clients itself (Handlers.OnConnecting), answers
// RPC calls (Handlers.OnRPC) and publishes from its own code (Hub.Publish).
//
// Layout: a Client's methods live in files named after what they own: the
// connection's lifecycle (client.go, lifecycle_*.go), command handling
// (command*.go), subscriptions (subscription*.go) and delivery
// (delivery*.go, where everything sent to a client is encoded). The parts
// that need none of the hub's internals are leaf packages under internal/:
// the tags filter (tagsfilter), the permission rules (permission), the
// cluster bookkeeping (clusterstate) and the write queue's mechanics
// (writequeue).
package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/hub/internal/clusterstate"
	"github.com/heraldhq/herald/hub/internal/tagsfilter"
	"github.com/heraldhq/herald/hub/internal/writequeue"
	"github.com/heraldhq/herald/protocol"
)

// TokenVerifier checks connection and subscription JWTs; *auth.Verifier
// implements it.
type TokenVerifier interface {
	VerifyConnectToken(token string) (auth.ConnectToken, error)
	VerifySubscribeToken(token string) (auth.SubscribeToken, error)
}

// Config configures a Hub.
type Config struct {
	// Engine carries publications between nodes and keeps history and
	// presence. Required: use memory.New for a single node.
	Engine engine.Engine
	// Name identifies this node in the info API and logs; default the
	// host name.
	Name string
	// Version is sent to clients in the connect reply.
	Version  string
	Channels ChannelConfig
	Client   ClientConfig
	// Tokens verifies JWTs; nil refuses every token (use Handlers.OnConnecting
	// or the anonymous and insecure options instead).
	Tokens TokenVerifier
	// Handlers let the application decide what the protocol leaves to the
	// server. Chain composes several sets of them (the application's own,
	// proxy.Router.Handlers, sqlauth.Authorizer.Handlers) in order.
	Handlers Handlers
	// IdempotencyWindow is how long a publication's idempotency key is
	// remembered (PublishOptions.IdempotencyKey); zero means
	// DefaultIdempotencyWindow.
	IdempotencyWindow time.Duration
	// Emulation bounds the requests of the emulation endpoint
	// (HandleEmulation); zero fields take the defaults.
	Emulation EmulationLimits
	// SharedPoll holds the keys of tracked key batches on shared poll
	// channels (sharedpoll_signature.go).
	SharedPoll SharedPollConfig
	// RowCheck, when set, decides per publication which users of the
	// namespaces it checks may see it (rowcheck.go).
	RowCheck RowChecker
	// KeepConnectHeaders names the headers of a connect command (protocol
	// v2 header emulation) a client keeps for its lifetime, read by
	// Client.ConnectHeaders: what the proxies that forward them to later
	// calls need (connect_headers.go). Empty: a client keeps none.
	KeepConnectHeaders []string
	// RateLimiter, when set, keeps the buckets of
	// Client.RateLimit.RedisUserCommand instead of Engine (Centrifugo
	// PRO's redis_user_command.redis: a Redis of their own); nil: the
	// engine's, through engine.RateLimiterOf.
	RateLimiter engine.RateLimiter
	// Logger receives the hub's logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultIdempotencyWindow is Config.IdempotencyWindow when it is zero.
const DefaultIdempotencyWindow = 5 * time.Minute

// MaxIdempotencyKey bounds PublishOptions.IdempotencyKey, in bytes.
const MaxIdempotencyKey = 256

// Hub is one node's set of clients and channels. Create it with New, call
// Start, hand it connections with NewClient, and Shutdown when done.
type Hub struct {
	cfg      Config
	client   ClientConfig
	channels *channelRules
	engine   engine.Engine
	maps     engine.MapBroker // the engine's map part; nil without one
	log      *slog.Logger
	nodeID   string
	started  time.Time
	// sessionKey makes and checks this node's emulation sessions
	// (session.go); emulation holds the endpoint's rate limits.
	sessionKey []byte
	emulation  emulationGate

	subs        registry
	deltas      deltaChannels    // delta compression bases (delivery_delta.go)
	filters     tagsfilter.Table // registered subscriptions' tags filters
	compact     compactIDs       // channel compaction ids (compaction.go)
	interest    interest
	users       userIndex
	nodes       clusterstate.Registry
	process     clusterstate.Sampler             // CPU and memory for the heartbeat
	writeq      chan writeJob                    // clients and shares waiting for a writer (delivery_writer.go)
	shares      shares                           // readyShares, recycled (delivery_handoff.go)
	writers     int                              // the writer pool's size (delivery_writer.go, poolWriters)
	queueArrays writequeue.Arrays[*subscription] // clients' queue arrays, recycled (delivery_writer.go)
	coalesce    coalescer                        // clients waiting for their write interval (delivery_coalesce.go)
	holds       writeHolds                       // how long commands hold their replies back (command_exec.go)
	// queuedTotal is the bytes waiting in every client's write queue
	// (delivery_writer.go); past ClientConfig.NodeQueueMaxSize publishing is shed.
	queuedTotal atomic.Int64
	// jsonChecks keeps whether publications read from streams can go to
	// JSON clients (jsonvalidity.go).
	jsonChecks *jsonChecks
	metrics    *metrics
	clients    atomic.Int64 // connected clients
	// published counts the publications this node's engine accepted,
	// for the heartbeat (a rate in the admin UI).
	published atomic.Uint64
	// pending counts connections that have not connected yet: one per
	// NewClient, taken back when the client connects or closes, whichever
	// comes first (both change the state under Client.mu, so once).
	pending atomic.Int64

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	bg       background  // engine I/O off the command path (goBackground)
	closing  atomic.Bool // refusing new connections (draining or shut down)
	shutdown atomic.Bool
	allConns sync.Map // *Client → struct{}: every live connection, connected or not
	sessions sync.Map // emulation session → *Client, for HTTP-streaming and SSE clients
	// admissions holds ConnInfo.Admission of the connections that have not
	// connected yet (*Client → interface{ Release() }), outside the Client
	// so that an authenticated connection carries no room for it.
	admissions sync.Map
	surveys    sync.Map    // survey id → *clusterstate.Survey, for the surveys this node asked
	polls      sharedPolls // shared poll channels with subscribers here (sharedpoll.go)
	// access is the node's copy of the cluster's token revocations and
	// blocked users (access.go).
	access access.State
	// rates is the compiled client.rate_limit (ratelimit.go); nil: off.
	rates *rateLimits
	// traces are the open live traces (trace.go).
	traces traces
	// chstate makes channel state events (channelstate.go).
	chstate channelStates
}

// New checks cfg and returns a Hub that is not started yet.
func New(cfg Config) (*Hub, error) {
	if cfg.Engine == nil {
		return nil, errors.New("hub: Config.Engine is required (memory.New() for one node)")
	}
	rules, err := compileChannels(cfg.Channels, "Channels")
	maps, keepsMaps := engine.MapsOf(cfg.Engine)
	if err == nil && !keepsMaps {
		err = refuseMapNamespaces(cfg.Channels, cfg.Engine, "Channels")
	}
	var clientProblems optionProblems
	cfg.Client.check("Client", &clientProblems)
	cfg.Client.SubscribeToUserPersonalChannel.check(cfg.Channels, "Client.SubscribeToUserPersonalChannel", &clientProblems)
	if err := errors.Join(err, clientProblems.err(), checkSharedPollConfig(cfg)); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if cfg.IdempotencyWindow <= 0 {
		cfg.IdempotencyWindow = DefaultIdempotencyWindow
	}
	if cfg.Name == "" {
		cfg.Name, _ = os.Hostname()
	}
	if cfg.Version == "" {
		cfg.Version = "0.0.0"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	h := &Hub{
		jsonChecks: newJSONChecks(),
		cfg:        cfg,
		client:     cfg.Client.withDefaults(),
		channels:   rules,
		engine:     cfg.Engine,
		maps:       maps,
		log:        log,
		nodeID:     cfg.Engine.NodeID(),
		started:    time.Now(),

		sessionKey: newSessionKey(),
		emulation:  newEmulationGate(cfg.Emulation),
	}
	h.metrics = newMetrics(h)
	if h.rates, err = compileRateLimits(h.client.RateLimit, cfg.Engine, cfg.RateLimiter, h.metrics.rateOverLimit); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	h.subs.init()
	h.compact.init()
	h.interest.init(h)
	h.users.init()
	h.ctx, h.cancel = context.WithCancel(context.Background())
	if err := h.chstate.init(h, cfg); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	h.polls.init(h)
	h.metrics.collectors = append(h.metrics.collectors, h.polls.collectors()...)
	h.writeq = make(chan writeJob, writeQueueLen)
	h.writers = poolWriters(h.client.WaitOnBlockedWrites, runtime.GOMAXPROCS(0))
	h.coalesce.init()
	h.holds.init()
	return h, nil
}

// Engine is the hub's engine.
func (h *Hub) Engine() engine.Engine { return h.engine }

// NodeID is this node's id, its engine's NodeID: the one identity a node
// has, in connect results, the info API, heartbeats, targeted control
// messages and the engine's own records.
func (h *Hub) NodeID() string { return h.nodeID }

// Start connects the engine and starts the hub's background work:
// presence refresh and node heartbeats.
func (h *Hub) Start(ctx context.Context) error {
	if err := h.engine.Start(ctx, engineHandler{h}); err != nil {
		return fmt.Errorf("hub: start engine: %w", err)
	}
	if err := h.loadAccess(ctx); err != nil {
		// The reload loop tries again; the decisions reach this node as
		// control messages meanwhile.
		h.log.Warn("load token revocations and blocked users", "error", err)
	}
	if h.client.Insecure {
		h.log.Warn("INSECURE MODE: every client may connect and use every channel without a token; never use this in production")
	}
	h.wg.Add(3 + h.writers)
	go h.presenceLoop()
	go h.heartbeatLoop()
	go h.accessLoop()
	for i := 0; i < h.writers; i++ {
		go h.writerLoop()
	}
	if !h.client.WriteCoalesceOff {
		h.wg.Add(1)
		go h.coalesceLoop()
	}
	h.chstate.start() // channelstate.go
	if h.client.UserStatusOnlineInterval > 0 {
		h.wg.Add(1)
		go h.onlineLoop() // userstatus_online.go
	}
	return nil
}

// Shutdown closes every connection with 3001 (shutdown), so clients
// reconnect elsewhere, stops background work and closes the engine.
func (h *Hub) Shutdown(ctx context.Context) error {
	if !h.shutdown.CompareAndSwap(false, true) {
		return nil
	}
	h.closing.Store(true)
	h.allConns.Range(func(k, _ any) bool {
		k.(*Client).close(newDisconnect(protocol.DisconnectShutdown))
		return true
	})
	h.cancel()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("hub: shutdown: %w", ctx.Err())
	}
	// Leave events and engine unsubscribes of the clients closed above.
	if err := h.bg.wait(ctx); err != nil {
		return fmt.Errorf("hub: shutdown: waiting for engine calls: %w", err)
	}
	h.nodes.Remove(h.nodeID)
	if err := h.chstate.release(ctx); err != nil {
		h.log.Warn("shutdown", "error", err)
	}
	if err := h.engine.Close(); err != nil {
		return fmt.Errorf("hub: close engine: %w", err)
	}
	return nil
}

// NumClients is the number of connected (authenticated) clients on this node.
func (h *Hub) NumClients() int { return int(h.clients.Load()) }

// NumPending is the number of connections on this node that have not
// authenticated yet (no successful connect command). Each holds a socket
// until it connects or ClientConfig.StaleCloseDelay closes it, so a server
// that wants to bound them checks this before accepting another.
func (h *Hub) NumPending() int { return int(h.pending.Load()) }

// NumUsers is the number of distinct users connected to this node.
func (h *Hub) NumUsers() int { return h.users.numUsers() }

// NumChannels is the number of channels with subscribers on this node.
func (h *Hub) NumChannels() int { return h.subs.numChannels() }

// NumSubscriptions is the number of client subscriptions on this node.
func (h *Hub) NumSubscriptions() int { return h.subs.numSubscriptions() }

// Channels returns the channels with subscribers on this node and how many
// local clients each has.
func (h *Hub) Channels() map[string]int { return h.subs.channels() }

// NewClient starts a bidirectional WebSocket connection over t; see Open.
func (h *Hub) NewClient(t Transport, remoteAddr string) *Client {
	return h.Open(t, ConnInfo{RemoteAddr: remoteAddr})
}

// Open starts a connection over t. The transport hands it every frame it
// reads (HandleFrame), or for a unidirectional connection its one connect
// request (Client.Connect), and tells it when the connection is gone
// (HandleClose).
func (h *Hub) Open(t Transport, info ConnInfo) *Client {
	c := newClient(h, t, info)
	if info.Admission != nil {
		h.admissions.Store(c, info.Admission)
	}
	h.pending.Add(1) // before close can take it back below
	if h.closing.Load() {
		c.close(newDisconnect(protocol.DisconnectShutdown))
		return c
	}
	h.allConns.Store(c, struct{}{})
	if info.Session != "" {
		h.sessions.Store(info.Session, c)
	}
	c.startTimer()
	return c
}

// unpend takes c off the unauthenticated connections, once it has
// connected or closed before it did.
func (h *Hub) unpend(c *Client) {
	h.pending.Add(-1)
	if a, ok := h.admissions.LoadAndDelete(c); ok {
		a.(interface{ Release() }).Release()
	}
}

func (h *Hub) forget(c *Client) {
	h.allConns.Delete(c)
	if s := c.conn.Session; s != "" {
		h.sessions.CompareAndDelete(s, c)
	}
}
