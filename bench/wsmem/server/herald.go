//go:build linux

package main

import (
	"net/http"
	"sync/atomic"

	"github.com/heraldhq/herald/transport/websocket"
)

// heraldServer is Herald's own transport (gobwas/ws + epoll) with a trivial
// echo Session, standing in for the hub.
type heraldServer struct {
	*websocket.Server
}

type echoSession struct {
	c    *websocket.Conn
	open *atomic.Int64
}

func (s *echoSession) HandleFrame(frame []byte) bool { return s.c.WriteFrame(frame) == nil }
func (s *echoSession) HandleClose()                  { s.open.Add(-1) }

func newHerald(open *atomic.Int64) (echoServer, error) {
	srv, err := websocket.NewServer(websocket.Config{}, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		open.Add(1)
		return &echoSession{c: c, open: open}
	})
	if err != nil {
		return nil, err
	}
	return heraldServer{srv}, nil
}

func (h heraldServer) Shutdown() { _ = h.Close() }
