package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// PoolConfig describes how a Pool's connections connect.
type PoolConfig struct {
	// URLs are the WebSocket endpoints (ws://host:port/connection/websocket);
	// connection i goes to URLs[i % len(URLs)].
	URLs []string
	// Sources are local addresses to dial from (127.0.0.x); connection i
	// uses Sources[(i / len(URLs)) % len(Sources)], so every URL is
	// reached from every source. Each (source, destination) pair has its
	// own ephemeral port range (~28,000), so several go past one.
	// Empty: the system chooses.
	Sources []string
	// Format is the client protocol encoding.
	Format protocol.Type
	// Secret mints HS256 connection tokens; empty sends no token (for a
	// server that allows anonymous or insecure connections).
	Secret string
	// UserPrefix names connection i's user UserPrefix+i.
	UserPrefix string
	// Channels are subscribed right after connect, in the same frame.
	Channels []string
	// Timeout bounds dial, handshake, connect and subscribe (10s).
	Timeout time.Duration
	// Shards is the number of epoll readers (GOMAXPROCS).
	Shards int
	// MaxMessage bounds one incoming frame (1 MiB).
	MaxMessage int64
	// Client is how each connection reads (ClientLight when empty):
	// ClientHeavy and ClientSDK cost what real clients cost.
	Client string
	// TagsFilters, when positive, subscribes connection i with the tags
	// filter of TagsFilter(i, TagsFilters).
	TagsFilters int
	// SubscribeType is the subscribe commands' type (4: shared poll).
	SubscribeType int32
	// Track, with a shared poll SubscribeType, makes each connection
	// track keys of every channel right after subscribing.
	Track *TrackConfig
}

// TrackConfig says which keys connection i tracks: PerConn of Keys keys
// named k0..k<Keys-1>, from (i × PerConn) mod Keys on, each batch signed
// with Secret (shared_poll.hmac_secret_key) for an hour.
type TrackConfig struct {
	Secret  string
	Keys    int
	PerConn int
}

// trackKeys are the keys connection i tracks.
func (t *TrackConfig) trackKeys(i int) []string {
	keys := make([]string, 0, t.PerConn)
	for j := range t.PerConn {
		keys = append(keys, "k"+strconv.Itoa((i*t.PerConn+j)%max(t.Keys, 1)))
	}
	return keys
}

// setupError names the command of the connect frame an error reply
// answers: connect (id 1), a subscribe, or a track.
func (p *Pool) setupError(r *protocol.Reply) error {
	what := "connect"
	if n := len(p.cfg.Channels); r.Id > 1 && int(r.Id) <= n+1 {
		what = fmt.Sprintf("subscribe %q", p.cfg.Channels[r.Id-2])
	} else if k := int(r.Id) - n - 2; k >= 0 && k < n {
		what = fmt.Sprintf("track in %q", p.cfg.Channels[k])
	}
	return fmt.Errorf("%s: error %d %s", what, r.Error.Code, r.Error.Message)
}

// setupReplies is how many replies the connect frame asks for: connect,
// a subscribe per channel and, when tracking, a sub_refresh per channel.
func (p *Pool) setupReplies() int {
	n := 1 + len(p.cfg.Channels)
	if p.cfg.Track != nil {
		n += len(p.cfg.Channels)
	}
	return n
}

// Handler receives what the pool's connections read. Its methods run on
// the shard goroutines and must not block.
type Handler interface {
	// Publication is a publication push; data aliases a read buffer and
	// is valid only during the call. at is the receive time (Clock ns).
	Publication(shard, sub int, channel string, data []byte, at int64)
	// Reply is a reply to a command sent with Conn.Send (id ≠ 0).
	Reply(sub int, id uint32, err *protocol.Error)
}

// Pool holds many client connections with no goroutine and no buffer per
// idle connection: each shard has one epoll instance and one goroutine,
// and a connection costs its socket, a few hundred bytes of Go structures
// and the bytes of a partly read frame, if any.
type Pool struct {
	cfg     PoolConfig
	clock   Clock
	handler Handler
	// batchHandler is handler when it takes a frame's decoded
	// publications at once (the heavy client delivers them so).
	batchHandler batchHandler
	urls         []*url.URL
	sources      []*net.TCPAddr
	signer       *auth.Signer
	shards       []*shard
	next         atomic.Uint32
	closing      atomic.Bool
	// owned holds the connections of the heavy and sdk clients, which
	// read on goroutines of their own rather than in a shard.
	owned ownedConns

	connStats
}

// connStats counts a pool's connections and keeps the reasons of
// failures and disconnections.
type connStats struct {
	attempted    atomic.Int64
	connected    atomic.Int64
	failed       atomic.Int64
	disconnected atomic.Int64
	current      atomic.Int64
	recovered    atomic.Int64

	errMu  sync.Mutex
	errors map[string]int64 // failure and disconnect reasons
	closes []ServerClose    // the first closes the server sent
}

// NewPool starts the shard readers. Close stops them.
func NewPool(cfg PoolConfig, clock Clock, h Handler) (*Pool, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("no target URL")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 1 << 20
	}
	p := &Pool{cfg: cfg, clock: clock, handler: h}
	p.batchHandler, _ = h.(batchHandler)
	p.errors = map[string]int64{}
	p.owned.conns = map[ownedConn]struct{}{}
	for _, s := range cfg.URLs {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", s, err)
		}
		switch u.Scheme {
		case "ws":
		case "wss":
			return nil, fmt.Errorf("target %q: wss is not supported (the load tool runs on loopback)", s)
		default:
			return nil, fmt.Errorf("target %q: want a ws:// URL", s)
		}
		if u.Port() == "" {
			u.Host = net.JoinHostPort(u.Hostname(), "80")
		}
		p.urls = append(p.urls, u)
	}
	for _, s := range cfg.Sources {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("source address %q: not an IP address", s)
		}
		p.sources = append(p.sources, &net.TCPAddr{IP: ip})
	}
	if cfg.Secret != "" {
		s, err := auth.NewHMACSigner(cfg.Secret, "HS256")
		if err != nil {
			return nil, fmt.Errorf("token signer: %w", err)
		}
		p.signer = s
	}
	n := cfg.Shards
	if n <= 0 {
		n = defaultShards()
	}
	for i := range n {
		s, err := newShard(p, i)
		if err != nil {
			p.stopShards()
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
		p.shards = append(p.shards, s)
	}
	for _, s := range p.shards {
		go s.loop()
	}
	return p, nil
}

// Open dials connection number i (which picks its URL, source address and
// user), connects, subscribes to the configured channels and hands the
// connection to a shard, where it reads as subscriber sub. It returns the
// connection, for Send.
func (p *Pool) Open(ctx context.Context, i, sub int) (*Conn, error) {
	p.attempted.Add(1)
	if p.closing.Load() {
		p.failed.Add(1)
		return nil, errors.New("pool is closing")
	}
	if p.cfg.Client == ClientHeavy || p.cfg.Client == ClientSDK {
		return nil, p.openOwned(ctx, i, sub)
	}
	sh := p.shards[int(p.next.Add(1))%len(p.shards)]
	c, err := p.setup(ctx, sh, i, sub)
	if err != nil {
		p.failed.Add(1)
		p.noteError(err)
		return nil, err
	}
	p.connected.Add(1)
	p.current.Add(1)
	if err := sh.adopt(c); err != nil {
		c.nc.Close()
		p.current.Add(-1)
		p.disconnected.Add(1)
		p.noteError(err)
		return nil, err
	}
	return c, nil
}

// Counters returns the pool's cumulative counts.
func (p *connStats) Counters() Counters {
	return Counters{
		Attempted: p.attempted.Load(), Connected: p.connected.Load(), Failed: p.failed.Load(),
		Disconnected: p.disconnected.Load(), Current: p.current.Load(), Recovered: p.recovered.Load(),
	}
}

// Errors returns the reasons of failures and disconnections with their
// counts, most frequent first (at most 20 kinds).
func (p *connStats) Errors() []ErrorCount {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	out := make([]ErrorCount, 0, len(p.errors))
	for k, v := range p.errors {
		out = append(out, ErrorCount{Error: k, Count: v})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Count > out[j].Count || out[i].Count == out[j].Count && out[i].Error < out[j].Error
	})
	return out
}

// ErrorCount is one reason with how often it happened.
type ErrorCount struct {
	Error string `json:"error"`
	Count int64  `json:"count"`
}

// maxErrorKinds bounds the reasons kept, so a flood of distinct messages
// (each naming a port) cannot grow without limit.
const maxErrorKinds = 20

func (p *connStats) noteError(err error) {
	msg := errorKind(err)
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if _, ok := p.errors[msg]; ok || len(p.errors) < maxErrorKinds {
		p.errors[msg]++
	} else {
		p.errors["(other)"]++
	}
}

// errorKind strips the addresses from a network error, so that one cause
// is one kind: "dial tcp 127.0.0.2:0->127.0.0.1:8000: connect: cannot
// assign requested address" becomes "dial: connect: cannot assign
// requested address".
func errorKind(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Op + ": " + op.Err.Error()
	}
	s := err.Error()
	if strings.Contains(s, "too many open files") {
		return "too many open files (the open-files limit of this process is reached: use more workers)"
	}
	return s
}

// Close closes every connection with a normal close frame and stops the
// shards. Connections closed here do not count as disconnected.
func (p *Pool) Close() {
	p.closing.Store(true)
	p.owned.closeAll()
	p.stopShards()
	var wg sync.WaitGroup
	for _, s := range p.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range s.drain() {
				c.closeNormal()
				p.current.Add(-1)
			}
		}()
	}
	wg.Wait()
}

func (p *Pool) stopShards() {
	for _, s := range p.shards {
		s.stop()
	}
}
