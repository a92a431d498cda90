package server

import (
	"context"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
)

// TestUniWebSocketCloseOptions: a connection the server closes (a connect
// request with a bad token) gets the disconnect push and then the close
// frame; uni_websocket.disable_disconnect_push leaves the push out and
// disable_closing_handshake the close frame, as Centrifugo's.
func TestUniWebSocketCloseOptions(t *testing.T) {
	for _, c := range []struct {
		name            string
		noPush, noClose bool
	}{{"default", false, false}, {"disable_disconnect_push", true, false}, {"disable_closing_handshake", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.UniWebSocket.Enabled = true
			cfg.UniWebSocket.DisableDisconnectPush, cfg.UniWebSocket.DisableClosingHandshake = c.noPush, c.noClose
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			conn, _, err := gws.DefaultDialer.Dial("ws://"+s.Addr()+UniWebSocketPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.WriteMessage(gws.TextMessage, []byte(`{"token":"not-a-token"}`)); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, msg, err := conn.ReadMessage()
			if gotPush := err == nil && strings.Contains(string(msg), `"disconnect"`); gotPush == c.noPush {
				t.Fatalf("first message %q, %v: want a disconnect push %v", msg, err, !c.noPush)
			}
			if err == nil {
				_, _, err = conn.ReadMessage()
			}
			ce, ok := err.(*gws.CloseError)
			switch {
			case !ok:
				t.Errorf("after the push: %v, want the connection closed", err)
			case c.noClose && ce.Code != gws.CloseAbnormalClosure:
				t.Errorf("close %d: want no close frame (1006)", ce.Code)
			case !c.noClose && ce.Code == gws.CloseAbnormalClosure:
				t.Errorf("no close frame: want one with the disconnect code")
			}
		})
	}
}
