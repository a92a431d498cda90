package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
)

// TestWebSocketDisabled: websocket.disabled serves no WebSocket endpoint
// while the other transports still connect.
func TestWebSocketDisabled(t *testing.T) {
	cfg := config.Default()
	cfg.WebSocket.Disabled = true
	cfg.UniWebSocket.Enabled = true
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	d := &gws.Dialer{HandshakeTimeout: 5 * time.Second}
	if conn, resp, err := d.Dial("ws://"+s.Addr()+WebSocketPath, nil); err == nil {
		conn.Close()
		t.Fatal("WebSocket upgrade with websocket.disabled: accepted")
	} else if resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("WebSocket upgrade with websocket.disabled: %v %v, want 404", resp, err)
	}
	conn, _, err := d.Dial("ws://"+s.Addr()+UniWebSocketPath, nil)
	if err != nil {
		t.Fatalf("uni_websocket with websocket.disabled: %v", err)
	}
	conn.Close()
	mustOpenStream(t, s, HTTPStreamPath, "bob")
}
