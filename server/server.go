// Package server wires a Herald node together: configuration, the engine,
// the hub, the WebSocket transport and the HTTP endpoints.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// Version is Herald's version, sent to clients in the connect reply.
const Version = "0.1.0"

// WebSocketPath is where clients connect, as in Centrifugo.
const WebSocketPath = "/connection/websocket"

// Server is one running Herald node.
type Server struct {
	cfg  Config
	log  *slog.Logger
	hub  *hub.Hub
	ws   *websocket.Server
	http *http.Server
	ln   net.Listener
	done chan error
}

// New builds a node from cfg; Start makes it listen.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var tokens hub.TokenVerifier
	if cfg.Client.Token.configured() {
		v, err := auth.NewVerifier(cfg.Client.Token.auth())
		if err != nil {
			return nil, fmt.Errorf("client.token: %w", err)
		}
		tokens = v
	}
	h, err := hub.New(hub.Config{
		Engine:   newEngine(cfg.Engine),
		Name:     cfg.Name,
		Version:  Version,
		Channels: cfg.Channel,
		Client:   cfg.Client.ClientConfig,
		Tokens:   tokens,
		Logger:   log,
	})
	if err != nil {
		return nil, err
	}
	ws, err := websocket.NewServer(websocket.Config{
		MaxMessageSize: cfg.WebSocket.MessageSizeLimit,
		WriteTimeout:   cfg.WebSocket.WriteTimeout.D(),
		ReadTimeout:    cfg.WebSocket.ReadTimeout.D(),
		CheckOrigin:    originChecker(cfg.WebSocket.AllowedOrigins),
		Logger:         log,
	}, func(c *websocket.Conn, r *http.Request) websocket.Session {
		return h.NewClient(c, c.RemoteAddr())
	})
	if err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(WebSocketPath, ws)
	s := &Server{
		cfg: cfg, log: log, hub: h, ws: ws,
		http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	return s, nil
}

func newEngine(cfg EngineConfig) engine.Engine {
	return memory.New(memory.Options{})
}

// Hub is the node's hub, for embedding and tests.
func (s *Server) Hub() *hub.Hub { return s.hub }

// Start starts the engine and the hub and begins accepting connections.
func (s *Server) Start(ctx context.Context) error {
	if err := s.hub.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Address)
	if err != nil {
		_ = s.hub.Shutdown(ctx)
		return fmt.Errorf("listen on %s: %w", s.cfg.Address, err)
	}
	s.ln = ln
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	s.log.Info("herald listening", "address", ln.Addr().String(), "websocket", WebSocketPath, "engine", s.cfg.Engine.Type, "version", Version)
	return nil
}

// Addr is the address the node listens on, once started.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Done reports the HTTP server stopping on its own, with its error.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting, closes every client with 3001 so they
// reconnect elsewhere, and stops the engine.
func (s *Server) Shutdown(ctx context.Context) error {
	var errs []error
	if err := s.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("http: %w", err))
	}
	if err := s.hub.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.ws.Close(); err != nil {
		errs = append(errs, fmt.Errorf("websocket: %w", err))
	}
	return errors.Join(errs...)
}

// originChecker allows browsers from the listed origins; with none listed,
// only pages served from the same host (or clients that send no Origin,
// which are not browsers).
func originChecker(allowed []string) func(r *http.Request) bool {
	if slices.Contains(allowed, "*") {
		return func(*http.Request) bool { return true }
	}
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true
		}
		u, err := url.Parse(origin)
		if err != nil {
			return false
		}
		if strings.EqualFold(u.Host, r.Host) {
			return true
		}
		for _, a := range allowed {
			if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
				return true
			}
		}
		return false
	}
}
