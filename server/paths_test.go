package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// movedConfig moves every endpoint away from its default path, with every
// endpoint on.
func movedConfig() config.Config {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForSubscriber: true}
	cfg.WebSocket.HandlerPrefix = "/ws"
	cfg.UniWebSocket.Enabled, cfg.UniWebSocket.HandlerPrefix = true, "/uni/ws"
	cfg.HTTPStream.HandlerPrefix = "/stream"
	cfg.SSE.HandlerPrefix = "/events/"
	cfg.Emulation.HandlerPrefix = "/emu"
	cfg.UniHTTPStream.Enabled, cfg.UniHTTPStream.HandlerPrefix = true, "/uni/stream"
	cfg.UniSSE.Enabled, cfg.UniSSE.HandlerPrefix = true, "/uni/events"
	cfg.Prometheus.HandlerPrefix = "/internal/metrics"
	cfg.Health.Enabled, cfg.Health.HandlerPrefix = true, "/ping"
	cfg.HTTPAPI.HandlerPrefix = "/centrifugo/api"
	cfg.Admin.UI.Enabled, cfg.Admin.UI.Insecure, cfg.Admin.UI.Path = true, true, "/console"
	return cfg
}

func httpStatus(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("X-API-Key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEndpointPathsMove: each handler_prefix moves its endpoint: the
// default path answers 404 and clients work at the configured one.
func TestEndpointPathsMove(t *testing.T) {
	s := startServer(t, movedConfig())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	base := "http://" + s.Addr()

	for _, old := range []string{WebSocketPath, UniWebSocketPath, HTTPStreamPath, SSEPath, EmulationPath,
		UniHTTPStreamPath, UniSSEPath, "/metrics", "/api/info", "/api", "/admin/"} {
		if code, _ := httpStatus(t, http.MethodPost, base+old, "{}"); code != http.StatusNotFound {
			t.Errorf("POST %s (a default path, moved): %d, want 404", old, code)
		}
	}

	// WebSocket, through the accept loop that reads upgrades itself.
	ws := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+"/ws", protocol.TypeJSON), "secret")
	ws.Connect("alice")
	ws.MustSubscribe(2, "news", "")

	// HTTP streaming and SSE, with their commands through the moved
	// emulation endpoint.
	hs := mustOpenStream(t, s, "/stream", "bob")
	sse := mustOpenStream(t, s, "/events", "carol")
	hs.emulate(s, `{"id":2,"subscribe":{"channel":"news"}}`)
	hs.awaitMessage(`"id":2`)
	sse.emulate(s, `{"id":2,"subscribe":{"channel":"news"}}`)
	sse.awaitMessage(`"id":2`)

	// The unidirectional transports.
	uniWS, _, err := (&gws.Dialer{}).Dial("ws://"+s.Addr()+"/uni/ws", nil)
	if err != nil {
		t.Fatalf("uni_websocket at /uni/ws: %v", err)
	}
	defer uniWS.Close()
	if err := uniWS.WriteMessage(gws.TextMessage, []byte(`{"token":"`+token(t, "dave")+`"}`)); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := uniWS.ReadMessage(); err != nil || !strings.Contains(string(msg), `"connect"`) {
		t.Fatalf("uni_websocket connect push: %s %v", msg, err)
	}
	uniConnect := url.QueryEscape(`{"token":"` + token(t, "erin") + `"}`)
	for _, r := range []struct{ method, path string }{{http.MethodPost, "/uni/stream"}, {http.MethodGet, "/uni/events?cf_connect=" + uniConnect}} {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		body, _ := url.QueryUnescape(uniConnect)
		if r.method == http.MethodGet {
			body = ""
		}
		req, _ := http.NewRequestWithContext(ctx, r.method, base+r.path, strings.NewReader(body))
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			cancel()
			t.Fatalf("%s %s: %v %v", r.method, r.path, resp, err)
		}
		c := &httpStreamClient{t: t, resp: resp, rd: bufio.NewReader(resp.Body), sse: r.method == http.MethodGet, cancel: cancel}
		if msg := c.next(); !strings.HasPrefix(string(msg), `{"connect":`) {
			t.Fatalf("%s: first push %s, want the connect push", r.path, msg)
		}
		c.close()
	}

	// The API at its prefix, both forms; a publication reaches every client.
	if code, body := httpStatus(t, http.MethodPost, base+"/centrifugo/api/publish", `{"channel":"news","data":{"n":1}}`); code != 200 || strings.Contains(body, "error") {
		t.Fatalf("publish at the API prefix: %d %s", code, body)
	}
	if code, body := httpStatus(t, http.MethodPost, base+"/centrifugo/api", `{"method":"info","params":{}}`); code != 200 || !strings.Contains(body, `"nodes"`) {
		t.Fatalf("single endpoint at the API prefix: %d %s", code, body)
	}
	if m := ws.Next(); !strings.Contains(jsonString(m), `"n":1`) {
		t.Fatalf("websocket client: %v", m)
	}
	hs.awaitMessage(`"n":1`)
	sse.awaitMessage(`"n":1`)

	// Metrics, Centrifugo's health endpoint, Herald's probes, the admin UI.
	if code, body := httpStatus(t, http.MethodGet, base+"/internal/metrics", ""); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Errorf("metrics at prometheus.handler_prefix: %d", code)
	}
	if code, body := httpStatus(t, http.MethodGet, base+"/ping", ""); code != 200 || body != "{}" {
		t.Errorf("health at health.handler_prefix: %d %q, want 200 {}", code, body)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, _ := httpStatus(t, http.MethodGet, base+p, ""); code != 200 {
			t.Errorf("%s: %d", p, code)
		}
	}
	if code, body := httpStatus(t, http.MethodGet, base+"/console/", ""); code != 200 || !strings.Contains(body, "<html") {
		t.Errorf("admin UI at /console/: %d", code)
	}
}

// TestHealthEndpointOff: Centrifugo's /health is served only with
// health.enabled, and answers any method as Centrifugo does.
func TestHealthEndpointOff(t *testing.T) {
	s := startServer(t, config.Default())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if code, _ := httpStatus(t, http.MethodGet, "http://"+s.Addr()+"/health", ""); code != http.StatusNotFound {
		t.Fatalf("/health without health.enabled: %d, want 404", code)
	}
	cfg := config.Default()
	cfg.Health.Enabled = true
	s2 := startServer(t, cfg)
	t.Cleanup(func() { _ = s2.Shutdown(context.Background()) })
	if code, body := httpStatus(t, http.MethodPost, "http://"+s2.Addr()+"/health", ""); code != 200 || body != "{}" {
		t.Fatalf("/health: %d %q", code, body)
	}
}

// TestMetricsPathOnAdminListener: the admin listener serves the metrics at
// prometheus.handler_prefix too.
func TestMetricsPathOnAdminListener(t *testing.T) {
	cfg := config.Default()
	cfg.Admin.Address = "127.0.0.1:0"
	cfg.Prometheus.HandlerPrefix = "/prom"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if code, _ := httpStatus(t, http.MethodGet, "http://"+s.AdminAddr()+"/prom", ""); code != 200 {
		t.Fatalf("admin listener /prom: %d", code)
	}
	if code, _ := httpStatus(t, http.MethodGet, "http://"+s.AdminAddr()+"/metrics", ""); code != http.StatusNotFound {
		t.Fatalf("admin listener /metrics after the move: %d, want 404", code)
	}
}

// TestCentrifugoPrefixesServe: a Centrifugo configuration that moves its
// endpoints converts, and Herald serves them where it says.
func TestCentrifugoPrefixesServe(t *testing.T) {
	file := []byte(`{
  "client": {"token": {"hmac_secret_key": "secret"}},
  "http_api": {"key": "k", "handler_prefix": "/rt/api"},
  "websocket": {"handler_prefix": "/rt/ws"},
  "sse": {"enabled": true, "handler_prefix": "/rt/sse"},
  "emulation": {"handler_prefix": "/rt/emulation"},
  "prometheus": {"enabled": true, "handler_prefix": "/rt/metrics"},
  "health": {"enabled": true, "handler_prefix": "/rt/health"}
}`)
	cfg, err := config.ParseCentrifugo(file, "config.json", []string{"CENTRIFUGO_UNI_WEBSOCKET_ENABLED=true", "CENTRIFUGO_UNI_WEBSOCKET_HANDLER_PREFIX=/rt/uni"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	base := "http://" + s.Addr()
	ws := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+"/rt/ws", protocol.TypeJSON), "secret")
	ws.Connect("alice")
	ws.MustSubscribe(2, "news", "")
	sse := mustOpenStream(t, s, "/rt/sse", "bob")
	sse.emulate(s, `{"id":2,"subscribe":{"channel":"news"}}`)
	sse.awaitMessage(`"id":2`)
	if code, body := httpStatus(t, http.MethodPost, base+"/rt/api/publish", `{"channel":"news","data":{"n":7}}`); code != 200 || strings.Contains(body, "error") {
		t.Fatalf("publish: %d %s", code, body)
	}
	if m := ws.Next(); !strings.Contains(jsonString(m), `"n":7`) {
		t.Fatalf("websocket client: %v", m)
	}
	sse.awaitMessage(`"n":7`)
	for p, want := range map[string]int{"/rt/metrics": 200, "/rt/health": 200, "/rt/uni": http.StatusBadRequest,
		WebSocketPath: 404, "/api/info": 404, "/metrics": 404, "/health": 404, EmulationPath: 404} {
		if code, _ := httpStatus(t, http.MethodGet, base+p, ""); code != want {
			t.Errorf("GET %s: %d, want %d", p, code, want)
		}
	}
}

func jsonString(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}
