package websocket

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

// handshake sends a handshake made of the request line, the Host header and
// lines, as a client writes them (names in the client's case, duplicates
// kept), and returns the server's answer with the connection.
func (h *harness) handshake(lines ...string) (*http.Response, *rawClient) {
	h.t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(h.hs.URL, "http://"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + strings.Join(lines, "\r\n") + "\r\n\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		h.t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		h.t.Fatalf("handshake answer: %v", err)
	}
	_ = nc.SetDeadline(time.Time{})
	return resp, &rawClient{t: h.t, nc: nc, br: br}
}

// The handshake lines every client sends, in the case RFC 6455 writes
// them.
const (
	hsKey     = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
	hsVersion = "Sec-WebSocket-Version: 13"
	hsUpgrade = "Upgrade: websocket"
	hsConn    = "Connection: Upgrade"
)

// TestHandshakeAsClientsSendIt: the handshakes that browsers and the
// Centrifugo SDKs' WebSocket libraries send are upgraded, with the
// encoding they ask for, as Centrifugo upgrades them. Before the upgrader
// was given the request reduced to what it reads (handshake.go), the empty
// Sec-WebSocket-Protocol of centrifuge-python's default (JSON) client, a
// header sent on two lines and an empty or unparsable
// Sec-WebSocket-Extensions were answered 400 (an extension offer with
// parameters the server does not know, 500).
func TestHandshakeAsClientsSendIt(t *testing.T) {
	tests := []struct {
		name      string
		lines     []string
		compress  bool          // Config.Compression
		wantSub   string        // the subprotocol answered
		wantProto protocol.Type // the connection's encoding
		wantExt   bool          // permessage-deflate negotiated
	}{
		{
			name:  "centrifuge-python JSON: empty protocol header",
			lines: []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol:"},
		},
		{
			name:  "blank protocol header",
			lines: []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: \t "},
		},
		{
			name:  "protocol header of commas only",
			lines: []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: , ,"},
		},
		{
			name:      "centrifuge-python Protobuf",
			lines:     []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: centrifuge-protobuf"},
			wantSub:   SubprotocolProtobuf,
			wantProto: protocol.TypeProtobuf,
		},
		{
			name: "dart:io: lower-case names",
			lines: []string{"connection: Upgrade", "upgrade: websocket", "sec-websocket-version: 13",
				"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol: centrifuge-protobuf"},
			wantSub:   SubprotocolProtobuf,
			wantProto: protocol.TypeProtobuf,
		},
		{
			name:  "upper-case names and values",
			lines: []string{"CONNECTION: UPGRADE", "UPGRADE: WEBSOCKET", "SEC-WEBSOCKET-VERSION: 13", "SEC-WEBSOCKET-KEY: dGhlIHNhbXBsZSBub25jZQ=="},
		},
		{
			name:      "gorilla, OkHttp, nv-websocket-client: list joined with comma and space",
			lines:     []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: mqtt, centrifuge-protobuf"},
			wantSub:   SubprotocolProtobuf,
			wantProto: protocol.TypeProtobuf,
		},
		{
			name:      "Starscream: list joined with a bare comma",
			lines:     []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: mqtt,centrifuge-protobuf"},
			wantSub:   SubprotocolProtobuf,
			wantProto: protocol.TypeProtobuf,
		},
		{
			name:      "the client's first choice wins",
			lines:     []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: centrifuge-json, centrifuge-protobuf"},
			wantSub:   SubprotocolJSON,
			wantProto: protocol.TypeJSON,
		},
		{
			name:      "protobuf among items that are not tokens, with empty items",
			lines:     []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: v1/app, , centrifuge-protobuf ,"},
			wantSub:   SubprotocolProtobuf,
			wantProto: protocol.TypeProtobuf,
		},
		{
			name:      "protocol header on two lines, the first empty",
			lines:     []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol:", "Sec-WebSocket-Protocol: centrifuge-protobuf"},
			wantSub:   SubprotocolProtobuf,
			wantProto: protocol.TypeProtobuf,
		},
		{
			name:  "subprotocol names are case sensitive, as Centrifugo compares them",
			lines: []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Protocol: Centrifuge-Protobuf"},
		},
		{
			name:  "Firefox: Connection: keep-alive, Upgrade",
			lines: []string{"Connection: keep-alive, Upgrade", hsUpgrade, hsVersion, hsKey},
		},
		{
			name:  "Connection on two lines",
			lines: []string{"Connection: keep-alive", "Connection: Upgrade", hsUpgrade, hsVersion, hsKey},
		},
		{
			name:  "Upgrade on two lines",
			lines: []string{hsConn, "Upgrade: h2c", hsUpgrade, hsVersion, hsKey},
		},
		{
			name:  "Sec-WebSocket-Version on two lines",
			lines: []string{hsConn, hsUpgrade, "Sec-WebSocket-Version: 8", hsVersion, hsKey},
		},
		{
			name:     "Chrome, dart:io: permessage-deflate; client_max_window_bits",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"},
			compress: true,
			wantExt:  true,
		},
		{
			name:     "Firefox, Safari, OkHttp, URLSession: bare permessage-deflate",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions: permessage-deflate"},
			compress: true,
			wantExt:  true,
		},
		{
			name: "gorilla: no context takeover both ways",
			lines: []string{hsConn, hsUpgrade, hsVersion, hsKey,
				"Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
			compress: true,
			wantExt:  true,
		},
		{
			name:     "empty extensions header",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions:"},
			compress: true,
		},
		{
			name:     "an offer with an unknown parameter is declined",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions: permessage-deflate; mystery=1"},
			compress: true,
		},
		{
			name:     "an offer with an invalid parameter is declined, the next one taken",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=99, permessage-deflate"},
			compress: true,
			wantExt:  true,
		},
		{
			name:     "old Safari: x-webkit-deflate-frame is declined",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions: x-webkit-deflate-frame"},
			compress: true,
		},
		{
			name:     "an extensions line that does not parse is no offer",
			lines:    []string{hsConn, hsUpgrade, hsVersion, hsKey, "Sec-WebSocket-Extensions: ;;=", "Sec-WebSocket-Extensions: permessage-deflate"},
			compress: true,
			wantExt:  true,
		},
	}
	for _, compress := range []bool{false, true} {
		h := newHarness(t, Config{Compression: compress})
		for _, tt := range tests {
			if tt.compress != compress {
				continue
			}
			t.Run(tt.name, func(t *testing.T) {
				resp, rc := h.handshake(tt.lines...)
				if resp.StatusCode != http.StatusSwitchingProtocols {
					t.Fatalf("status %d %q, want 101", resp.StatusCode, resp.Status)
				}
				if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != tt.wantSub {
					t.Errorf("subprotocol %q, want %q", got, tt.wantSub)
				}
				ext := resp.Header.Get("Sec-WebSocket-Extensions")
				if got := strings.Contains(ext, "permessage-deflate"); got != tt.wantExt {
					t.Errorf("Sec-WebSocket-Extensions %q, want permessage-deflate %v", ext, tt.wantExt)
				}
				s := h.receiver()
				if s.c.Protocol() != tt.wantProto {
					t.Errorf("Protocol() = %v, want %v", s.c.Protocol(), tt.wantProto)
				}
				if tt.wantExt {
					return // the frames are compressed: TestCompressionNegotiation reads them
				}
				rc.send(ws.OpText, true, `{"id":1}`)
				if _, p := rc.read(); string(p) != `{"id":1}` {
					t.Fatalf("echo %q", p)
				}
			})
		}
	}
}

// TestHandshakeRefusals: what is not a WebSocket handshake is still
// refused, as the upgrader answers it.
func TestHandshakeRefusals(t *testing.T) {
	h := newHarness(t, Config{})
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"no upgrade token in Connection", []string{"Connection: keep-alive", hsUpgrade, hsVersion, hsKey}, http.StatusBadRequest},
		{"not websocket", []string{hsConn, "Upgrade: h2c", hsVersion, hsKey}, http.StatusBadRequest},
		{"no key", []string{hsConn, hsUpgrade, hsVersion}, http.StatusBadRequest},
		{"another version", []string{hsConn, hsUpgrade, "Sec-WebSocket-Version: 8", hsKey}, http.StatusUpgradeRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := h.handshake(tt.lines...)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}
