package testenv

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// echoServer accepts connections and echoes what they send until t ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() {
				_, _ = io.Copy(c, c)
				_ = c.(*net.TCPConn).CloseWrite()
			}()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads it back within timeout.
func roundTrip(c net.Conn, msg string, timeout time.Duration) error {
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return errors.New("echo mismatch: " + string(buf))
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestProxyBlackholeRestoreCut(t *testing.T) {
	p := NewProxy(t, echoServer(t))
	old := dial(t, p.Addr())
	if err := roundTrip(old, "hello", 5*time.Second); err != nil {
		t.Fatalf("through a healthy proxy: %v", err)
	}

	p.Blackhole()
	// Neither an error nor an end of stream: the read just waits.
	if err := roundTrip(old, "lost", 200*time.Millisecond); !isTimeout(err) {
		t.Fatalf("black-holed connection: got %v, want a timeout", err)
	}
	// A connection opened during the hole completes its handshake with the
	// proxy and then hears nothing.
	during := dial(t, p.Addr())
	if err := roundTrip(during, "lost", 200*time.Millisecond); !isTimeout(err) {
		t.Fatalf("connection opened in the hole: got %v, want a timeout", err)
	}
	// Closing our end is not passed on either; the proxy keeps both open.
	_ = during.Close()

	p.Restore()
	fresh := dial(t, p.Addr())
	if err := roundTrip(fresh, "again", 5*time.Second); err != nil {
		t.Fatalf("new connection after Restore: %v", err)
	}
	if err := roundTrip(old, "still lost", 200*time.Millisecond); !isTimeout(err) {
		t.Fatalf("connection black-holed before Restore: got %v, want a timeout", err)
	}
	Eventually(t, "three connections open", 5*time.Second, func() bool { return p.Conns() == 3 })
	if n := p.Accepted(); n != 3 {
		t.Errorf("accepted %d connections, want 3", n)
	}

	p.Cut()
	for name, c := range map[string]net.Conn{"healthy": fresh, "black-holed": old} {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s connection after Cut: got %v, want a reset", name, err)
		}
	}
	Eventually(t, "no connection open", 5*time.Second, func() bool { return p.Conns() == 0 })

	after := dial(t, p.Addr())
	if err := roundTrip(after, "after cut", 5*time.Second); err != nil {
		t.Fatalf("new connection after Cut: %v", err)
	}
}

func TestProxyPassesEndOfStream(t *testing.T) {
	p := NewProxy(t, echoServer(t))
	c := dial(t, p.Addr())
	if err := roundTrip(c, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Half-closing our side reaches the echo server, whose copy ends and
	// closes, which reaches us as an end of stream.
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("got %v, want EOF", err)
	}
	p.Close()
	p.Close()
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("dial a closed proxy: got %v, want refused", err)
	}
}
