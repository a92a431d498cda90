package server

import (
	"context"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// Compression through the whole node: gorilla's client offers
// permessage-deflate and compresses every message it sends; the node
// inflates them and compresses what it sends back, on both WebSocket
// endpoints.

// startCompressingServer runs a node with websocket.compression and
// uni_websocket.compression on (every outgoing message at least 64 bytes
// compressed), and the API.
func startCompressingServer(t *testing.T) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.WebSocket.Compression = true
	cfg.WebSocket.CompressionMinSize = 64
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	cfg.UniWebSocket.Enabled = true
	cfg.UniWebSocket.Compression, cfg.UniWebSocket.CompressionMinSize = true, 64
	cfg.HTTPAPI.Key = "k"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

func dialCompressing(t *testing.T, s *Server, path string, subprotocols ...string) *gws.Conn {
	t.Helper()
	d := gws.Dialer{HandshakeTimeout: 5 * time.Second, EnableCompression: true, Subprotocols: subprotocols}
	c, resp, err := d.Dial("ws://"+s.Addr()+path, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("Sec-WebSocket-Extensions %q: compression not negotiated", ext)
	}
	return c
}

// bigData is a publication payload well over the minimum size.
var bigData = `{"text":"` + strings.Repeat("compressible text ", 100) + `"}`

// exchange connects over c in protocol pt, subscribes to ch, has the API
// publish bigData there and returns the publication's data as received.
func exchange(t *testing.T, s *Server, c *gws.Conn, pt protocol.Type, ch string) []byte {
	t.Helper()
	tok := uniToken(t, auth.ConnectClaims{User: "z"})
	mt := gws.TextMessage
	if pt == protocol.TypeProtobuf {
		mt = gws.BinaryMessage
	}
	var frame []byte
	for _, cmd := range []*protocol.Command{
		{Id: 1, Connect: &protocol.ConnectRequest{Token: tok}},
		{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: ch}},
	} {
		msg, err := protocol.AppendCommand(pt, nil, cmd)
		if err != nil {
			t.Fatal(err)
		}
		frame = protocol.AppendMessage(pt, frame, msg)
	}
	if err := c.WriteMessage(mt, frame); err != nil {
		t.Fatal(err)
	}
	published := false
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		replies, err := protocol.DecodeReplies(pt, b)
		if err != nil {
			t.Fatalf("decode %q: %v", b, err)
		}
		for _, r := range replies {
			switch {
			case r.Error != nil:
				t.Fatalf("reply %d: error %d %s", r.Id, r.Error.Code, r.Error.Message)
			case r.Id == 2 && !published:
				published = true
				if out := apiCall(t, s, "publish", `{"channel":"`+ch+`","data":`+bigData+`}`); strings.Contains(out, "error") {
					t.Fatalf("publish: %s", out)
				}
			case r.Push != nil && r.Push.Pub != nil:
				return r.Push.Pub.Data
			}
		}
	}
}

func TestCompressionWithHub(t *testing.T) {
	s := startCompressingServer(t)
	t.Run("json", func(t *testing.T) {
		c := dialCompressing(t, s, WebSocketPath)
		if got := exchange(t, s, c, protocol.TypeJSON, "zjson"); string(got) != bigData {
			t.Fatalf("publication data %.80q…, want the published %d bytes", got, len(bigData))
		}
	})
	t.Run("protobuf", func(t *testing.T) {
		c := dialCompressing(t, s, WebSocketPath, "centrifuge-protobuf")
		if got := exchange(t, s, c, protocol.TypeProtobuf, "zproto"); string(got) != bigData {
			t.Fatalf("publication data %.80q…, want the published %d bytes", got, len(bigData))
		}
	})
	t.Run("uni_websocket", func(t *testing.T) {
		c := dialCompressing(t, s, UniWebSocketPath)
		tok := uniToken(t, auth.ConnectClaims{User: "z", Channels: []string{"zuni"}})
		if err := c.WriteMessage(gws.TextMessage, []byte(`{"token":"`+tok+`"}`)); err != nil {
			t.Fatal(err)
		}
		nextPush(t, c, "connect push", func(p *uniPush) bool { return p.Connect != nil })
		if out := apiCall(t, s, "publish", `{"channel":"zuni","data":`+bigData+`}`); strings.Contains(out, "error") {
			t.Fatalf("publish: %s", out)
		}
		p := nextPush(t, c, "publication", func(p *uniPush) bool { return p.Pub != nil })
		if string(p.Pub.Data) != bigData {
			t.Fatalf("publication data %.80q…", p.Pub.Data)
		}
	})
}

func TestCompressionConfigChecked(t *testing.T) {
	for _, tc := range []struct {
		set func(*config.Config)
		key string
	}{
		{func(c *config.Config) { c.WebSocket.CompressionLevel = 10 }, "websocket.compression_level"},
		{func(c *config.Config) { c.WebSocket.CompressionLevel = -1 }, "websocket.compression_level"},
		{func(c *config.Config) { c.WebSocket.CompressionMinSize = -1 }, "websocket.compression_min_size"},
	} {
		cfg := config.Default()
		tc.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("Validate: %v, want an error naming %s", err, tc.key)
		}
	}
	cfg := config.Default()
	cfg.WebSocket.Compression, cfg.WebSocket.CompressionLevel, cfg.WebSocket.CompressionMinSize = true, 9, 512
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}
