package websocket

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobwas/ws"
	gorilla "github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestUpgradeSelectsProtocol(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		tests := []struct {
			name         string
			query        string
			subprotocols []string
			wantSub      string
			wantProto    protocol.Type
		}{
			{
				name:      "nothing asked is JSON",
				wantProto: protocol.TypeJSON,
			},
			{
				name:         "centrifuge-json",
				subprotocols: []string{"centrifuge-json"},
				wantSub:      "centrifuge-json",
				wantProto:    protocol.TypeJSON,
			},
			{
				name:         "centrifuge-protobuf",
				subprotocols: []string{"centrifuge-protobuf"},
				wantSub:      "centrifuge-protobuf",
				wantProto:    protocol.TypeProtobuf,
			},
			{
				name:         "unknown subprotocol skipped",
				subprotocols: []string{"mqtt", "centrifuge-protobuf"},
				wantSub:      "centrifuge-protobuf",
				wantProto:    protocol.TypeProtobuf,
			},
			{
				name:      "format=protobuf",
				query:     "format=protobuf",
				wantProto: protocol.TypeProtobuf,
			},
			{
				name:      "cf_protocol=protobuf",
				query:     "cf_protocol=protobuf&cf_protocol_version=v2",
				wantProto: protocol.TypeProtobuf,
			},
		}
		h := newHarness(t, Config{Poller: kind})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, resp, s := h.dial(tt.query, tt.subprotocols...)
				if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != tt.wantSub {
					t.Errorf("subprotocol = %q, want %q", got, tt.wantSub)
				}
				if s.c.Protocol() != tt.wantProto {
					t.Errorf("Protocol() = %v, want %v", s.c.Protocol(), tt.wantProto)
				}
				want := gorilla.TextMessage
				if tt.wantProto == protocol.TypeProtobuf {
					want = gorilla.BinaryMessage
				}
				// Clients may send either frame type; replies follow the encoding.
				expectEcho(t, c, gorilla.TextMessage, `{"id":1}`, want)
				expectEcho(t, c, gorilla.BinaryMessage, "\x00", want)
			})
		}
	})
}

func TestRemoteAddrAndNumConns(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		c, _, s := h.dial("")
		if got, want := s.c.RemoteAddr(), c.LocalAddr().String(); got != want {
			t.Errorf("RemoteAddr = %q, want %q", got, want)
		}
		// The 101 response goes out just before the poller takes the connection.
		testenv.Eventually(t, "NumConns 1", 5*time.Second, func() bool { return h.srv.NumConns() == 1 })
		c.Close()
		waitClosed(t, s)
		if n := h.srv.NumConns(); n != 0 {
			t.Errorf("NumConns after close = %d, want 0", n)
		}
	})
}

func TestOriginCheck(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		host := strings.TrimPrefix(h.hs.URL, "http://")
		for _, tt := range []struct {
			origin string
			ok     bool
		}{
			{origin: "http://" + host, ok: true},
			{origin: "http://evil.example", ok: false},
		} {
			hdr := http.Header{"Origin": {tt.origin}}
			c, resp, err := gorilla.DefaultDialer.Dial(h.url(""), hdr)
			if tt.ok {
				if err != nil {
					t.Fatalf("origin %s: %v", tt.origin, err)
				}
				h.receiver()
				c.Close()
				continue
			}
			if err == nil {
				c.Close()
				t.Fatalf("origin %s accepted", tt.origin)
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("origin %s: response %v, want 403", tt.origin, resp)
			}
		}
	})
}

func TestOversizeFrameCloses1009(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind, MaxMessageSize: 1024})
		other, _, _ := h.dial("")
		big, _, s := h.dial("")
		if err := big.WriteMessage(gorilla.TextMessage, make([]byte, 2000)); err != nil {
			t.Fatal(err)
		}
		expectClose(t, big, 1009, "message too big")
		waitClosed(t, s)
		expectEcho(t, other, gorilla.TextMessage, "still here", gorilla.TextMessage)
		// Exactly at the limit is fine.
		expectEcho(t, other, gorilla.TextMessage, strings.Repeat("x", 1024), gorilla.TextMessage)
	})
}

func TestLargeMessageWithinLimit(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind, MaxMessageSize: 1 << 20})
		c, _, _ := h.dial("")
		// Larger than the reader's initial buffer and than one socket read.
		expectEcho(t, c, gorilla.BinaryMessage, strings.Repeat("0123456789", 100_000), gorilla.TextMessage)
	})
}

func TestFragmentedMessage(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		rc, s := h.dialRaw()
		rc.send(ws.OpText, false, "hel")
		rc.send(ws.OpPing, true, "between")
		rc.send(ws.OpContinuation, false, "lo ")
		rc.send(ws.OpContinuation, true, "world")
		hdr, p := rc.read()
		if hdr.OpCode != ws.OpPong || string(p) != "between" {
			t.Fatalf("got %v %q, want pong %q", hdr.OpCode, p, "between")
		}
		hdr, p = rc.read()
		if hdr.OpCode != ws.OpText || string(p) != "hello world" {
			t.Fatalf("got %v %q, want text %q", hdr.OpCode, p, "hello world")
		}
		if got := s.nextFrame(t); got != "hello world" {
			t.Fatalf("HandleFrame got %q", got)
		}
	})
}

func TestFragmentedMessageOverLimit(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind, MaxMessageSize: 10})
		rc, s := h.dialRaw()
		rc.send(ws.OpBinary, false, "123456")
		rc.send(ws.OpContinuation, true, "7890A")
		if code, _ := rc.readClose(); code != ws.StatusMessageTooBig {
			t.Fatalf("close code %d, want 1009", code)
		}
		waitClosed(t, s)
	})
}

func TestProtocolErrors(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		tests := []struct {
			name  string
			frame func(t *testing.T) []byte
		}{
			{
				name: "unmasked frame",
				frame: func(t *testing.T) []byte {
					b, _ := ws.CompileFrame(ws.NewTextFrame([]byte("x")))
					return b
				},
			},
			{
				name: "continuation without start",
				frame: func(t *testing.T) []byte {
					return frameBytes(t, ws.OpContinuation, true, []byte("x"))
				},
			},
			{
				name: "fragmented ping",
				frame: func(t *testing.T) []byte {
					return frameBytes(t, ws.OpPing, false, []byte("x"))
				},
			},
			{
				name: "reserved opcode",
				frame: func(t *testing.T) []byte {
					return frameBytes(t, ws.OpCode(3), true, []byte("x"))
				},
			},
		}
		h := newHarness(t, Config{Poller: kind})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rc, s := h.dialRaw()
				rc.write(tt.frame(t))
				if code, _ := rc.readClose(); code != ws.StatusProtocolError {
					t.Fatalf("close code %d, want 1002", code)
				}
				waitClosed(t, s)
			})
		}
	})
}

func TestPingPong(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		c, _, _ := h.dial("")
		pongs := make(chan string, 1)
		c.SetPongHandler(func(data string) error {
			pongs <- data
			return nil
		})
		if err := c.WriteControl(gorilla.PingMessage, []byte("p1"), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		// The pong arrives before the echo; ReadMessage runs the pong handler.
		expectEcho(t, c, gorilla.TextMessage, "after ping", gorilla.TextMessage)
		select {
		case got := <-pongs:
			if got != "p1" {
				t.Fatalf("pong %q, want p1", got)
			}
		default:
			t.Fatal("no pong before the echo")
		}
	})
}

func TestCloseSendsCodeAndReason(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		c, _, s := h.dial("")
		if err := c.WriteMessage(gorilla.TextMessage, []byte("close-me")); err != nil {
			t.Fatal(err)
		}
		expectClose(t, c, 3501, "bad request")
		waitClosed(t, s)
		if err := s.c.WriteFrame([]byte("late")); err != ErrClosed {
			t.Fatalf("WriteFrame after Close = %v, want ErrClosed", err)
		}
		s.c.Close(3000, "again") // idempotent
		if n := s.closes.Load(); n != 1 {
			t.Fatalf("HandleClose called %d times", n)
		}
	})
}

func TestCloseReasonTruncated(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		c, _, s := h.dial("")
		reason := strings.Repeat("é", 100) // 200 bytes
		s.c.Close(4000, reason)
		// 123 bytes at most, cut at a rune boundary: 61 runes of 2 bytes.
		expectClose(t, c, 4000, strings.Repeat("é", 61))
		waitClosed(t, s)
	})
}

func TestCloseFromOtherGoroutineWhileIdle(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		_, _, s := h.dial("")
		// The receiver stopped reading: Close must still lead to HandleClose.
		rc, s2 := h.dialRaw()
		rc.send(ws.OpText, true, "stop")
		s2.nextFrame(t)
		s2.c.Close(3005, "expired")
		if code, reason := rc.readClose(); code != 3005 || reason != "expired" {
			t.Fatalf("close (%d, %q)", code, reason)
		}
		waitClosed(t, s2)
		s.c.Close(3011, "force reconnect")
		waitClosed(t, s)
	})
}

func TestPeerCloseHandshake(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		rc, s := h.dialRaw()
		rc.write(frameBytes(t, ws.OpClose, true, ws.NewCloseFrameBody(ws.StatusGoingAway, "bye")))
		if code, _ := rc.readClose(); code != ws.StatusGoingAway {
			t.Fatalf("close reply code %d, want 1001 echoed", code)
		}
		waitClosed(t, s)
		if err := s.c.WriteFrame([]byte("x")); err != ErrClosed {
			t.Fatalf("WriteFrame = %v, want ErrClosed", err)
		}
		if n := s.closes.Load(); n != 1 {
			t.Fatalf("HandleClose called %d times", n)
		}
	})
}

func TestPeerVanishes(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		c, _, s := h.dial("")
		expectEcho(t, c, gorilla.TextMessage, "hi", gorilla.TextMessage)
		c.NetConn().Close() // no close frame
		waitClosed(t, s)
		testenv.Eventually(t, "NumConns 0", 5*time.Second, func() bool { return h.srv.NumConns() == 0 })
		if n := s.closes.Load(); n != 1 {
			t.Fatalf("HandleClose called %d times", n)
		}
	})
}

func TestFramesRightBehindHandshake(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		nc, err := net.Dial("tcp", strings.TrimPrefix(h.hs.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		req := "GET " + path + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
		msg := append([]byte(req), frameBytes(t, ws.OpText, true, []byte("one"))...)
		msg = append(msg, frameBytes(t, ws.OpText, false, []byte("tw"))...) // half of the next message
		if _, err := nc.Write(msg); err != nil {
			t.Fatal(err)
		}
		s := h.receiver()
		if got := s.nextFrame(t); got != "one" {
			t.Fatalf("first frame %q", got)
		}
		if _, err := nc.Write(frameBytes(t, ws.OpContinuation, true, []byte("o"))); err != nil {
			t.Fatal(err)
		}
		if got := s.nextFrame(t); got != "two" {
			t.Fatalf("second frame %q", got)
		}
	})
}

func TestSlowlorisTimesOut(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		// One worker: a partial frame must not hold it.
		h := newHarness(t, Config{Poller: kind, ReadTimeout: 200 * time.Millisecond, Workers: 1})
		good, _, _ := h.dial("")

		slow, s := h.dialRaw()
		f := frameBytes(t, ws.OpText, true, []byte("never finished"))
		slow.write(f[:5])
		expectEcho(t, good, gorilla.TextMessage, "not blocked", gorilla.TextMessage)
		start := time.Now()
		if code, reason := slow.readClose(); code != ws.StatusPolicyViolation || reason != "read timeout" {
			t.Fatalf("close (%d, %q), want (1008, read timeout)", code, reason)
		}
		waitClosed(t, s)
		if time.Since(start) > 2*time.Second {
			t.Fatalf("timeout took %v", time.Since(start))
		}

		// An unfinished fragmented message is bounded the same way, even when
		// the client keeps sending pings.
		frag, s2 := h.dialRaw()
		frag.send(ws.OpText, false, "part")
		for range 3 {
			frag.send(ws.OpPing, true, "")
			time.Sleep(50 * time.Millisecond)
		}
		if code, _ := frag.readClose(); code != ws.StatusPolicyViolation {
			t.Fatalf("fragmented: close %d, want 1008", code)
		}
		waitClosed(t, s2)
		expectEcho(t, good, gorilla.TextMessage, "still fine", gorilla.TextMessage)
	})
}

func TestSlowButSteadyFramesAreNotTimedOut(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind, ReadTimeout: 300 * time.Millisecond})
		rc, s := h.dialRaw()
		// Each message completes within the timeout, though the whole exchange
		// takes longer.
		for i := range 5 {
			f := frameBytes(t, ws.OpText, true, []byte(fmt.Sprintf("m%d", i)))
			rc.write(f[:3])
			time.Sleep(100 * time.Millisecond)
			rc.write(f[3:])
			if _, p := rc.read(); string(p) != fmt.Sprintf("m%d", i) {
				t.Fatalf("echo %q", p)
			}
		}
		if s.closes.Load() != 0 {
			t.Fatal("closed")
		}
	})
}

func TestBurstKeepsOrder(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		rc, s := h.dialRaw()
		const n = 3000 // about 60 KiB: several reads and re-arms
		var burst []byte
		for i := range n {
			burst = append(burst, frameBytes(t, ws.OpText, true, []byte(fmt.Sprintf("message %05d", i)))...)
		}
		go rc.nc.Write(burst) //nolint:errcheck // the reads below fail if it does
		for i := range n {
			if _, p := rc.read(); string(p) != fmt.Sprintf("message %05d", i) {
				t.Fatalf("echo %d = %q", i, p)
			}
		}
		rc.nc.Close()
		waitClosed(t, s)
		if s.overlap.Load() {
			t.Fatal("receiver callbacks overlapped")
		}
	})
}

func TestManyConnectionsEcho(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		const n = 500
		h := newHarness(t, Config{Poller: kind})
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				c, _, err := gorilla.DefaultDialer.Dial(h.url(""), nil)
				if err != nil {
					errs <- err
					return
				}
				defer c.Close()
				for j := range 5 {
					msg := fmt.Sprintf("conn %d msg %d", i, j)
					if err := c.WriteMessage(gorilla.TextMessage, []byte(msg)); err != nil {
						errs <- err
						return
					}
					_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
					_, got, err := c.ReadMessage()
					if err != nil {
						errs <- err
						return
					}
					if string(got) != msg {
						errs <- fmt.Errorf("got %q, want %q", got, msg)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		testenv.Eventually(t, "all connections gone", 5*time.Second, func() bool { return h.srv.NumConns() == 0 })
		for range n {
			s := h.receiver()
			waitClosed(t, s)
			if s.overlap.Load() || s.closes.Load() != 1 {
				t.Fatalf("overlap %v, HandleClose %d times", s.overlap.Load(), s.closes.Load())
			}
		}
	})
}

func TestConcurrentWritesAndClose(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		c, _, s := h.dial("")
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
		var wg sync.WaitGroup
		wg.Go(func() {
			for s.c.WriteFrame([]byte("push")) == nil {
			}
		})
		time.Sleep(20 * time.Millisecond)
		s.c.Close(3001, "shutdown")
		wg.Wait()
		waitClosed(t, s)
	})
}

func TestServerCloseClosesAll(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		h := newHarness(t, Config{Poller: kind})
		var clients []*gorilla.Conn
		var receivers []*testReceiver
		for range 20 {
			c, _, s := h.dial("")
			clients = append(clients, c)
			receivers = append(receivers, s)
		}
		// One connection mid-message and one that stopped reading.
		rc, _ := h.dialRaw()
		rc.send(ws.OpText, false, "half")
		stopped, _, ss := h.dial("")
		if err := stopped.WriteMessage(gorilla.TextMessage, []byte("stop")); err != nil {
			t.Fatal(err)
		}
		ss.nextFrame(t)

		if err := h.srv.Close(); err != nil {
			t.Fatal(err)
		}
		for i, c := range clients {
			expectClose(t, c, 3001, "shutdown")
			if n := receivers[i].closes.Load(); n != 1 {
				t.Fatalf("receiver %d: HandleClose called %d times", i, n)
			}
		}
		if code, _ := rc.readClose(); code != 3001 {
			t.Fatalf("half-read connection closed with %d", code)
		}
		expectClose(t, stopped, 3001, "shutdown")
		if n := h.srv.NumConns(); n != 0 {
			t.Fatalf("NumConns = %d after Close", n)
		}
		// New upgrades are refused.
		if _, resp, err := gorilla.DefaultDialer.Dial(h.url(""), nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("dial after Close: %v %v", resp, err)
		}
		for _, c := range clients {
			c.Close()
		}
		h.hs.Close()
		goleak.VerifyNone(t, goleak.IgnoreCurrent())
	})
}

// TestServerCloseWaitsForUpgrades: a connection whose upgrade is past the
// handshake but not yet registered when Close starts is refused with 3001
// "shutdown", and its HandleClose has run when Close returns. Close used
// to count only registered connections, so it returned first (CI, stop 48:
// "receiver 14: HandleClose called 0 times").
func TestServerCloseWaitsForUpgrades(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		entered, release := make(chan *testReceiver, 1), make(chan struct{})
		srv, err := NewServer(Config{Poller: kind, Logger: quietLogger}, func(c *Conn, r *http.Request) Receiver {
			s := newTestReceiver(c)
			entered <- s
			<-release
			return s
		})
		if err != nil {
			t.Fatal(err)
		}
		// The handshake is answered before the AcceptFunc runs, so the
		// dial returns while the upgrade waits in it.
		c := serveAndDial(t, srv)
		rcv := <-entered

		closed := make(chan struct{})
		go func() {
			defer close(closed)
			if err := srv.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		testenv.Eventually(t, "Close to start", 5*time.Second, func() bool {
			srv.mu.RLock()
			defer srv.mu.RUnlock()
			return srv.closing
		})
		select {
		case <-closed:
			t.Fatal("Close returned while an upgrade was still in its AcceptFunc")
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		<-closed
		if n := rcv.closes.Load(); n != 1 {
			t.Fatalf("HandleClose called %d times when Close returned, want 1", n)
		}
		expectClose(t, c, 3001, "shutdown")
	})
}

func TestAcceptReturningNil(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		srv, err := NewServer(Config{Poller: kind, Logger: quietLogger}, func(c *Conn, r *http.Request) Receiver {
			c.Close(3500, "invalid token")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		c := serveAndDial(t, srv)
		expectClose(t, c, 3500, "invalid token")
		if n := srv.NumConns(); n != 0 {
			t.Fatalf("NumConns = %d", n)
		}
	})
}
