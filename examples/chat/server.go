package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// websocketPath is where the page's centrifuge-js client connects.
const websocketPath = "/connection/websocket"

// server is the whole chat: a hub on the memory engine (one process, no
// database), the WebSocket transport in front of it, and the page.
type server struct {
	hub  *hub.Hub
	ws   *websocket.Server
	http *http.Server
	done chan error // the HTTP server's end, with its error
}

// newServer wires the hub, the transport and the page. centrifugeJS is
// the centrifuge-js browser bundle the page loads.
func newServer(centrifugeJS []byte, log *slog.Logger) (*server, error) {
	if len(centrifugeJS) == 0 {
		return nil, errors.New("the centrifuge-js bundle is empty")
	}
	room := newRoom(lobby, log)
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{
			Name: "chat",
			NamespaceOptions: hub.NamespaceOptions{
				// Only the lobby exists; signed-in users may subscribe.
				ChannelRegex:            "^lobby$",
				AllowSubscribeForClient: true,
				// Presence is who is online; join and leave events tell
				// pages when to ask again. They go to subscribers that
				// ask for them and may read presence.
				Presence:                   true,
				JoinLeave:                  true,
				AllowPresenceForSubscriber: true,
			},
		}}},
		Handlers: hub.Handlers{
			OnConnecting: authenticate,
			OnRPC:        room.onRPC,
			OnDisconnect: room.leave,
		},
		Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("new hub: %w", err)
	}
	// The handlers reach the hub through the room; they run only once
	// clients connect, after this.
	room.hub = h
	ws, err := websocket.NewServer(websocket.Config{Logger: log}, func(c *websocket.Conn, _ *http.Request) websocket.Session {
		return h.NewClient(c, c.RemoteAddr())
	})
	if err != nil {
		return nil, fmt.Errorf("websocket transport: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+websocketPath, ws)
	mux.Handle("GET /{$}", pageHandler())
	mux.Handle("GET /centrifuge.js", scriptHandler(centrifugeJS))
	return &server{
		hub:  h,
		ws:   ws,
		http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}, nil
}

// start starts the hub and serves HTTP on ln.
func (s *server) start(ctx context.Context, ln net.Listener) error {
	if err := s.hub.Start(ctx); err != nil {
		_ = s.ws.Close()
		return fmt.Errorf("start hub: %w", err)
	}
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return nil
}

// shutdown stops taking requests, closes every client with 3001 (the
// pages reconnect when the server is back), then stops the transport.
func (s *server) shutdown(ctx context.Context) error {
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
