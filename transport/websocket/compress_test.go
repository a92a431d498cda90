package websocket

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"
	gorilla "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// deflateClient is a raw client that negotiated permessage-deflate, for
// what gorilla cannot show: the RSV1 bit of each frame, fragmented or
// hostile compressed messages.
type deflateClient struct {
	rawClient
	accepted bool // the server answered with permessage-deflate
}

func (h *harness) dialDeflate() (*deflateClient, *testReceiver) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := ws.Dialer{Extensions: []httphead.Option{deflateParams.Option()}}
	nc, br, hs, err := d.Dial(ctx, h.url(""))
	if err != nil {
		h.t.Fatalf("deflate dial: %v", err)
	}
	if br == nil {
		br = bufio.NewReader(nc)
	}
	h.t.Cleanup(func() { nc.Close() })
	dc := &deflateClient{rawClient: rawClient{t: h.t, nc: nc, br: br}}
	for _, x := range hs.Extensions {
		if bytes.Equal(x.Name, wsflate.ExtensionNameBytes) {
			dc.accepted = true
		}
	}
	return dc, h.receiver()
}

// compressed is msg as a permessage-deflate payload.
func compressed(t *testing.T, msg []byte) []byte {
	t.Helper()
	z, err := wsflate.DefaultHelper.Compress(msg)
	if err != nil {
		t.Fatalf("compress: %v", err)
	}
	return z
}

// maskedFrame is a client frame with the given RSV bits.
func maskedFrame(t *testing.T, op ws.OpCode, fin bool, rsv byte, payload []byte) []byte {
	t.Helper()
	f := ws.NewFrame(op, fin, payload)
	f.Header.Rsv = rsv
	b, err := ws.CompileFrame(ws.MaskFrame(f))
	if err != nil {
		t.Fatalf("compile frame: %v", err)
	}
	return b
}

// readMessage reads one server data frame, decompressing it when RSV1 is
// set, and reports whether it was compressed.
func (dc *deflateClient) readMessage() (ws.OpCode, string, bool) {
	dc.t.Helper()
	h, p := dc.read()
	isZ, err := wsflate.IsCompressed(h)
	if err != nil {
		dc.t.Fatalf("server frame %+v: %v", h, err)
	}
	if isZ {
		if p, err = wsflate.DefaultHelper.Decompress(p); err != nil {
			dc.t.Fatalf("decompress server frame: %v", err)
		}
	}
	return h.OpCode, string(p), isZ
}

func TestCompressionNegotiation(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		big := strings.Repeat(`{"channel":"news","data":{"text":"hello"}}`, 40)
		cases := []struct {
			name        string
			server      bool // Config.Compression
			client      bool // the client offers permessage-deflate
			negotiated  bool
			wantHeaders bool
		}{
			{"both", true, true, true, true},
			{"server only", true, false, false, false},
			{"client only", false, true, false, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				h := newHarness(t, Config{Poller: p, Compression: tc.server})
				d := gorilla.Dialer{EnableCompression: tc.client, HandshakeTimeout: 5 * time.Second}
				c, resp, err := d.Dial(h.url(""), nil)
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				defer c.Close()
				s := h.receiver()
				ext := resp.Header.Get("Sec-WebSocket-Extensions")
				if got := strings.Contains(ext, "permessage-deflate"); got != tc.negotiated {
					t.Fatalf("Sec-WebSocket-Extensions = %q, negotiated %v, want %v", ext, got, tc.negotiated)
				}
				if tc.negotiated && (!strings.Contains(ext, "server_no_context_takeover") || !strings.Contains(ext, "client_no_context_takeover")) {
					t.Fatalf("Sec-WebSocket-Extensions = %q, want no context takeover both ways", ext)
				}
				if s.c.deflate != tc.negotiated {
					t.Fatalf("Conn.deflate = %v, want %v", s.c.deflate, tc.negotiated)
				}
				// gorilla compresses what it sends when negotiated; the
				// echo comes back compressed and is inflated by gorilla.
				for range 3 {
					expectEcho(t, c, gorilla.TextMessage, big, gorilla.TextMessage)
					expectEcho(t, c, gorilla.BinaryMessage, "small", gorilla.TextMessage)
				}
				if got := s.nextFrame(t); got != big {
					t.Fatalf("receiver got %d bytes, want the %d-byte message", len(got), len(big))
				}
			})
		}
	})
}

func TestCompressionMinSize(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newHarness(t, Config{Poller: p, Compression: true, CompressionMinSize: 100, CompressionLevel: 9})
		dc, s := h.dialDeflate()
		if !dc.accepted {
			t.Fatal("permessage-deflate not accepted")
		}
		large := strings.Repeat("abcdefgh", 100)
		for _, tc := range []struct {
			msg      string
			compress bool // the client's frame
			wantZ    bool // the server's echo
		}{
			{"tiny", false, false},
			{"tiny", true, false},
			{large, false, true},
			{large, true, true},
			{strings.Repeat("x", 99), true, false},
			{strings.Repeat("x", 100), false, true},
		} {
			if tc.compress {
				dc.write(maskedFrame(t, ws.OpText, true, compressedRsv, compressed(t, []byte(tc.msg))))
			} else {
				dc.send(ws.OpText, true, tc.msg)
			}
			op, got, isZ := dc.readMessage()
			if op != ws.OpText || got != tc.msg {
				t.Fatalf("echo of %d bytes: op %v, %d bytes", len(tc.msg), op, len(got))
			}
			if isZ != tc.wantZ {
				t.Fatalf("echo of %d bytes compressed = %v, want %v (min size 100)", len(tc.msg), isZ, tc.wantZ)
			}
		}
		if s.overlap.Load() {
			t.Fatal("receiver callbacks overlapped")
		}
	})
}

func TestCompressedFragments(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newHarness(t, Config{Poller: p, Compression: true})
		dc, _ := h.dialDeflate()
		msg := []byte(strings.Repeat("fragmented and compressed ", 50))
		z := compressed(t, msg)
		half := len(z) / 2
		// RSV1 on the first fragment only; a ping in between.
		dc.write(maskedFrame(t, ws.OpText, false, compressedRsv, z[:half]))
		dc.write(maskedFrame(t, ws.OpPing, true, 0, []byte("p")))
		dc.write(maskedFrame(t, ws.OpContinuation, true, 0, z[half:]))
		if h, p := dc.read(); h.OpCode != ws.OpPong || string(p) != "p" {
			t.Fatalf("got %v %q, want the pong", h.OpCode, p)
		}
		if _, got, _ := dc.readMessage(); got != string(msg) {
			t.Fatalf("echo: %d bytes, want %d", len(got), len(msg))
		}

		// RSV1 on a continuation frame is a protocol error.
		dc2, s2 := h.dialDeflate()
		dc2.write(maskedFrame(t, ws.OpText, false, compressedRsv, z[:half]))
		dc2.write(maskedFrame(t, ws.OpContinuation, true, compressedRsv, z[half:]))
		if code, _ := dc2.readClose(); code != ws.StatusProtocolError {
			t.Fatalf("close %d, want %d", code, ws.StatusProtocolError)
		}
		waitClosed(t, s2)
	})
}

func TestCompressionBitWithoutNegotiation(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		// The server enables compression, but this client did not offer
		// it: RSV1 means nothing on its connection.
		h := newHarness(t, Config{Poller: p, Compression: true})
		rc, s := h.dialRaw()
		rc.write(maskedFrame(t, ws.OpText, true, compressedRsv, compressed(t, []byte("hello"))))
		if code, _ := rc.readClose(); code != ws.StatusProtocolError {
			t.Fatalf("close %d, want %d", code, ws.StatusProtocolError)
		}
		waitClosed(t, s)
	})
}

func TestDecompressionBomb(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		const limit = 16 << 10
		h := newHarness(t, Config{Poller: p, Compression: true, MaxMessageSize: limit})
		// 8 MiB of zeros deflate to about 8 KiB, under the limit as sent.
		bomb := compressed(t, make([]byte, 8<<20))
		if len(bomb) >= limit {
			t.Fatalf("bomb is %d bytes compressed, want it under the %d limit", len(bomb), limit)
		}
		dc, s := h.dialDeflate()
		dc.write(maskedFrame(t, ws.OpBinary, true, compressedRsv, bomb))
		if code, _ := dc.readClose(); code != ws.StatusMessageTooBig {
			t.Fatalf("close %d, want %d", code, ws.StatusMessageTooBig)
		}
		waitClosed(t, s)
		select {
		case f := <-s.frames:
			t.Fatalf("the receiver got a %d-byte frame", len(f))
		default:
		}

		// Exactly the limit once decompressed is allowed.
		dc2, _ := h.dialDeflate()
		msg := bytes.Repeat([]byte("y"), limit)
		dc2.write(maskedFrame(t, ws.OpBinary, true, compressedRsv, compressed(t, msg)))
		if _, got, _ := dc2.readMessage(); got != string(msg) {
			t.Fatalf("echo: %d bytes, want %d", len(got), len(msg))
		}

		// Garbage with RSV1 is invalid payload data.
		dc3, _ := h.dialDeflate()
		dc3.write(maskedFrame(t, ws.OpText, true, compressedRsv, []byte{0xff, 0xff, 0xff, 0xff, 0x01}))
		if code, _ := dc3.readClose(); code != ws.StatusInvalidFramePayloadData {
			t.Fatalf("close %d, want %d", code, ws.StatusInvalidFramePayloadData)
		}
	})
}

func TestCompressionLevelChecked(t *testing.T) {
	for _, lvl := range []int{-1, 10} {
		if _, err := NewServer(Config{Compression: true, CompressionLevel: lvl}, func(*Conn, *http.Request) Receiver { return nil }); err == nil || !strings.Contains(err.Error(), "CompressionLevel") {
			t.Fatalf("level %d: err = %v, want one naming CompressionLevel", lvl, err)
		}
	}
	if _, err := NewServer(Config{CompressionMinSize: -1}, func(*Conn, *http.Request) Receiver { return nil }); err == nil {
		t.Fatal("negative CompressionMinSize accepted")
	}
	// Validate reports each bad field as an option error naming it, for a
	// configuration layer to translate into its own keys.
	err := Config{CompressionLevel: 10, CompressionMinSize: -1}.Validate()
	var fields []string
	for _, e := range optionerr.All(err) {
		fields = append(fields, e.Field)
	}
	if want := []string{"CompressionLevel", "CompressionMinSize"}; !slices.Equal(fields, want) {
		t.Fatalf("Validate: fields %q (%v), want %q", fields, err, want)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("Validate of the zero Config: %v", err)
	}
}

// TestIdleMemoryWithCompression checks that enabling compression costs an
// idle connection nothing when its client does not offer it: with the
// client's side of each connection counted too (same process), the live
// heap per connection stays within 8 KiB. Epoll only: the portable path
// holds a goroutine and a read buffer per connection by design.
func TestIdleMemoryWithCompression(t *testing.T) {
	if !slices.Contains(pollersUnderTest(t), PollerEpoll) {
		t.Skip("epoll is not under test")
	}
	const n = 300
	srv, err := NewServer(Config{Poller: PollerEpoll, Compression: true, Logger: quietLogger}, func(*Conn, *http.Request) Receiver { return nopReceiver{} })
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		hs.Close()
	})
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	dial := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		nc, _, _, err := ws.Dial(ctx, url)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, nc)
	}
	// Warm up the pools and the listener before measuring.
	for range 10 {
		dial()
	}
	testenv.Eventually(t, "10 connections", 10*time.Second, func() bool { return srv.NumConns() == 10 })
	before := heap()
	for range n {
		dial()
	}
	testenv.Eventually(t, "all connections", 10*time.Second, func() bool { return srv.NumConns() == n+10 })
	after := heap()
	per := int64(after-before) / n
	t.Logf("live heap per idle connection (server and client side): %d bytes", per)
	if per > 8<<10 {
		t.Fatalf("%d bytes per idle connection, want at most 8 KiB", per)
	}
}

// TestCompressionBrowserOffer checks the offers browsers send: Chrome's
// "permessage-deflate; client_max_window_bits" is accepted, and the answer
// tells the client not to keep its context either.
func TestCompressionBrowserOffer(t *testing.T) {
	h := newHarness(t, Config{Poller: pollersUnderTest(t)[0], Compression: true})
	for _, tc := range []struct {
		offer  string
		accept bool
	}{
		{"permessage-deflate; client_max_window_bits", true},
		{"permessage-deflate", true},
		{"permessage-deflate; server_max_window_bits=10", false},
		{"x-webkit-deflate-frame", false},
	} {
		opts, ok := httphead.ParseOptions([]byte(tc.offer), nil)
		if !ok {
			t.Fatalf("parse %q", tc.offer)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		nc, _, hs, err := ws.Dialer{Extensions: opts}.Dial(ctx, h.url(""))
		cancel()
		if err != nil {
			t.Fatalf("%q: dial: %v", tc.offer, err)
		}
		nc.Close()
		h.receiver()
		accepted := len(hs.Extensions) == 1 && bytes.Equal(hs.Extensions[0].Name, wsflate.ExtensionNameBytes)
		if accepted != tc.accept {
			t.Fatalf("%q: accepted %v (%v), want %v", tc.offer, accepted, hs.Extensions, tc.accept)
		}
		if accepted {
			var p wsflate.Parameters
			if err := p.Parse(hs.Extensions[0]); err != nil || !p.ClientNoContextTakeover || !p.ServerNoContextTakeover {
				t.Fatalf("%q: answer %v (%v), want no context takeover both ways", tc.offer, hs.Extensions[0], err)
			}
		}
	}
}
