package websocket

import (
	"errors"
	"net/http"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"

	"github.com/heraldhq/herald/protocol"
)

// Subprotocols offered to clients.
const (
	SubprotocolJSON     = "centrifuge-json"
	SubprotocolProtobuf = "centrifuge-protobuf"
)

// ServeHTTP upgrades the request to a WebSocket connection (mounted at
// /connection/websocket by the server layer). After the upgrade the
// connection belongs to the read path and ServeHTTP returns.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.upgrade(w, r, false, s.accept)
}

// upgrade upgrades r and hands the connection to accept, then to the read
// path. A unidirectional connection (uni) negotiates no subprotocol and is
// always JSON.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request, uni bool, accept AcceptFunc) {
	if !s.enter() {
		http.Error(w, "server shutting down", http.StatusServiceUnavailable)
		return
	}
	// Until the connection is registered, this upgrade holds the count
	// that Close waits for; registered, the connection holds it until it
	// is finished.
	registered := false
	defer func() {
		if !registered {
			s.live.Done()
		}
	}()
	if !s.cfg.CheckOrigin(r) {
		origin := r.Header.Get("Origin")
		if s.refused.shouldLog(origin, time.Now()) {
			s.log.Warn("websocket origin refused (403)", "origin", origin, "host", r.Host, "remote", r.RemoteAddr, "fix", s.cfg.OriginHint)
		}
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	hr := handshakeRequest(r, uni)
	up := ws.HTTPUpgrader{Timeout: s.cfg.WriteTimeout}
	if !uni {
		up.Protocol = func(p string) bool { return p == SubprotocolJSON || p == SubprotocolProtobuf }
	}
	// The negotiation state lives only for this upgrade.
	var ext wsflate.Extension
	if s.flate != nil {
		ext.Parameters = deflateParams
		up.Negotiate = func(offer httphead.Option) (httphead.Option, error) {
			accept, err := ext.Negotiate(offer)
			if err != nil {
				// An offer whose parameters are unknown or invalid is
				// declined, not the handshake failed (RFC 7692, section
				// 5: the server declines an offer it cannot accept); the
				// upgrader would answer it with 500.
				return httphead.Option{}, nil
			}
			return accept, nil
		}
	}
	nc, rw, hs, err := up.Upgrade(hr, w)
	if err != nil {
		// The upgrader has answered with an HTTP error already.
		s.log.Debug("websocket upgrade failed", "remote", r.RemoteAddr, "error", err)
		if nc != nil {
			_ = nc.Close()
		}
		return
	}
	c := &Conn{srv: s, nc: nc, proto: protocol.TypeJSON, gen: s.gen.Add(1)}
	c.pace.at = time.Now().UnixNano()
	if !uni {
		c.proto = requestedProtocol(r, hs.Protocol)
	}
	_, c.deflate = ext.Accepted()
	// The upgrading goroutine owns the read side until it hands it to the
	// read path below.
	c.state.Store(stBusy)
	var early []byte
	if n := rw.Reader.Buffered(); n > 0 {
		// The client sent frames right behind its handshake.
		b, _ := rw.Reader.Peek(n)
		early = append([]byte(nil), b...)
	}
	// rw, net/http's buffers, is not kept: an idle connection holds none.

	if err := s.path.attach(c); err != nil {
		s.log.Error("websocket connection not usable", "remote", c.RemoteAddr(), "poller", s.poller, "error", err)
		s.reject(c, closeInternalError, "internal error")
		return
	}
	c.receiver = accept(c, r)
	if c.receiver == nil {
		s.reject(c, closeInternalError, "internal error")
		return
	}
	if err := s.register(c); err != nil {
		if errors.Is(err, errServerClosing) {
			s.reject(c, closeShutdown, "shutdown")
		} else {
			s.log.Error("websocket register", "remote", c.RemoteAddr(), "error", err)
			s.reject(c, closeInternalError, "internal error")
		}
		c.receiver.HandleClose()
		return
	}
	registered = true
	s.path.start(c, early)
}

// reject closes a connection that never reached the read path.
func (s *Server) reject(c *Conn, code uint32, reason string) {
	if _, ok := c.markClosed(); ok {
		c.wmu.Lock()
		_ = c.writeLocked(ws.OpClose, closeBody(code, reason))
		c.wmu.Unlock()
	}
	c.state.Store(stClosed | stFinished)
	// Under the write lock, as in finish: a write in progress may be
	// about to write to the socket's fd by number (tryWrite).
	c.wmu.Lock()
	_ = c.nc.Close()
	c.wmu.Unlock()
}

// enter counts an upgrade in Server.live, unless the server is closing. The
// count is taken under s.mu, where Close sets closing, so it happens before
// Close's Wait: Close then also waits for upgrades still on their way to
// the read path, and a connection that register refuses has had its
// HandleClose when Close returns.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.live.Add(1)
	return true
}

// requestedProtocol picks the connection's encoding: the centrifuge-protobuf
// subprotocol or the legacy format / cf_protocol query parameters select
// Protobuf, anything else JSON.
func requestedProtocol(r *http.Request, subprotocol string) protocol.Type {
	if subprotocol == SubprotocolProtobuf {
		return protocol.TypeProtobuf
	}
	if r.URL.RawQuery == "" {
		return protocol.TypeJSON // most clients: no query to parse into a map
	}
	q := r.URL.Query()
	if q.Get("format") == "protobuf" || q.Get("cf_protocol") == "protobuf" {
		return protocol.TypeProtobuf
	}
	return protocol.TypeJSON
}
