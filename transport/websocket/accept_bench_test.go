package websocket

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/internal/testenv"
)

// nopReceiver is a connection that is accepted and then left alone.
type nopReceiver struct{}

func (nopReceiver) HandleFrame([]byte) bool { return true }
func (nopReceiver) HandleClose()            {}

// BenchmarkAcceptUpgrade is one new connection from TCP connect to the
// AcceptFunc: accept, HTTP request, upgrade, attach and register, then the
// client closes and the server tears the connection down. The client's
// side of the handshake runs in the same process and is part of the cost.
func BenchmarkAcceptUpgrade(b *testing.B) {
	accepted := make(chan struct{}, 1)
	srv, err := NewServer(Config{Poller: Poller(testenv.WebSocketPoller()), Logger: quietLogger}, func(c *Conn, r *http.Request) Receiver {
		accepted <- struct{}{}
		return nopReceiver{}
	})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/connection/websocket"
	d := ws.Dialer{Protocols: []string{SubprotocolJSON}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		nc, _, _, err := d.Dial(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		<-accepted
		_ = nc.Close()
	}
}
