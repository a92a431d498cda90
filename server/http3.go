package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/quic-go/quic-go/http3"
	wt "github.com/quic-go/webtransport-go"

	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/webtransport"
)

// http3Listener is the main listener's HTTP/3 side (http.http3): the same
// handler over QUIC on the UDP port of the TCP listener, and WebTransport
// on it when webtransport.enabled. As in Centrifugo (internal/app/mux.go),
// only the main listener speaks HTTP/3.
type http3Listener struct {
	h3   *http3.Server
	wt   *wt.Server // nil without webtransport
	conn net.PacketConn
	done chan struct{} // closed when the serve loop has returned
	// altSvc is the Alt-Svc value that advertises the UDP port; set by
	// start, before the TCP listener serves.
	altSvc string
}

// newHTTP3 makes the HTTP/3 server before the routes are mounted, so that
// the WebTransport endpoint can be; nil without http.http3.
func (s *Server) newHTTP3() *http3Listener {
	if !s.cfg.HTTP.HTTP3.Enabled {
		return nil
	}
	l := &http3Listener{h3: &http3.Server{
		// webtransport-go hands this configuration to QUIC as it is, so
		// the ALPN it offers must be h3 already.
		TLSConfig:   http3.ConfigureTLSConfig(s.tls.conf),
		IdleTimeout: s.cfg.HTTP.IdleTimeoutOrDefault(),
	}}
	if s.cfg.WebTransport.Enabled {
		wt.ConfigureHTTP3Server(l.h3)
		l.wt = &wt.Server{H3: l.h3}
	}
	return l
}

// webTransportServer is the WebTransport endpoint of the node.
func (s *Server) webTransportServer(l *http3Listener) http.Handler {
	return webtransport.NewServer(s.hub, l.wt, webtransport.Config{
		Options:      s.cfg.WebTransport.Options,
		WriteTimeout: s.cfg.WebSocket.WriteTimeout,
		CheckOrigin:  guard.Origins(s.cfg.WebSocket.AllowedOrigins),
		Logger:       s.log,
	})
}

// serveHTTP3 makes h the HTTP/3 handler and returns the handler of the TCP
// listener: h with the Alt-Svc header that advertises HTTP/3.
func (l *http3Listener) serveHTTP3(h http.Handler) http.Handler {
	l.h3.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&h3Writer{ResponseWriter: w}, r)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Made here, not by SetQUICHeaders: the HTTP/3 server learns its
		// port from listeners of its own, and WebTransport serves the
		// socket in its stead. ma is quic-go's, 30 days.
		w.Header().Add("Alt-Svc", l.altSvc)
		h.ServeHTTP(w, r)
	})
}

// start listens on the UDP port of tcp, the main listener's address.
func (l *http3Listener) start(tcp net.Addr) error {
	conn, err := net.ListenPacket("udp", tcp.String())
	if err != nil {
		return fmt.Errorf("http.http3: listen on UDP %s: %w", tcp, err)
	}
	l.conn = conn
	_, port, _ := net.SplitHostPort(conn.LocalAddr().String())
	l.altSvc = `h3=":` + port + `"; ma=2592000`
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		if l.wt != nil {
			_ = l.wt.Serve(conn)
		} else {
			_ = l.h3.Serve(conn)
		}
	}()
	return nil
}

// Addr is the UDP address HTTP/3 is served on.
func (l *http3Listener) Addr() net.Addr { return l.conn.LocalAddr() }

// shutdown ends the HTTP/3 side: gracefully (GOAWAY, then waiting for
// requests until ctx ends) for HTTP/3 alone; WebTransport sessions are
// closed, the hub having closed their connections before.
func (l *http3Listener) shutdown(ctx context.Context) error {
	if l == nil || l.conn == nil {
		return nil
	}
	var err error
	if l.wt != nil {
		err = l.wt.Close()
	} else if err = l.h3.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = nil // Shutdown closed what was left
	}
	cerr := l.conn.Close()
	<-l.done
	if err == nil && cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("http.http3: %w", err)
	}
	return nil
}

// close ends the HTTP/3 side at once (a start that failed later).
func (l *http3Listener) close() {
	if l == nil || l.conn == nil {
		return
	}
	if l.wt != nil {
		_ = l.wt.Close()
	} else {
		_ = l.h3.Close()
	}
	_ = l.conn.Close()
	<-l.done
}
