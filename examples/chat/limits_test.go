package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// dialFrom upgrades a connection to the chat from source without sending
// connect. It returns the connection, or the status of a refused upgrade.
func dialFrom(t *testing.T, base, source string) (*gws.Conn, int) {
	t.Helper()
	nd := net.Dialer{Timeout: waitTime, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	d := gws.Dialer{HandshakeTimeout: waitTime, NetDialContext: nd.DialContext}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+websocketPath, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if errors.Is(err, gws.ErrBadHandshake) && resp != nil {
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("refusal %d without Retry-After", resp.StatusCode)
			}
			return nil, resp.StatusCode
		}
		t.Fatalf("dial from %s: %v", source, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, resp.StatusCode
}

// TestRefusesPastItsLimits: connections that never send a name fill the
// chat's bound, one address only a tenth of it; past them upgrades are
// refused before anything is opened, and a connection that sends its name
// makes room again.
func TestRefusesPastItsLimits(t *testing.T) {
	base, _, _ := startChatWith(t, limits{maxUnauthenticated: 4, rate: 1000})
	first, status := dialFrom(t, base, "127.0.0.1")
	if first == nil {
		t.Fatalf("first connection refused with %d", status)
	}
	if _, status := dialFrom(t, base, "127.0.0.1"); status != http.StatusTooManyRequests {
		t.Fatalf("a second unnamed connection from one address (share 1 of 4): %d, want 429", status)
	}
	for _, source := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		if c, status := dialFrom(t, base, source); c == nil {
			t.Fatalf("from %s, within the bound: %d", source, status)
		}
	}
	if _, status := dialFrom(t, base, "127.0.0.5"); status != http.StatusServiceUnavailable {
		t.Fatalf("past the bound of 4 unnamed connections: %d, want 503", status)
	}
	// The first connection sends its name: it no longer counts.
	named := &client{t: t, conn: first}
	named.send("connect", `{"data":{"name":"alice"}}`)
	if _, err := named.reply(1); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if c, status := dialFrom(t, base, "127.0.0.5"); c == nil {
		t.Fatalf("after one connection sent its name: %d", status)
	}
}

// TestRefusesFastAddress: one address past its rate gets 429.
func TestRefusesFastAddress(t *testing.T) {
	base, _, _ := startChatWith(t, limits{maxUnauthenticated: 100, rate: 0.001}) // a burst of 1
	connect(t, base, "alice")
	if _, status := dialFrom(t, base, "127.0.0.1"); status != http.StatusTooManyRequests {
		t.Fatalf("a second connection at once: %d, want 429", status)
	}
	if c, status := dialFrom(t, base, "127.0.0.2"); c == nil {
		t.Fatalf("another address: %d", status)
	}
}

// TestDrainOnShutdown: once shutdown starts, new connections are refused
// with 503 while the open pages are closed with 3001 (shutdown), spread
// over the drain time, so they reconnect once the chat is back.
func TestDrainOnShutdown(t *testing.T) {
	// Two pages: the first is closed at once, the second half the drain
	// time later; in between the chat is draining and still listening.
	base, s, stop := startChatWith(t, limits{maxUnauthenticated: 100, rate: 1000, drain: 2 * time.Second})
	pages := []*client{connect(t, base, "alice"), connect(t, base, "bob")}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	testenv.Eventually(t, "the first page closed", waitTime, func() bool { return s.adm.Draining() && s.hub.NumClients() == 1 })
	if _, status := dialFrom(t, base, "127.0.0.2"); status != http.StatusServiceUnavailable {
		t.Fatalf("a connection while draining: %d, want 503", status)
	}
	for _, p := range pages {
		_, err := p.next(func(map[string]json.RawMessage) bool { return false })
		var ce *gws.CloseError
		if !errors.As(err, &ce) || ce.Code != 3001 {
			t.Fatalf("a page while draining: %v, want closed with 3001", err)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
