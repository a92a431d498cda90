package websocket

import (
	"context"
	"net/http"
	"testing"

	"github.com/gobwas/ws"
)

// BenchmarkAcceptUpgrade is one new connection from TCP connect to the
// AcceptFunc: accept, HTTP request, upgrade, attach and register, then the
// client closes and the server tears the connection down. The client's
// side of the handshake runs in the same process and is part of the cost.
func BenchmarkAcceptUpgrade(b *testing.B) {
	accepted := make(chan struct{}, 1)
	url := benchServer(b, Config{}, func(c *Conn, r *http.Request) Receiver {
		accepted <- struct{}{}
		return nopReceiver{}
	}) + "/connection/websocket"
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
