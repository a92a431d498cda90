package server

import (
	"github.com/heraldhq/herald/config"

	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// proxyBackend is a small application backend: connect authenticates by
// the session cookie, subscribe refuses secret channels, rpc echoes.
func proxyBackend(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/connect":
			if r.Header.Get("Cookie") != "session=ann" || r.Header.Get("X-Backend-Key") != "k1" {
				_, _ = io.WriteString(w, `{"disconnect":{"code":4501,"reason":"no session"}}`)
				return
			}
			_, _ = io.WriteString(w, `{"result":{"user":"ann","data":{"transport":"`+req["transport"].(string)+`"}}}`)
		case "/subscribe":
			if strings.Contains(req["channel"].(string), "secret") {
				_, _ = io.WriteString(w, `{"error":{"code":403,"message":"not allowed"}}`)
				return
			}
			_, _ = io.WriteString(w, `{"result":{"data":{"by":"`+req["user"].(string)+`"}}}`)
		case "/rpc":
			b, _ := json.Marshal(map[string]any{"result": map[string]any{"data": map[string]any{"method": req["method"], "echo": req["data"]}}})
			_, _ = w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const proxyConfigYAML = `
proxies:
  - name: app
    endpoint: BACKEND/connect
    timeout: 2s
    http_headers: [Cookie]
    static_http_headers:
      X-Backend-Key: k1
  - name: subs
    endpoint: BACKEND/subscribe
  - name: rpc
    endpoint: BACKEND/rpc
client:
  proxy:
    connect: app
channel:
  namespaces:
    - name: news
      subscribe_proxy: subs
rpc:
  proxy: rpc
`

// TestProxyServer: a node configured from YAML authenticates a WebSocket
// client without token through the connect proxy (with its cookie),
// decides subscriptions and answers rpc through the backend, and counts
// the calls in /metrics.
func TestProxyServer(t *testing.T) {
	backend := proxyBackend(t)
	cfg, err := config.Parse([]byte(strings.ReplaceAll(proxyConfigYAML, "BACKEND", backend.URL)))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	dial := func(cookie string) *jsonclient.Client {
		h := http.Header{}
		if cookie != "" {
			h.Set("Cookie", cookie)
		}
		conn := wire.DialWith(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, "ws://"+s.Addr()+WebSocketPath, h)
		return jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), "")
	}
	// call returns the reply to cmd as compact JSON (keys sorted).
	call := func(c *jsonclient.Client, cmd string) string {
		t.Helper()
		return jsonclient.Compact(t, c.Call(cmd))
	}
	conn := dial("session=ann")
	if got := call(conn, `{"id":1,"connect":{}}`); !strings.Contains(got, `"data":{"transport":"websocket"}`) {
		t.Fatalf("connect through the proxy: %s", got)
	}
	if got := call(conn, `{"id":2,"subscribe":{"channel":"news:today"}}`); !strings.Contains(got, `"data":{"by":"ann"}`) {
		t.Fatalf("subscribe through the proxy: %s", got)
	}
	if got := call(conn, `{"id":3,"subscribe":{"channel":"news:secret"}}`); !strings.Contains(got, `"error":{"code":403,"message":"not allowed"}`) {
		t.Fatalf("subscribe refused by the proxy: %s", got)
	}
	if got := call(conn, `{"id":4,"rpc":{"method":"hello","data":{"x":1}}}`); !strings.Contains(got, `"data":{"echo":{"x":1},"method":"hello"}`) {
		t.Fatalf("rpc through the proxy: %s", got)
	}

	// Without the cookie, the backend disconnects.
	bad := dial("")
	bad.Send(`{"id":1,"connect":{}}`)
	bad.ExpectClose(4501, "")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if v, err := metricValue(ctx, s, "herald_proxy_calls_total", `proxy="app"`, `event="connect"`, `result="ok"`); err != nil || v != 1 {
		t.Fatalf("connect calls ok in /metrics: %v %v", v, err)
	}
	if v, err := metricValue(ctx, s, "herald_proxy_calls_total", `proxy="app"`, `result="disconnect"`); err != nil || v != 1 {
		t.Fatalf("connect calls disconnect in /metrics: %v %v", v, err)
	}
}
