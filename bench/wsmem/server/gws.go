//go:build linux

package main

import (
	"net/http"
	"sync/atomic"

	"github.com/lxzan/gws"
)

// gwsServer parks one goroutine per connection in ReadLoop, with a 1 KiB
// read buffer as in the reference measurement.
type gwsServer struct {
	gws.BuiltinEventHandler
	up   *gws.Upgrader
	open *atomic.Int64
}

func newGWS(open *atomic.Int64) *gwsServer {
	s := &gwsServer{open: open}
	s.up = gws.NewUpgrader(s, &gws.ServerOption{ReadBufferSize: 1024})
	return s
}

func (s *gwsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := s.up.Upgrade(w, r)
	if err != nil {
		return
	}
	s.open.Add(1)
	go func() {
		defer s.open.Add(-1)
		c.ReadLoop()
	}()
}

func (s *gwsServer) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	_ = c.WriteMessage(m.Opcode, m.Bytes())
}

func (s *gwsServer) Shutdown() {}
