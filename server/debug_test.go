package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestDebugPprof: debug.enabled serves pprof at debug.handler_prefix on
// the internal listener when there is one, not on the main one, and on the
// main one otherwise, as Centrifugo's debug.enabled, and says so in a
// start-up warning; off, neither serves it.
func TestDebugPprof(t *testing.T) {
	start := func(enabled bool, internal, wantLog string) *Server {
		cfg := config.Default()
		cfg.Debug.Enabled, cfg.Debug.HandlerPrefix = enabled, "/dbg/pprof"
		cfg.Internal.Address = internal
		var logs testenv.LockedBuffer
		s := startServerLog(t, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		const warned = `level=WARN msg="debug.enabled: pprof is served`
		switch got := logs.String(); {
		case wantLog == "" && strings.Contains(got, warned):
			t.Errorf("debug off, yet warned:\n%s", got)
		case wantLog != "" && (!strings.Contains(got, warned) || !strings.Contains(got, wantLog)):
			t.Errorf("no start-up warning with %q in:\n%s", wantLog, got)
		}
		return s
	}
	get := func(addr, path string) int {
		code, _ := httpStatus(t, http.MethodGet, "http://"+addr+path, "")
		return code
	}

	s := start(true, "127.0.0.1:0", "path=/dbg/pprof/ listener=internal")
	if code := get(s.InternalAddr(), "/dbg/pprof/cmdline"); code != http.StatusOK {
		t.Errorf("internal listener, debug on: %d, want 200", code)
	}
	if code := get(s.Addr(), "/dbg/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("main listener beside an internal one, debug on: %d, want 404", code)
	}

	s = start(true, "", "path=/dbg/pprof/ listener=main")
	if code := get(s.Addr(), "/dbg/pprof/cmdline"); code != http.StatusOK {
		t.Errorf("main listener alone, debug on: %d, want 200", code)
	}

	s = start(false, "", "")
	if code := get(s.Addr(), "/dbg/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("debug off: %d, want 404", code)
	}
}

// TestH2CExternal: http.h2c_external serves HTTP/2 without TLS on the main
// listener, to a client that speaks it with prior knowledge, and HTTP/1.1
// still; without it, the main listener speaks HTTP/1.1 only.
func TestH2CExternal(t *testing.T) {
	h2c := &http.Client{Transport: &http.Transport{Protocols: func() *http.Protocols {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		return p
	}()}}
	t.Cleanup(h2c.CloseIdleConnections)
	for _, on := range []bool{true, false} {
		cfg := config.Default()
		cfg.Internal.Address = "127.0.0.1:0"
		cfg.HTTP.H2CExternal = on
		s := startServer(t, cfg)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		url := "http://" + s.Addr() + config.HealthzPath
		resp, err := h2c.Get(url)
		switch {
		case on && err != nil:
			t.Fatalf("h2c_external on: %v", err)
		case on && resp.ProtoMajor != 2:
			t.Errorf("h2c_external on: %s, want HTTP/2", resp.Proto)
		case !on && err == nil:
			t.Errorf("h2c_external off: %s answered HTTP/2 without TLS", resp.Proto)
		}
		if resp != nil {
			resp.Body.Close()
		}
		if code, _ := httpStatus(t, http.MethodGet, url, ""); on && code == 0 {
			t.Errorf("h2c_external on: HTTP/1.1 fails")
		}
	}
}
