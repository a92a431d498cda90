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
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/websocket"
)

// websocketPath is where the page's centrifuge-js client connects.
const websocketPath = "/connection/websocket"

// server is the whole chat: a hub on the memory engine (one process, no
// database), the WebSocket transport in front of it behind admission
// control, and the page.
type server struct {
	hub   *hub.Hub
	ws    *websocket.Server
	adm   *guard.Admission
	http  *http.Server
	drain time.Duration // how long shutdown spreads the clients' closes over
	done  chan error    // the HTTP server's end, with its error
}

// limits protect the chat from clients that open connections and never
// enter a name, or open them too fast (guard.Config says more).
type limits struct {
	// maxUnauthenticated bounds the connections that have not sent a
	// name yet; one address may hold a tenth of them. -1: no bound.
	maxUnauthenticated int
	// rate is how many connections a second one address may open, with
	// a burst of twice as many. -1: no limit.
	rate float64
	// drain is how long shutdown spreads the clients' closes over, so
	// that the pages do not all reconnect at the same instant.
	drain time.Duration
}

// defaultLimits suit a chat room: a page connects once and reconnects
// rarely.
func defaultLimits() limits {
	return limits{maxUnauthenticated: 1000, rate: 20, drain: time.Second}
}

// newServer wires the hub, the transport and the page. centrifugeJS is
// the centrifuge-js browser bundle the page loads.
func newServer(centrifugeJS []byte, lim limits, log *slog.Logger) (*server, error) {
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
	// Admission refuses connections before the upgrade: while the chat
	// shuts down, past the bound on connections that have not sent a
	// name (per server and per address), and past an address's rate.
	adm, err := guard.New(guard.Config{
		MaxUnauthenticated: lim.maxUnauthenticated,
		Rate:               lim.rate,
		Pending:            h.NumPending,
		Logger:             log,
	})
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	ws, err := websocket.NewServer(websocket.Config{Logger: log}, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		// The ticket counts the connection against its address until it
		// has sent a name (or gone).
		return guard.Open(r, func(ticket guard.Ticket) websocket.Receiver {
			return h.Open(c, hub.ConnInfo{RemoteAddr: c.RemoteAddr(), Admission: ticket})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("websocket transport: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+websocketPath, adm.Handler(ws))
	mux.Handle("GET /{$}", pageHandler())
	mux.Handle("GET /centrifuge.js", scriptHandler(centrifugeJS))
	return &server{
		hub:   h,
		ws:    ws,
		adm:   adm,
		http:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		drain: lim.drain,
		done:  make(chan error, 1),
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

// shutdown refuses new connections (503), closes every client with 3001
// spread over the drain time (the pages reconnect when the server is
// back), stops taking requests, then stops the transport.
func (s *server) shutdown(ctx context.Context) error {
	s.adm.Drain()
	var errs []error
	if err := s.hub.Drain(ctx, s.drain); err != nil {
		errs = append(errs, fmt.Errorf("drain: %w", err))
	}
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
