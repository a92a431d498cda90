package websocket

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"
)

// sizeListener hands out connections that report the size of the buffer
// of each Read to sizes (dropped when sizes is full, which the test makes
// large enough not to be).
type sizeListener struct {
	net.Listener
	sizes chan int
}

func (l sizeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return sizeConn{Conn: c, sizes: l.sizes}, nil
}

type sizeConn struct {
	net.Conn
	sizes chan<- int
}

func (c sizeConn) Read(p []byte) (int, error) {
	select {
	case c.sizes <- len(p):
	default:
	}
	return c.Conn.Read(p)
}

// TestPortableReadBufferSize: a connection of the portable path reads
// into a buffer of Config.ReadBufferSize (Centrifugo's read_buffer_size),
// grows it for a larger message, which arrives whole, and goes back to
// that size once the message is handled.
func TestPortableReadBufferSize(t *testing.T) {
	// Large enough that a buffer of 4096 (the default) would be kept
	// between messages, so a read of this size is the configured buffer.
	const size = 1500
	receivers := make(chan *testReceiver, 1)
	srv, err := NewServer(Config{Poller: PollerPortable, ReadBufferSize: size, Logger: quietLogger}, func(c *Conn, _ *http.Request) Receiver {
		s := newTestReceiver(c)
		receivers <- s
		return s
	})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	sizes := make(chan int, 1<<14)
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = sizeListener{Listener: hs.Listener, sizes: sizes}
	hs.Start()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		hs.Close()
	})
	c, _, err := gorilla.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+path, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	var rcv *testReceiver
	select {
	case rcv = <-receivers:
	case <-time.After(5 * time.Second):
		t.Fatal("no receiver accepted")
	}

	// waitRead consumes the recorded reads until one satisfies ok.
	waitRead := func(what string, ok func(int) bool) {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case n := <-sizes:
				if ok(n) {
					return
				}
			case <-timeout:
				t.Fatalf("no read %s", what)
			}
		}
	}
	// The handshake is read by net/http's own buffer (4096); what follows
	// it, by the connection's.
	expectEcho(t, c, gorilla.TextMessage, "small", gorilla.TextMessage)
	waitRead("into the configured buffer", func(n int) bool { return n == size })

	big := strings.Repeat("x", 20*size)
	expectEcho(t, c, gorilla.TextMessage, big, gorilla.TextMessage)
	if got := rcv.nextFrame(t); got != "small" {
		t.Fatalf("first frame %q, want %q", got, "small")
	}
	if got := rcv.nextFrame(t); got != big {
		t.Fatalf("second frame: %d bytes, want %d", len(got), len(big))
	}
	waitRead("into a grown buffer", func(n int) bool { return n > idleReadBufFactor*size })
	waitRead("into the configured buffer after the large message", func(n int) bool { return n == size })
}
