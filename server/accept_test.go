package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/transport/websocket"
)

// rawRequest sends req on a new connection to addr and returns the status
// line and the whole answer, read until the server closes (or 5 s).
func rawRequest(t *testing.T, addr, req string) (string, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read answer to %q: %v (got %q)", req, err, b)
	}
	status, _, _ := strings.Cut(string(b), "\r\n")
	return status, string(b)
}

const upgradeHeaders = "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

// The direct upgrade path answers what the handlers answer: other paths go
// to the HTTP server (keep-alive included), refusals keep their status and
// headers, a long request line still reaches the WebSocket endpoint.
func TestDirectUpgradeRouting(t *testing.T) {
	cfg := config.Default()
	cfg.WebSocket.AllowedOrigins = []string{"https://app.example"}
	s := startServer(t, cfg)
	t.Cleanup(func() { shutdownServer(t, s) })
	addr := s.Addr()

	// Two requests on one connection: the first line was read by the
	// accept loop, the HTTP server must still see both.
	status, body := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if status != "HTTP/1.1 200 OK" || strings.Count(body, `"status":"ok"`) != 2 {
		t.Errorf("two health checks on one connection: %q", body)
	}
	// A POST to the WebSocket path is not read by the accept loop.
	if status, _ := rawRequest(t, addr, "POST "+WebSocketPath+" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(status, "HTTP/1.1 4") {
		t.Errorf("POST to the WebSocket path: %q", status)
	}
	// Refused by the origin check, answered by the direct path.
	status, body = rawRequest(t, addr, "GET "+WebSocketPath+" HTTP/1.1\r\n"+upgradeHeaders+"Origin: https://evil.example\r\n\r\n")
	if status != "HTTP/1.1 403 Forbidden" || !strings.Contains(body, "origin not allowed") || !strings.Contains(body, "Connection: close") {
		t.Errorf("refused origin: %q", body)
	}
	// No upgrade headers: the upgrader's own refusal.
	if status, _ := rawRequest(t, addr, "GET "+WebSocketPath+"?cf_protocol=json HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.HasPrefix(status, "HTTP/1.1 4") {
		t.Errorf("GET without upgrade headers: %q", status)
	}
	// Not HTTP at all.
	if status, _ := rawRequest(t, addr, "GET "+WebSocketPath+" HTTP/1.1\r\nno colon here\r\n\r\n"); status != "HTTP/1.1 400 Bad Request" {
		t.Errorf("malformed header: %q", status)
	}
	// A request line longer than the pooled buffer goes to the HTTP server,
	// which upgrades it the usual way.
	long := "ws://" + addr + WebSocketPath + "?pad=" + strings.Repeat("a", 5000)
	nc, _, _, err := ws.Dial(context.Background(), long)
	if err != nil {
		t.Fatalf("long request line: %v", err)
	}
	_ = nc.Close()
}

// A client that sends its connect command in the same packet as its
// handshake gets the connect reply: the bytes behind the handshake survive
// the pooled read buffer going back to its pool.
func TestDirectUpgradeEarlyFrame(t *testing.T) {
	s := startServer(t, config.Default())
	t.Cleanup(func() { shutdownServer(t, s) })
	tok := testtoken.Connect(t, "secret", auth.ConnectClaims{User: "42"})
	frame, err := ws.CompileFrame(ws.MaskFrame(ws.NewTextFrame([]byte(`{"id":1,"connect":{"token":"` + tok + `"}}`))))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET " + WebSocketPath + " HTTP/1.1\r\n" + upgradeHeaders + "Sec-WebSocket-Protocol: " + websocket.SubprotocolJSON + "\r\n\r\n"
	if _, err := c.Write(append([]byte(req), frame...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	reply, err := wsutil.ReadServerText(struct {
		io.Reader
		io.Writer
	}{br, c})
	if err != nil || !strings.Contains(string(reply), `"connect"`) {
		t.Fatalf("connect reply %s: %v", reply, err)
	}
}

// While the node drains, the direct path answers 503 with Retry-After.
func TestDirectUpgradeDraining(t *testing.T) {
	s := startServer(t, config.Default())
	t.Cleanup(func() { shutdownServer(t, s) })
	s.adm.Drain()
	status, body := rawRequest(t, s.Addr(), "GET "+WebSocketPath+" HTTP/1.1\r\n"+upgradeHeaders+"\r\n")
	if status != "HTTP/1.1 503 Service Unavailable" || !strings.Contains(body, "Retry-After: 1") {
		t.Errorf("upgrade while draining: %q", body)
	}
}

func shutdownServer(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}
