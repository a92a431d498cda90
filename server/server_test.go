package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

// startServer starts a node on a free loopback port; its WebSocket poller
// is HERALD_TEST_WS_POLLER's unless cfg sets one.
func startServer(t testing.TB, cfg config.Config) *Server {
	t.Helper()
	return startServerLog(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// startServerLog is startServer with the server's log going to log.
func startServerLog(t testing.TB, cfg config.Config, log *slog.Logger) *Server {
	t.Helper()
	cfg.Address = "127.0.0.1:0"
	if cfg.WebSocket.Poller == "" {
		cfg.WebSocket.Poller = websocket.Poller(testenv.WebSocketPoller())
	}
	cfg.Client.Token.HMACSecretKey = "secret"
	s, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// shutdownBench stops a node a benchmark started, waiting 10 s at most.
func shutdownBench(s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.Shutdown(ctx)
}

// connectClient connects user to s with the shared JSON test client,
// signing its token with the test secret.
func connectClient(t *testing.T, s *Server, user string) *jsonclient.Client {
	t.Helper()
	c := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+WebSocketPath, protocol.TypeJSON), "secret")
	c.Connect(user)
	return c
}

// TestGracefulDrain checks the shutdown sequence: readyz turns 503 and new
// connections are refused at once, clients are closed with 3001 spread over
// the drain window, and an API call in flight still completes.
func TestGracefulDrain(t *testing.T) {
	cfg := config.Default()
	cfg.Shutdown.DrainWindow = time.Duration(400 * time.Millisecond)
	cfg.HTTPAPI.Key = "k"
	s := startServer(t, cfg)
	const n = 20
	conns := make([]*jsonclient.Client, n)
	for i := range conns {
		conns[i] = connectClient(t, s, "u")
	}
	closedAt := make([]time.Time, n)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ce, err := wire.AwaitClose(c.Wire(), 10*time.Second)
			if err != nil || ce.Code != 3001 || ce.Reason != "shutdown" {
				t.Errorf("client %d: want close 3001 shutdown, got %v %v", i, ce, err)
			}
			closedAt[i] = time.Now()
		}()
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()

	testenv.Eventually(t, "readyz 503", 5*time.Second, func() bool {
		r, err := http.Get("http://" + s.Addr() + "/readyz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusServiceUnavailable
	})
	if _, r, err := gws.DefaultDialer.Dial("ws://"+s.Addr()+WebSocketPath, nil); err == nil || r == nil || r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("new connection during drain: want 503, got %v %v", r, err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+"/api/info", strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", "k")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusOK {
		t.Errorf("API call during drain: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	first, last := closedAt[0], closedAt[0]
	for _, at := range closedAt {
		if at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	if spread := last.Sub(first); spread < 200*time.Millisecond {
		t.Errorf("closes spread over %v, want most of the 400ms window", spread)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %v", took)
	}
}

// TestMetrics checks that /metrics reports the hub's state and traffic
// after a client connects, along with the Go runtime.
func TestMetrics(t *testing.T) {
	s := startServer(t, config.Default())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	c := connectClient(t, s, "u")
	jsonclient.WantError(t, c.Call(`{"id":2,"subscribe":{"channel":"nope"}}`), 103)
	r, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	text := string(body)
	for _, want := range []string{
		"herald_client_connections 1",
		`herald_client_commands_total{method="connect"} 1`,
		`herald_client_commands_total{method="subscribe"} 1`,
		`herald_client_errors_total{code="103"} 1`,
		`herald_client_messages_sent_total{type="reply"} 1`,
		"herald_client_command_duration_seconds_bucket",
		"herald_client_sent_bytes_total",
		"herald_engine_publish_duration_seconds",
		"go_goroutines",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestOriginsCORSAndAdmin checks the browser-facing protections: WebSocket
// origins (same-origin by default, an allow list when configured), CORS on
// the API, and pprof only on the opt-in admin listener.
func TestOriginsCORSAndAdmin(t *testing.T) {
	cfg := config.Default()
	cfg.WebSocket.AllowedOrigins = []string{"https://app.example"}
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.AllowedOrigins = []string{"https://app.example"}
	cfg.Admin.Address = "127.0.0.1:0"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	url := "ws://" + s.Addr() + WebSocketPath

	dial := func(origin string) int {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		c, r, err := gws.DefaultDialer.Dial(url, h)
		if err == nil {
			c.Close()
			return http.StatusSwitchingProtocols
		}
		if r == nil {
			t.Fatalf("dial: %v", err)
		}
		return r.StatusCode
	}
	if got := dial("https://app.example"); got != http.StatusSwitchingProtocols {
		t.Errorf("allowed origin: status %d", got)
	}
	if got := dial("https://evil.example"); got != http.StatusForbidden {
		t.Errorf("other origin: status %d, want 403", got)
	}
	if got := dial("http://" + s.Addr()); got != http.StatusSwitchingProtocols {
		t.Errorf("same origin: status %d", got)
	}
	if got := dial(""); got != http.StatusSwitchingProtocols {
		t.Errorf("no Origin (not a browser): status %d", got)
	}

	pre, _ := http.NewRequest(http.MethodOptions, "http://"+s.Addr()+"/api/publish", nil)
	pre.Header.Set("Origin", "https://app.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	r, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "X-API-Key") {
		t.Errorf("preflight: %d %v", r.StatusCode, r.Header)
	}
	pre.Header.Set("Origin", "https://evil.example")
	if r, err := http.DefaultClient.Do(pre); err == nil {
		r.Body.Close()
		if r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("CORS headers for an origin not allowed: %v", r.Header)
		}
	}

	get := func(url string) int {
		r, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	if got := get("http://" + s.Addr() + "/debug/pprof/"); got != http.StatusNotFound {
		t.Errorf("pprof on the public listener: status %d, want 404", got)
	}
	if got := get("http://" + s.AdminAddr() + "/debug/pprof/"); got != http.StatusOK {
		t.Errorf("pprof on the admin listener: status %d", got)
	}
}

func apiCall(t *testing.T, s *Server, method, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+"/api/"+method, strings.NewReader(body))
	req.Header.Set("X-API-Key", "k")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// TestWebSocketPoller checks that websocket.poller reaches the transport:
// a client connects and is served through each poller this system has.
func TestWebSocketPoller(t *testing.T) {
	pollers := []string{"portable"}
	if websocket.EpollAvailable {
		pollers = append(pollers, "epoll")
	}
	for _, p := range pollers {
		t.Run(p, func(t *testing.T) {
			cfg := config.Default()
			cfg.WebSocket.Poller = websocket.Poller(p)
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			if got := s.ws.Poller(); string(got) != p {
				t.Fatalf("transport runs %q, want %q", got, p)
			}
			connectClient(t, s, "alice")
		})
	}
}

// TestAPIOffExplains checks that a node without an API key answers API
// requests with a JSON error that says how to turn the API on.
func TestAPIOffExplains(t *testing.T) {
	s := startServer(t, config.Default())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	r, err := http.Post("http://"+s.Addr()+"/api/publish", "application/json", strings.NewReader(`{"channel":"chat","data":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusForbidden || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q, want 403 JSON: %s", r.StatusCode, r.Header.Get("Content-Type"), b)
	}
	body := string(b)
	for _, want := range []string{`"code":108`, "API is off", "http_api.key", "http_api.insecure"} {
		if !strings.Contains(body, want) {
			t.Errorf("body %s lacks %q", body, want)
		}
	}
}

// TestRefusedOriginLogNamesKey checks that a browser refused for its
// origin leaves a warning that names the origin and the key allowing it.
func TestRefusedOriginLogNamesKey(t *testing.T) {
	cfg := config.Default()
	cfg.Address = "127.0.0.1:0"
	cfg.WebSocket.Poller = websocket.Poller(testenv.WebSocketPoller())
	cfg.Client.Token.HMACSecretKey = "secret"
	var logs testenv.LockedBuffer
	s, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	c, r, err := gws.DefaultDialer.Dial("ws://"+s.Addr()+WebSocketPath, http.Header{"Origin": {"http://localhost:5173"}})
	if err == nil {
		c.Close()
		t.Fatal("a page from another origin was accepted")
	}
	if r == nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("dial: %v, want 403", err)
	}
	out := logs.String()
	for _, want := range []string{"level=WARN", "origin refused", "origin=http://localhost:5173", "websocket.allowed_origins"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
