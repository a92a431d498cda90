package webtransport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	wt "github.com/quic-go/webtransport-go"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/guard"
)

// Server serves the WebTransport endpoint of one hub. ServeHTTP is safe
// for concurrent use.
type Server struct {
	hub *hub.Hub
	wt  *wt.Server
	cfg Config
}

// NewServer returns the endpoint of h. w upgrades the requests: its H3
// is the http3.Server whose handler leads here, configured with
// webtransport.ConfigureHTTP3Server. The origin is checked here
// (Config.CheckOrigin), so w's CheckOrigin is set to let every request
// through.
func NewServer(h *hub.Hub, w *wt.Server, cfg Config) *Server {
	w.CheckOrigin = func(*http.Request) bool { return true }
	return &Server{hub: h, wt: w, cfg: cfg.withDefaults()}
}

// ServeHTTP opens a session, takes the client's bidirectional stream and
// runs the connection until either side ends it. The encoding is JSON,
// or Protobuf with the query parameter cf_protocol=protobuf (what
// centrifuge-js appends).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.CheckOrigin(r) {
		http.Error(w, "webtransport: origin not allowed", http.StatusForbidden)
		return
	}
	// The session lives on the request's stream: a read deadline left on
	// it (one that bounded a request body) would end the session.
	if err := http.NewResponseController(w).SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.cfg.Logger.Debug("webtransport: clear the read deadline", "remote", r.RemoteAddr, "error", err)
	}
	sess, err := s.wt.Upgrade(w, r)
	if err != nil {
		s.cfg.Logger.Info("webtransport: session not opened", "remote", r.RemoteAddr, "error", err)
		http.Error(w, "webtransport: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.AcceptTimeout)
	str, err := sess.AcceptStream(ctx)
	cancel()
	if err != nil {
		s.cfg.Logger.Info("webtransport: no stream opened", "remote", r.RemoteAddr, "error", err)
		_ = sess.CloseWithError(wt.SessionErrorCode(protocol.DisconnectBadRequest), "no bidirectional stream")
		return
	}
	proto := protocol.TypeJSON
	if r.URL.Query().Get("cf_protocol") == "protobuf" {
		proto = protocol.TypeProtobuf
	}
	c := newConn(sess, str, proto, s.cfg, r.RemoteAddr)
	// A guard.Admission in front of this handler counts the session
	// against its address until it authenticates.
	client := guard.Open(r, func(ticket guard.Ticket) *hub.Client {
		return s.hub.Open(c, hub.ConnInfo{
			RemoteAddr: r.RemoteAddr,
			Transport:  hub.TransportWebTransport,
			Header:     r.Header,
			Admission:  ticket,
		})
	})
	c.onWriteFailed(func(err error) {
		s.cfg.Logger.Debug("webtransport write failed", "remote", r.RemoteAddr, "error", err)
		client.Disconnect(uint32(protocol.DisconnectWriteError), protocol.DisconnectWriteError.Reason())
	})
	s.cfg.Opened(r)
	hubClosing := s.read(client, str, proto, r.RemoteAddr)
	client.HandleClose()
	c.finish(hubClosing)
}

// read hands the client's frames to the hub until the stream ends or the
// hub closes the connection; it reports the latter.
func (s *Server) read(client *hub.Client, str io.Reader, proto protocol.Type, remote string) bool {
	rd := newReader(str, proto, s.cfg.MessageSizeLimit)
	for {
		frame, err := rd.next()
		if err != nil {
			if gone(err) {
				return false
			}
			// A message over the bound or a malformed prefix: the same
			// answer as a frame that does not decode.
			s.cfg.Logger.Info("webtransport: bad input", "remote", remote, "error", err)
			client.Disconnect(uint32(protocol.DisconnectBadRequest), protocol.DisconnectBadRequest.Reason()+": "+err.Error())
			return true
		}
		if !client.HandleFrame(frame) {
			return true
		}
	}
}

// gone reports a read error that is the stream's end (the client closed
// it or the session, the read deadline passed) rather than something the
// client sent.
func gone(err error) bool { return !errors.Is(err, errBadInput) }
