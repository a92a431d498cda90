//go:build linux

package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// hubServer is the whole Herald connection path: the transport and the
// hub on the memory engine, as `herald serve` runs it. Clients connect
// anonymously and subscribe to one shared channel (client -mode hub).
type hubServer struct {
	*websocket.Server
	hub *hub.Hub
}

type countedSession struct {
	*hub.Client
	open *atomic.Int64
}

func (s countedSession) HandleClose() {
	s.Client.HandleClose()
	s.open.Add(-1)
}

func newHub(open *atomic.Int64) (echoServer, error) {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true,
		}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	if err := h.Start(context.Background()); err != nil {
		return nil, err
	}
	srv, err := websocket.NewServer(websocket.Config{}, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		open.Add(1)
		return countedSession{Client: h.NewClient(c, c.RemoteAddr()), open: open}
	})
	if err != nil {
		return nil, err
	}
	return hubServer{Server: srv, hub: h}, nil
}

func (h hubServer) Shutdown() {
	_ = h.hub.Shutdown(context.Background())
	_ = h.Close()
}
