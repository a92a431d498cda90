package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
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
	cfg.WebSocket.Rate = -1
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

// TestUnauthenticatedAddressShare: one address cannot fill
// websocket.max_unauthenticated on its own; past its share (a tenth) it
// gets 429 while other addresses still get in, and it gets in again once
// one of its connections authenticates or goes.
func TestUnauthenticatedAddressShare(t *testing.T) {
	const limit, share = 20, 2
	cfg := config.Default()
	cfg.Shutdown.DrainWindow = 100 * time.Millisecond
	cfg.WebSocket.MaxUnauthenticated = limit
	cfg.Client.StaleCloseDelay = time.Minute // only the test frees slots
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	one, two := net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2")
	held := make([]*gws.Conn, share)
	for i := range held {
		c, status := dialRaw(t, s, one)
		if c == nil {
			t.Fatalf("connection %d within the address's share refused with %d", i+1, status)
		}
		held[i] = c
	}
	if c, status := dialRaw(t, s, one); c != nil || status != http.StatusTooManyRequests {
		t.Fatalf("connection past the address's share of %d (of %d): %d, want 429", share, limit, status)
	}
	if c, status := dialRaw(t, s, two); c == nil {
		t.Fatalf("another address refused with %d", status)
	}
	// An authenticated client no longer counts against its address.
	authenticateRaw(t, held[1], "alice")
	if c, status := dialRaw(t, s, one); c == nil {
		t.Fatalf("after one of the address's connections authenticated: %d", status)
	}
	if c, status := dialRaw(t, s, one); c != nil || status != http.StatusTooManyRequests {
		t.Fatalf("share full again: %d, want 429", status)
	}
	// One of the address's connections goes: its place is free again.
	_ = held[0].Close()
	testenv.Eventually(t, "the closed connection's place freed", 5*time.Second, func() bool {
		c, _ := dialRaw(t, s, one)
		return c != nil
	})
	if v := mustMetric(t, s, "herald_websocket_refused_connections_total", `reason="address_cap"`); v < 1 {
		t.Errorf("refused address_cap metric %v, want at least 1", v)
	}
}

// authenticateRaw sends connect on conn, a connection from dialRaw, and
// waits for the reply.
func authenticateRaw(t *testing.T, conn *gws.Conn, user string) {
	t.Helper()
	c := jsonclient.NewConn(wire.WebSocket(conn, protocol.TypeJSON))
	if _, err := c.Connect(testtoken.Connect(t, "secret", auth.ConnectClaims{User: user}), time.Now().Add(10*time.Second)); err != nil {
		t.Fatalf("connect %s: %v", user, err)
	}
}

// TestIPRateLimit: one address past its burst gets 429, another address
// is not affected. The rate is tiny so no token comes back mid-test.
func TestIPRateLimit(t *testing.T) {
	cfg := config.Default()
	cfg.Shutdown.DrainWindow = time.Duration(100 * time.Millisecond)
	cfg.WebSocket.Rate = 0.001
	cfg.WebSocket.Burst = 3
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

// TestAdmissionConfigErrors: bad admission settings are refused by
// Validate with their key named.
func TestAdmissionConfigErrors(t *testing.T) {
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
	cfg.WebSocket.Rate = -1
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
