package server

import (
	"github.com/heraldhq/herald/config"

	"context"
	"net/http"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
)

// TestIPRateLimitBehindProxy: from a trusted proxy, each forwarded client
// has its own budget and cannot escape it by prepending addresses; from
// an untrusted peer, X-Forwarded-For changes nothing.
func TestIPRateLimitBehindProxy(t *testing.T) {
	dial := func(s *Server, xff string) int {
		t.Helper()
		h := http.Header{}
		if xff != "" {
			h.Set("X-Forwarded-For", xff)
		}
		d := gws.Dialer{HandshakeTimeout: 5 * time.Second}
		conn, resp, err := d.Dial("ws://"+s.Addr()+WebSocketPath, h)
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		if resp.Body != nil {
			_ = resp.Body.Close()
		}
		if conn != nil {
			t.Cleanup(func() { _ = conn.Close() })
		}
		return resp.StatusCode
	}
	start := func(trusted []string) *Server {
		cfg := config.Default()
		cfg.Shutdown.DrainWindow = time.Duration(100 * time.Millisecond)
		cfg.WebSocket.Rate = 0.001
		cfg.WebSocket.Burst = 1
		cfg.WebSocket.TrustedProxies = trusted
		s := startServer(t, cfg)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		return s
	}

	s := start([]string{"127.0.0.1"})
	for _, step := range []struct {
		xff  string
		want int
	}{
		{"198.51.100.1", http.StatusSwitchingProtocols},
		{"198.51.100.1", http.StatusTooManyRequests},
		{"203.0.113.9, 198.51.100.1", http.StatusTooManyRequests}, // a spoofed entry does not help
		{"198.51.100.2", http.StatusSwitchingProtocols},
	} {
		if got := dial(s, step.xff); got != step.want {
			t.Fatalf("behind a trusted proxy, X-Forwarded-For %q: %d, want %d", step.xff, got, step.want)
		}
	}

	s = start(nil)
	if got := dial(s, "198.51.100.1"); got != http.StatusSwitchingProtocols {
		t.Fatalf("first connection: %d", got)
	}
	if got := dial(s, "198.51.100.2"); got != http.StatusTooManyRequests {
		t.Fatalf("untrusted peer with a new X-Forwarded-For: %d, want 429", got)
	}
}
