package server

import (
	"github.com/heraldhq/herald/config"

	"context"
	"net/http"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
)

func TestClientAddr(t *testing.T) {
	trusted, err := parseTrustedProxies([]string{"10.0.0.0/8", "2001:db8::1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"untrusted peer: header ignored", "192.0.2.7:1234", []string{"198.51.100.1"}, "192.0.2.7"},
		{"trusted peer: the forwarded address", "10.1.2.3:1234", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed entries left of the real one", "10.1.2.3:1234", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of trusted proxies", "10.1.2.3:1234", []string{"198.51.100.1, 10.9.9.9", "10.8.8.8"}, "198.51.100.1"},
		{"trusted IPv6 peer", "[2001:db8::1]:443", []string{"2001:db8:5::9"}, "2001:db8:5::9"},
		{"no header", "10.1.2.3:1234", nil, "10.1.2.3"},
		{"garbage stops at the last vouched hop", "10.1.2.3:1234", []string{"198.51.100.1, garbage, 10.9.9.9"}, "10.9.9.9"},
		{"mapped IPv4 peer", "[::ffff:10.1.2.3]:1", []string{"198.51.100.1"}, "198.51.100.1"},
	} {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		got, ok := clientAddr(r, trusted)
		if !ok || got.String() != tc.want {
			t.Errorf("%s: got %v (ok %v), want %s", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := clientAddr(&http.Request{RemoteAddr: "@unix"}, trusted); ok {
		t.Error("a non-IP RemoteAddr must not yield an address")
	}
	if _, err := parseTrustedProxies([]string{"10.0.0.0/8", "proxy.local"}); err == nil {
		t.Error("a host name must be refused")
	}
}

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
		cfg.WebSocket.IPRateLimit = 0.001
		cfg.WebSocket.IPRateBurst = 1
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
