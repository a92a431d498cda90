package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/heraldhq/herald/config"
)

// The internal listener (internal.address, Centrifugo's
// http_server.internal_port): routes puts the API, the metrics, the health
// checks and the admin UI on its mux instead of the main one.

// internalListenerTLS is the internal listener's TLS: its own certificates
// (internal.tls), else the main listener's unless internal.tls_external,
// as Centrifugo v6.9.1 chooses (internal/app/mux.go); nil: plain TCP.
func internalListenerTLS(cfg config.Config, main *listenerTLS, s *Server) (*listenerTLS, error) {
	if !cfg.InternalEnabled() {
		return nil, nil
	}
	own, err := newFilesTLS("internal.tls", cfg.Internal.TLS, s.log)
	if err != nil || own != nil {
		return own, err
	}
	if cfg.Internal.TLSExternal {
		return nil, nil
	}
	return main, nil
}

// startInternal serves the internal listener; nothing without one.
func (s *Server) startInternal() error {
	if s.internal == nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Internal.Address)
	if err != nil {
		return fmt.Errorf("internal listener on %s: %w", s.cfg.Internal.Address, err)
	}
	s.internalLn = ln
	if s.internalTLS != nil {
		s.internal.ErrorLog = httpErrorLog(s.log, "internal")
	}
	serving := s.internalTLS.listen(ln)
	go func() {
		err := s.internal.Serve(serving)
		if errors.Is(err, http.ErrServerClosed) {
			return
		}
		s.log.Error("internal listener stopped", "address", ln.Addr().String(), "error", err)
	}()
	s.log.Info("internal listener (API, metrics, health)", "address", ln.Addr().String(), "tls", s.internalTLS != nil)
	return nil
}

// shutdownInternal stops the internal listener after its in-flight
// requests, within ctx.
func (s *Server) shutdownInternal(ctx context.Context) error {
	if s.internal == nil {
		return nil
	}
	if err := s.internal.Shutdown(ctx); err != nil {
		return fmt.Errorf("internal: %w", err)
	}
	return nil
}

// closeInternal closes the internal listener at once (a later start-up
// step failed).
func (s *Server) closeInternal() {
	if s.internal != nil {
		_ = s.internal.Close()
	}
}

// InternalAddr is the internal listener's address, once started; "" when
// off.
func (s *Server) InternalAddr() string {
	if s.internalLn == nil {
		return ""
	}
	return s.internalLn.Addr().String()
}
