package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/transport/tlsconf"
	"github.com/heraldhq/herald/transport/websocket"
)

// httpProtos are offered over ALPN on a TLS listener: HTTP/2 for the API
// and the HTTP transports, HTTP/1.1 for everything else and for WebSocket
// upgrades (browsers open WebSocket connections with HTTP/1.1 only, and
// Go's HTTP/2 server leaves extended CONNECT off).
var httpProtos = []string{"h2", "http/1.1"}

// listenerTLS is the TLS of one listener: the configuration its
// handshakes use and, for certificate files, what Reload reads again.
type listenerTLS struct {
	conf  *tls.Config
	files *tlsconf.Files    // nil with ACME
	acme  *tlsconf.Autocert // nil with files
}

// newMainTLS sets up the main listener's TLS; nil when it serves plain
// TCP.
func newMainTLS(cfg config.Config, log *slog.Logger) (*listenerTLS, error) {
	if cfg.TLSAutocert.Enabled {
		a, err := tlsconf.NewAutocert(cfg.TLSAutocert, cfg.TLS, log)
		if err != nil {
			return nil, config.TLSError("tls_autocert", err)
		}
		return &listenerTLS{conf: a.TLSConfig(httpProtos...), acme: a}, nil
	}
	return newFilesTLS("tls", cfg.TLS, log)
}

// newFilesTLS sets up TLS from certificate files; nil when cfg has none.
func newFilesTLS(key string, cfg tlsconf.Config, log *slog.Logger) (*listenerTLS, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	f, err := tlsconf.New(cfg, log.With("listener", key))
	if err != nil {
		return nil, config.TLSError(key, err)
	}
	return &listenerTLS{conf: f.TLSConfig(httpProtos...), files: f}, nil
}

// listen wraps ln in TLS when t is set.
func (t *listenerTLS) listen(ln net.Listener) net.Listener {
	if t == nil {
		return ln
	}
	return tls.NewListener(ln, t.conf)
}

// wsPoller is the WebSocket read path: the epoll path needs the socket's
// file descriptor, which a TLS connection does not give, so "auto" means
// portable when the listener serves TLS (config.Validate refuses "epoll").
func wsPoller(cfg config.Config) websocket.Poller {
	p := websocket.Poller(cfg.WebSocket.Poller)
	if cfg.TLSEnabled() && (p == "" || p == websocket.PollerAuto) {
		return websocket.PollerPortable
	}
	return p
}

// ReloadTLS reads the certificate files of every listener again (on
// SIGHUP). Open connections keep going; a file that does not load leaves
// that listener's previous certificate in place, and the error says which.
// Certificates obtained over ACME renew themselves and are not affected.
func (s *Server) ReloadTLS() error {
	var errs []error
	if s.tls != nil && s.tls.files != nil {
		if err := s.tls.files.Reload(); err != nil {
			errs = append(errs, config.TLSError("tls", err))
		}
	}
	if s.adminTLS != nil {
		if err := s.adminTLS.files.Reload(); err != nil {
			errs = append(errs, config.TLSError("admin.tls", err))
		}
	}
	if s.internalTLS != nil && s.internalTLS != s.tls {
		if err := s.internalTLS.files.Reload(); err != nil {
			errs = append(errs, config.TLSError("internal.tls", err))
		}
	}
	if s.uniGRPC != nil && s.uniGRPC.tls != nil {
		if err := s.uniGRPC.tls.files.Reload(); err != nil {
			errs = append(errs, config.TLSError("uni_grpc.tls", err))
		}
	}
	if s.grpc != nil && s.grpc.tls != nil {
		if err := s.grpc.tls.files.Reload(); err != nil {
			errs = append(errs, config.TLSError("grpc_api.tls", err))
		}
	}
	return errors.Join(errs...)
}

// startACMEChallenge serves the HTTP-01 challenge on
// tls_autocert.http_address, and redirects other requests there to https.
func (s *Server) startACMEChallenge() error {
	if s.tls == nil || s.tls.acme == nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.TLSAutocert.HTTPAddress)
	if err != nil {
		return fmt.Errorf("tls_autocert.http_address: listen on %s: %w", s.cfg.TLSAutocert.HTTPAddress, err)
	}
	s.acmeLn = ln
	s.acmeHTTP = &http.Server{Handler: s.tls.acme.HTTPHandler(nil), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second}
	go func() { _ = s.acmeHTTP.Serve(ln) }()
	s.log.Info("ACME HTTP-01 challenge listener", "address", ln.Addr().String())
	return nil
}

// ACMEChallengeAddr is the HTTP-01 challenge listener's address, once
// started; "" without tls_autocert.
func (s *Server) ACMEChallengeAddr() string {
	if s.acmeLn == nil {
		return ""
	}
	return s.acmeLn.Addr().String()
}

// requireClientCert answers 403 to a request whose connection presented no
// client certificate that verified (http_api.require_client_cert).
func requireClientCert(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			writeStatus(w, http.StatusForbidden, map[string]any{"error": map[string]any{
				"code":    http.StatusForbidden,
				"message": "http_api.require_client_cert: the server API needs a client certificate signed by the CA of tls.client_ca_file",
			}})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// httpErrorLog routes the HTTP server's own error lines into log: failed
// TLS handshakes (scanners, clients that do not trust the certificate, a
// name outside tls_autocert.host_whitelist) at debug level, so that they
// do not flood the log, and anything else (accept errors) as warnings.
func httpErrorLog(log *slog.Logger, listener string) *stdlog.Logger {
	return stdlog.New(errorLogWriter{log: log, listener: listener}, "", 0)
}

type errorLogWriter struct {
	log      *slog.Logger
	listener string
}

func (w errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, msg, "listener", w.listener)
	return len(p), nil
}
