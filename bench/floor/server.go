package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Config configures a floor server.
type Config struct {
	// Addr is the WebSocket listener (any path is accepted with
	// Upgrade "raw"; /connection/websocket with "http").
	Addr string
	// APIAddr serves POST /api/publish and /api/batch, GET /stats and
	// GET /healthz.
	APIAddr string
	// Upgrade is "raw" (ws.Upgrader on the accepted socket: the cheapest
	// handshake) or "http" (net/http and ws.HTTPUpgrader, as Herald).
	Upgrade string
	// Writers is the number of writer goroutines per channel (1).
	Writers int
	// Bare answers the first frame with canned connect and subscribe
	// replies and ignores everything else (the connection-rate floor).
	Bare bool
	// Secret, when set, verifies connect tokens (HS256/384/512).
	Secret string
	// APIKey, when set, is required in X-API-Key (or "apikey KEY").
	APIKey string
	// WriteTimeout, when above 0, sets a write deadline before each write
	// (Herald does; it is no syscall, but it resets a runtime timer).
	WriteTimeout time.Duration
	// MaxPending bounds each writer's unwritten bytes per format (64 MiB).
	MaxPending int
	// RoundInterval, when above 0, is the least time between the starts
	// of a writer's rounds (0: a round as soon as something is pending).
	RoundInterval time.Duration
	// MaxFrame bounds one client frame (64 KiB).
	MaxFrame int64
	// RedisAddr, when set, relays publications through the Redis at this
	// address (relay.go): the API publishes into Redis, and subscribers
	// get what Redis sends.
	RedisAddr string
	// RedisPrefix prefixes the Redis channels ("floor.").
	RedisPrefix string
}

// Server is a running floor server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	replies *replies
	parser  *jwt.Parser // nil without Secret
	key     []byte
	stats   stats

	ln, apiLn net.Listener
	wsHTTP    *http.Server // Upgrade "http"
	api       *http.Server

	relay *relay // nil without RedisAddr

	// ctx ends with Close: the writers stop, and the relay's reads and
	// waits end.
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	closing  bool
	conns    map[*conn]struct{}
	channels map[string]*channel
}

// Start listens and serves until Close.
func Start(cfg Config, log *slog.Logger) (*Server, error) {
	if cfg.Writers < 1 {
		return nil, fmt.Errorf("writers %d: want at least 1", cfg.Writers)
	}
	if cfg.Upgrade != "raw" && cfg.Upgrade != "http" {
		return nil, fmt.Errorf("upgrade %q: want raw or http", cfg.Upgrade)
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 64 << 20
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = 64 << 10
	}
	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = "floor."
	}
	r, err := newReplies()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: log, replies: r,
		conns: map[*conn]struct{}{}, channels: map[string]*channel{},
	}
	if cfg.Secret != "" {
		// What Herald's verifier does for an HMAC key, without its claims:
		// the signature and the registered claims' times.
		s.parser = jwt.NewParser(jwt.WithValidMethods([]string{"HS256", "HS384", "HS512"}))
		s.key = []byte(cfg.Secret)
	}
	if cfg.RedisAddr != "" {
		if s.relay, err = dialRelay(cfg.RedisAddr, cfg.RedisPrefix, log); err != nil {
			return nil, err
		}
	}
	if s.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		s.closeRelay()
		return nil, fmt.Errorf("websocket listener: %w", err)
	}
	if s.apiLn, err = net.Listen("tcp", cfg.APIAddr); err != nil {
		s.ln.Close()
		s.closeRelay()
		return nil, fmt.Errorf("api listener: %w", err)
	}
	// Made once nothing more can fail, so that a failed Start leaves no
	// context uncancelled; nothing reads it before Start returns but the
	// relay's goroutine below.
	s.ctx, s.stop = context.WithCancel(context.Background())
	if s.relay != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.relay.run(s.ctx, func(channel string, data []byte) {
				s.stats.relayed.Add(1)
				if err := s.deliver(channel, data); err != nil {
					log.Debug("relayed publication", "channel", channel, "error", err)
				}
			})
		}()
	}
	s.api = &http.Server{Handler: s.apiHandler(), ReadHeaderTimeout: 10 * time.Second}
	if cfg.Upgrade == "http" {
		mux := http.NewServeMux()
		mux.HandleFunc("/connection/websocket", s.upgradeHTTP)
		s.wsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: handshakeTimeout}
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.api.Serve(s.apiLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("api server", "error", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		s.serveWebSocket()
	}()
	return s, nil
}

// Addr and APIAddr are the listeners' addresses.
func (s *Server) Addr() string    { return s.ln.Addr().String() }
func (s *Server) APIAddr() string { return s.apiLn.Addr().String() }

// Stats returns the counters.
func (s *Server) Stats() Snapshot {
	s.mu.Lock()
	open := len(s.conns)
	s.mu.Unlock()
	return s.stats.snapshot(open)
}

// Close stops the listeners, closes every connection and waits for every
// goroutine of the server.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.api.Close()
	if s.wsHTTP != nil {
		if herr := s.wsHTTP.Close(); err == nil {
			err = herr
		}
	} else if lerr := s.ln.Close(); err == nil {
		err = lerr
	}
	for _, c := range conns {
		c.kill()
	}
	s.stop()
	if rerr := s.closeRelay(); err == nil {
		err = rerr
	}
	s.wg.Wait()
	return err
}

// closeRelay closes the Redis connections, which ends the relay's reads.
func (s *Server) closeRelay() error {
	if s.relay == nil {
		return nil
	}
	return s.relay.close()
}

// register tracks c, and the goroutine that will serve it, for Close; false
// when the server is closing. Counting the goroutine under s.mu, before
// Close sets closing, keeps wg.Add ahead of Close's wg.Wait.
func (s *Server) register(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

// finish closes c and forgets it; its serving goroutine ends.
func (s *Server) finish(c *conn) {
	c.kill()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// channel returns the channel named name, nil when nobody joined it.
func (s *Server) channel(name string) *channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.channels[name]
}

// create returns channel name, starting its writers when this call made
// it (made); nil when the server closes.
func (s *Server) create(name string) (ch *channel, made bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch = s.channels[name]; ch != nil || s.closing {
		return ch, false
	}
	ch = newChannel(s.cfg.Writers, writerOptions{
		maxPending: s.cfg.MaxPending, writeTimeout: s.cfg.WriteTimeout, roundInterval: s.cfg.RoundInterval,
	}, &s.stats)
	if s.relay == nil {
		close(ch.ready)
	}
	s.channels[name] = ch
	for _, w := range ch.writers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			w.run(s.ctx.Done())
		}()
	}
	return ch, true
}

// errClosing ends a join that the server's Close interrupted.
var errClosing = errors.New("server closing")

// join returns channel name for a new subscriber once it is ready: with
// -redis, the call that made it subscribes the node in Redis, and every
// subscriber waits for the confirmation. nil, nil when the server closes.
func (s *Server) join(name string) (*channel, error) {
	ch, made := s.create(name)
	if ch == nil {
		return nil, nil
	}
	if made && s.relay != nil {
		ch.err = s.relay.subscribe(s.ctx, name)
		close(ch.ready)
	}
	select {
	case <-ch.ready:
		return ch, ch.err
	case <-s.ctx.Done():
		return nil, errClosing
	}
}
