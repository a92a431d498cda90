package websocket

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	gorilla "github.com/gorilla/websocket"
)

func TestPollerResolve(t *testing.T) {
	native := PollerPortable
	if EpollAvailable {
		native = PollerEpoll
	}
	type resolveCase struct {
		in      Poller
		want    Poller
		wantErr string
	}
	tests := []resolveCase{
		{in: "", want: native},
		{in: PollerAuto, want: native},
		{in: PollerPortable, want: PollerPortable},
		{in: "kqueue", wantErr: `"kqueue": want "auto", "epoll" or "portable"`},
		{in: "Epoll", wantErr: `"Epoll": want`},
	}
	if EpollAvailable {
		tests = append(tests, resolveCase{in: PollerEpoll, want: PollerEpoll})
	} else {
		tests = append(tests, resolveCase{in: PollerEpoll, wantErr: `"epoll" needs Linux (this is ` + runtime.GOOS + `): use "auto" or "portable"`})
	}
	for _, tt := range tests {
		got, err := tt.in.Resolve()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Resolve(%q) = %q, %v; want error containing %s", tt.in, got, err, tt.wantErr)
			}
			// NewServer refuses it naming the option.
			_, err := NewServer(Config{Poller: tt.in}, func(*Conn, *http.Request) Receiver { return nil })
			if err == nil || !strings.Contains(err.Error(), "Poller: "+tt.wantErr) {
				t.Errorf("NewServer with Poller %q: %v, want an error naming Config.Poller", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestIdleConnectionIsNotTimedOut checks that ReadTimeout only bounds a
// message that has started: a connection with nothing half-read stays
// open however long it is quiet, also after messages that arrived in parts
// or fragments.
func TestIdleConnectionIsNotTimedOut(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		const timeout = 100 * time.Millisecond
		h := newHarness(t, Config{Poller: kind, ReadTimeout: timeout})
		rc, s := h.dialRaw()
		f := frameBytes(t, ws.OpText, true, []byte("split"))
		rc.write(f[:3])
		rc.write(f[3:])
		if _, p := rc.read(); string(p) != "split" {
			t.Fatalf("echo %q", p)
		}
		rc.send(ws.OpText, false, "frag")
		rc.send(ws.OpContinuation, true, "ment")
		if _, p := rc.read(); string(p) != "fragment" {
			t.Fatalf("echo %q", p)
		}
		// Quiet for several timeouts: there is no event to wait for when
		// nothing happens, so this one sleeps.
		time.Sleep(4 * timeout)
		if n := s.closes.Load(); n != 0 {
			t.Fatal("an idle connection was closed")
		}
		rc.send(ws.OpText, true, "still open")
		if _, p := rc.read(); string(p) != "still open" {
			t.Fatalf("echo %q", p)
		}
	})
}

// TestTLSConnections: the portable path reads any net.Conn, so TLS can end
// in Herald; the epoll path needs the socket's fd and refuses it with 1011.
func TestTLSConnections(t *testing.T) {
	forEachPoller(t, func(t *testing.T, kind Poller) {
		receivers := make(chan *testReceiver, 1)
		srv, err := NewServer(Config{Poller: kind, Logger: quietLogger}, func(c *Conn, r *http.Request) Receiver {
			s := newTestReceiver(c)
			receivers <- s
			return s
		})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewTLSServer(srv)
		t.Cleanup(func() {
			if err := srv.Close(); err != nil {
				t.Errorf("Server.Close: %v", err)
			}
			hs.Close()
		})
		d := gorilla.Dialer{
			TLSClientConfig:  hs.Client().Transport.(*http.Transport).TLSClientConfig,
			HandshakeTimeout: 5 * time.Second,
		}
		c, _, err := d.Dial("wss"+strings.TrimPrefix(hs.URL, "https")+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if kind == PollerEpoll {
			expectClose(t, c, 1011, "internal error")
			return
		}
		expectEcho(t, c, gorilla.TextMessage, "over tls", gorilla.TextMessage)
		var s *testReceiver
		select {
		case s = <-receivers:
		case <-time.After(5 * time.Second):
			t.Fatal("no receiver")
		}
		c.Close()
		waitClosed(t, s)
	})
}
