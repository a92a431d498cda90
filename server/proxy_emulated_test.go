package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// TestProxyEmulatedHeadersCentrifugoFile: a node started from a
// Centrifugo file whose proxies set emulated_headers forwards the
// Authorization a WebSocket client sent inside its connect command (as
// centrifuge-js does from its 'headers' option) to the connect proxy and,
// later, to the RPC proxy, both HTTP endpoints on loopback; X-Other, not
// listed, reaches neither.
func TestProxyEmulatedHeadersCentrifugoFile(t *testing.T) {
	type seen struct{ path, auth, other string }
	calls := make(chan seen, 8)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		calls <- seen{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Other")}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/connect" {
			_, _ = io.WriteString(w, `{"result":{"user":"ann"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"result":{"data":{}}}`)
	}))
	t.Cleanup(backend.Close)
	file, _ := json.Marshal(map[string]any{
		"client": map[string]any{"proxy": map[string]any{"connect": map[string]any{
			"enabled": true, "endpoint": backend.URL + "/connect", "emulated_headers": []string{"Authorization"}}}},
		"rpc": map[string]any{
			"proxy":             map[string]any{"endpoint": backend.URL + "/rpc", "emulated_headers": []string{"authorization"}},
			"without_namespace": map[string]any{"proxy_enabled": true},
		},
	})
	cfg, err := config.ParseCentrifugo(file, "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	conn := wire.DialWith(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, "ws://"+s.Addr()+WebSocketPath, http.Header{})
	c := jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), "")
	next := func() seen {
		t.Helper()
		select {
		case v := <-calls:
			return v
		case <-time.After(5 * time.Second):
			t.Fatal("the backend got no call")
			return seen{}
		}
	}
	if got := jsonclient.Compact(t, c.Call(`{"id":1,"connect":{"headers":{"Authorization":"Bearer t1","X-Other":"o"}}}`)); !strings.Contains(got, `"connect"`) {
		t.Fatalf("connect: %s", got)
	}
	if v := next(); v != (seen{"/connect", "Bearer t1", ""}) {
		t.Errorf("connect proxy call: %+v", v)
	}
	if got := jsonclient.Compact(t, c.Call(`{"id":2,"rpc":{"method":"m","data":{}}}`)); !strings.Contains(got, `"rpc"`) {
		t.Fatalf("rpc: %s", got)
	}
	if v := next(); v != (seen{"/rpc", "Bearer t1", ""}) {
		t.Errorf("rpc proxy call: %+v", v)
	}
}
