package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

const (
	subprotocolProtobuf = "centrifuge-protobuf"
	subprotocolJSON     = "centrifuge-json"
	handshakeTimeout    = 10 * time.Second
	// readBufferSize holds a connect and a few subscribes; the buffer
	// lives as long as the connection.
	readBufferSize = 512
)

// serveWebSocket accepts connections until Close.
func (s *Server) serveWebSocket() {
	if s.wsHTTP != nil {
		// Serve returns at once if Close came first.
		if err := s.wsHTTP.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("websocket server", "error", err)
		}
		return
	}
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, most likely: let some close.
			s.log.Warn("accept", "error", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c := &conn{nc: nc}
		if !s.register(c) {
			nc.Close()
			return
		}
		go s.upgradeRaw(c)
	}
}

// upgradeRaw runs the handshake on the accepted socket itself, then serves
// the connection on this goroutine.
func (s *Server) upgradeRaw(c *conn) {
	defer s.finish(c)
	u := ws.Upgrader{
		Protocol: func(p []byte) bool { return string(p) == subprotocolProtobuf || string(p) == subprotocolJSON },
		OnRequest: func(uri []byte) error {
			if legacyProtobuf(string(uri)) {
				c.proto = protocol.TypeProtobuf
			}
			return nil
		},
	}
	_ = c.nc.SetDeadline(time.Now().Add(handshakeTimeout))
	hs, err := u.Upgrade(c.nc)
	if err != nil {
		s.log.Debug("upgrade", "remote", c.nc.RemoteAddr(), "error", err)
		return
	}
	_ = c.nc.SetDeadline(time.Time{})
	if hs.Protocol == subprotocolProtobuf {
		c.proto = protocol.TypeProtobuf
	}
	s.stats.accepted.Add(1)
	// The client waits for the handshake's answer before it sends a frame,
	// so the upgrader's reader buffered nothing of the stream.
	s.serve(c, bufio.NewReaderSize(c.nc, readBufferSize))
}

// upgradeHTTP is Herald's handshake: net/http parses the request and
// ws.HTTPUpgrader hijacks the connection.
func (s *Server) upgradeHTTP(w http.ResponseWriter, r *http.Request) {
	up := ws.HTTPUpgrader{
		Timeout:  handshakeTimeout,
		Protocol: func(p string) bool { return p == subprotocolProtobuf || p == subprotocolJSON },
	}
	nc, rw, hs, err := up.Upgrade(r, w)
	if err != nil {
		if nc != nil {
			nc.Close()
		}
		return
	}
	c := &conn{nc: nc}
	if hs.Protocol == subprotocolProtobuf || legacyProtobuf(r.URL.RequestURI()) {
		c.proto = protocol.TypeProtobuf
	}
	if !s.register(c) {
		nc.Close()
		return
	}
	defer s.finish(c)
	s.stats.accepted.Add(1)
	var rd io.Reader = nc
	if n := rw.Reader.Buffered(); n > 0 {
		early, _ := rw.Reader.Peek(n)
		rd = io.MultiReader(bytes.NewReader(bytes.Clone(early)), nc)
	}
	s.serve(c, bufio.NewReaderSize(rd, readBufferSize))
}

// legacyProtobuf reports the format=protobuf or cf_protocol=protobuf query
// parameters that also select Protobuf.
func legacyProtobuf(uri string) bool {
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return false
	}
	q := u.Query()
	return q.Get("format") == "protobuf" || q.Get("cf_protocol") == "protobuf"
}
