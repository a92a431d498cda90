package server

import (
	"context"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
)

// TestUniWebSocketOwnOptions: uni_websocket.message_size_limit bounds the
// unidirectional endpoint only (the bidirectional one keeps
// websocket.message_size_limit), and websocket.compression alone does not
// turn compression on there, as in Centrifugo.
func TestUniWebSocketOwnOptions(t *testing.T) {
	cfg := config.Default()
	cfg.UniWebSocket.Enabled = true
	cfg.UniWebSocket.MessageSizeLimit = 100
	cfg.WebSocket.Compression = true
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	d := gws.Dialer{HandshakeTimeout: 5 * time.Second, EnableCompression: true}
	c, resp, err := d.Dial("ws://"+s.Addr()+UniWebSocketPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Errorf("uni_websocket negotiated %q with only websocket.compression on", ext)
	}
	big := `{"token":"` + strings.Repeat("x", 200) + `"}`
	if err := c.WriteMessage(gws.TextMessage, []byte(big)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := c.ReadMessage(); !gws.IsCloseError(err, gws.CloseMessageTooBig) {
		t.Errorf("a 212-byte connect request over uni_websocket.message_size_limit 100: %v, want close 1009", err)
	}

	// The bidirectional endpoint keeps its own limit (and compression).
	b, resp, err := d.Dial("ws://"+s.Addr()+WebSocketPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if resp.Header.Get("Sec-WebSocket-Extensions") == "" {
		t.Error("websocket.compression: not negotiated on the bidirectional endpoint")
	}
	if err := b.WriteMessage(gws.TextMessage, []byte(`{"id":1,"connect":{"token":"`+strings.Repeat("x", 200)+`"}}`)); err != nil {
		t.Fatal(err)
	}
	_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := b.ReadMessage(); gws.IsCloseError(err, gws.CloseMessageTooBig) {
		t.Errorf("bidirectional endpoint: %v: uni_websocket's limit applied to it", err)
	}
}
