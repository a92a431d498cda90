package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/testenv"
)

// dialRaw upgrades a connection to s from source (nil: any) without
// sending connect. It returns the connection, or the HTTP status of a
// refused upgrade.
func dialRaw(t *testing.T, s *Server, source net.IP) (*gws.Conn, int) {
	t.Helper()
	nd := net.Dialer{Timeout: 5 * time.Second}
	if source != nil {
		nd.LocalAddr = &net.TCPAddr{IP: source}
	}
	d := gws.Dialer{HandshakeTimeout: 5 * time.Second, NetDialContext: nd.DialContext}
	conn, resp, err := d.Dial("ws://"+s.Addr()+WebSocketPath, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if errors.Is(err, gws.ErrBadHandshake) && resp != nil {
			return nil, resp.StatusCode
		}
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, resp.StatusCode
}

func mustMetric(t *testing.T, s *Server, name string, labels ...string) float64 {
	t.Helper()
	v, err := metricValue(t.Context(), s, name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUnauthenticatedCap: connections that never connect fill
// websocket.max_unauthenticated, the next upgrade is refused with 503 at
// once (long before the stale close), and a client that authenticates
// frees its slot for the next one.
func TestUnauthenticatedCap(t *testing.T) {
	const limit = 20
	cfg := config.Default()
	cfg.Shutdown.DrainWindow = time.Duration(100 * time.Millisecond)
	cfg.WebSocket.MaxUnauthenticated = limit
	cfg.WebSocket.IPRateLimit = -1
	cfg.Client.StaleCloseDelay = time.Duration(time.Minute) // only the test frees slots
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	idle := make([]*gws.Conn, limit)
	for i := range idle {
		c, status := dialRaw(t, s, nil)
		if c == nil {
			t.Fatalf("connection %d refused with %d below the cap", i+1, status)
		}
		idle[i] = c
	}
	testenv.Eventually(t, "the cap filled", 5*time.Second, func() bool { return s.Hub().NumPending() == limit })

	start := time.Now()
	if _, status := dialRaw(t, s, nil); status != http.StatusServiceUnavailable {
		t.Fatalf("upgrade over the cap answered %d, want 503", status)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("refusal took %v; it must not wait for a slot", d)
	}

	// One idle connection goes: a legitimate client gets its slot, and
	// once authenticated no longer counts, so a second one fits too.
	_ = idle[0].Close()
	testenv.Eventually(t, "a slot freed", 5*time.Second, func() bool { return s.Hub().NumPending() == limit-1 })
	mustDial(t, s, "alice")
	mustDial(t, s, "bob")
	if got := s.Hub().NumPending(); got != limit-1 {
		t.Fatalf("after two authenticated clients: %d unauthenticated, want %d", got, limit-1)
	}
	if c, _ := dialRaw(t, s, nil); c == nil {
		t.Fatal("the free slot was refused")
	}
	testenv.Eventually(t, "the cap filled again", 5*time.Second, func() bool { return s.Hub().NumPending() == limit })
	if _, status := dialRaw(t, s, nil); status != http.StatusServiceUnavailable {
		t.Fatalf("upgrade over the refilled cap answered %d, want 503", status)
	}

	if v := mustMetric(t, s, "herald_websocket_refused_connections_total", `reason="cap"`); v != 2 {
		t.Errorf("refused cap metric %v, want 2", v)
	}
	if v := mustMetric(t, s, "herald_websocket_refused_connections_total", `reason="ip_rate"`); v != 0 {
		t.Errorf("refused ip_rate metric %v, want 0", v)
	}
	if v := mustMetric(t, s, "herald_client_unauthenticated_connections"); v != limit {
		t.Errorf("unauthenticated gauge %v, want %d", v, limit)
	}
}

// TestIPRateLimit: one address past its burst gets 429, another address
// is not affected. The rate is tiny so no token comes back mid-test.
func TestIPRateLimit(t *testing.T) {
	cfg := config.Default()
	cfg.Shutdown.DrainWindow = time.Duration(100 * time.Millisecond)
	cfg.WebSocket.IPRateLimit = 0.001
	cfg.WebSocket.IPRateBurst = 3
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	one, two := net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2")
	for i := range 3 {
		if c, status := dialRaw(t, s, one); c == nil {
			t.Fatalf("connection %d within the burst refused with %d", i+1, status)
		}
	}
	if _, status := dialRaw(t, s, one); status != http.StatusTooManyRequests {
		t.Fatalf("connection past the burst answered %d, want 429", status)
	}
	if c, status := dialRaw(t, s, two); c == nil {
		t.Fatalf("another address refused with %d", status)
	}
	if v := mustMetric(t, s, "herald_websocket_refused_connections_total", `reason="ip_rate"`); v != 1 {
		t.Errorf("refused ip_rate metric %v, want 1", v)
	}
}

// TestIPLimiterBounded: a flood from many addresses never grows the map
// past its bound, and a forgotten address starts with a full bucket.
func TestIPLimiterBounded(t *testing.T) {
	now := time.Now()
	l := newIPLimiter(0.001, 1, 8)
	a := netip.MustParseAddr("10.0.0.1")
	if !l.allow(a, now) || l.allow(a, now) {
		t.Fatal("burst 1: want the first connection allowed and the second refused")
	}
	for i := range 10000 {
		addr := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		l.allow(addr, now)
		if n := l.size(); n > 8 {
			t.Fatalf("limiter holds %d addresses, bound 8", n)
		}
	}
	if !l.allow(a, now) {
		t.Fatal("an evicted address must start again with a full bucket")
	}
	// Recently seen addresses stay: a busy one is not pushed out by one newcomer.
	busy := netip.MustParseAddr("10.2.0.1")
	l.allow(busy, now)
	l.allow(netip.MustParseAddr("10.2.0.2"), now)
	if l.allow(busy, now) {
		t.Fatal("a recently seen address was forgotten")
	}
}

func TestIPKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"}, // same /64
		{"::ffff:192.0.2.1", "192.0.2.1"},           // v4-mapped
		{"fe80::1%eth0", "fe80::2%eth1"},            // zones do not split a /64
	} {
		if ipKey(netip.MustParseAddr(tc.a)) != ipKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s must share a bucket", tc.a, tc.b)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"192.0.2.1", "192.0.2.2"},
	} {
		if ipKey(netip.MustParseAddr(tc.a)) == ipKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s must not share a bucket", tc.a, tc.b)
		}
	}
}

func TestAdmissionConfig(t *testing.T) {
	for _, tc := range []struct {
		ws             config.WebSocketConfig
		pending, burst int
		rate           float64
	}{
		{config.WebSocketConfig{}, 10000, 2000, 1000},
		{config.WebSocketConfig{MaxUnauthenticated: -1, IPRateLimit: -1, IPRateBurst: 5}, 0, 0, 0},
		{config.WebSocketConfig{MaxUnauthenticated: 5, IPRateLimit: 0.2}, 5, 1, 0.2},
		{config.WebSocketConfig{IPRateLimit: 10, IPRateBurst: 3}, 10000, 3, 10},
	} {
		p, r, b := admissionLimits(tc.ws)
		if p != tc.pending || r != tc.rate || b != tc.burst {
			t.Errorf("%+v: got %d, %v, %d; want %d, %v, %d", tc.ws, p, r, b, tc.pending, tc.rate, tc.burst)
		}
	}
	for _, bad := range []string{
		"websocket: {max_unauthenticated: -2}",
		"websocket: {ip_rate_limit: -0.5}",
		"websocket: {ip_rate_limit: .nan}",
		"websocket: {ip_rate_burst: -1}",
		"websocket: {trusted_proxies: [proxy.local]}",
	} {
		cfg, err := config.Parse([]byte("client: {insecure: true}\n" + bad))
		if err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		err = cfg.Validate()
		key := strings.TrimSuffix(strings.Fields(bad)[1][1:], ":")
		if err == nil || !strings.Contains(err.Error(), "websocket."+key) {
			t.Errorf("%s: error %v, want one naming websocket.%s", bad, err, key)
		}
	}
}

// TestUnauthenticatedCapConcurrent: upgrades racing each other never take
// the node past the cap, since each counts from its check on.
func TestUnauthenticatedCapConcurrent(t *testing.T) {
	const limit, attempts = 10, 40
	cfg := config.Default()
	cfg.Shutdown.DrainWindow = time.Duration(100 * time.Millisecond)
	cfg.WebSocket.MaxUnauthenticated = limit
	cfg.WebSocket.IPRateLimit = -1
	cfg.Client.StaleCloseDelay = time.Duration(time.Minute)
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	type result struct {
		conn   *gws.Conn
		status int
		err    error
	}
	results := make(chan result, attempts)
	start := make(chan struct{})
	for range attempts {
		go func() {
			<-start
			d := gws.Dialer{HandshakeTimeout: 5 * time.Second}
			conn, resp, err := d.Dial("ws://"+s.Addr()+WebSocketPath, nil)
			r := result{conn: conn, err: err}
			if resp != nil {
				r.status = resp.StatusCode
				if resp.Body != nil {
					_ = resp.Body.Close()
				}
			}
			results <- r
		}()
	}
	close(start)
	admitted, refused := 0, 0
	for range attempts {
		r := recvResult(t, results)
		switch {
		case r.conn != nil:
			admitted++
			t.Cleanup(func() { _ = r.conn.Close() })
		case r.status == http.StatusServiceUnavailable:
			refused++
		default:
			t.Errorf("dial: status %d, %v", r.status, r.err)
		}
	}
	if admitted == 0 || admitted > limit {
		t.Fatalf("%d of %d concurrent upgrades admitted, want 1..%d", admitted, attempts, limit)
	}
	testenv.Eventually(t, "admitted connections counted", 5*time.Second, func() bool { return s.Hub().NumPending() == admitted })
	if v := mustMetric(t, s, "herald_websocket_refused_connections_total", `reason="cap"`); int(v) != refused {
		t.Errorf("refused cap metric %v, want %d", v, refused)
	}
}

func recvResult[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a dial")
		var zero T
		return zero
	}
}
