//go:build linux

package main

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/coder/websocket"
)

// coderServer parks one goroutine per connection in Read with the
// library's defaults.
type coderServer struct {
	open *atomic.Int64
}

func newCoder(open *atomic.Int64) *coderServer { return &coderServer{open: open} }

func (s *coderServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	s.open.Add(1)
	go s.echo(c)
}

func (s *coderServer) echo(c *websocket.Conn) {
	defer c.CloseNow()
	defer s.open.Add(-1)
	ctx := context.Background()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}

func (s *coderServer) Shutdown() {}
