package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/transport/websocket"
)

// BenchmarkConnect is one client's whole arrival on a node: TCP connect,
// WebSocket upgrade, a connect command with an HS256 token and its reply,
// then the close. The client runs in the same process. "reconnect" sends
// the same token every time (the token cache answers), "nocache" turns the
// cache off; "-nethttp" lets net/http read the upgrade request
// (websocket.net_http_upgrade).
func BenchmarkConnect(b *testing.B) {
	for _, bc := range []struct {
		name    string
		cache   int
		netHTTP bool
	}{
		{"reconnect", config.DefaultTokenCacheSize, false},
		{"reconnect-nethttp", config.DefaultTokenCacheSize, true},
		{"nocache", 0, false},
		{"nocache-nethttp", 0, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := config.Default()
			cfg.WebSocket.Rate = -1 // every client comes from 127.0.0.1
			cfg.Client.Token.CacheSize = bc.cache
			cfg.WebSocket.NetHTTPUpgrade = bc.netHTTP
			s := startServer(b, cfg) // HS256 with "secret"
			b.Cleanup(func() { shutdownBench(s) })
			signer, err := auth.NewHMACSigner("secret", "HS256")
			if err != nil {
				b.Fatal(err)
			}
			tok, err := signer.ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
			if err != nil {
				b.Fatal(err)
			}
			connect := []byte(`{"id":1,"connect":{"token":"` + tok + `"}}`)
			url := "ws://" + s.Addr() + WebSocketPath
			d := ws.Dialer{Protocols: []string{websocket.SubprotocolJSON}}
			b.ReportAllocs()
			b.SetParallelism(4) // arrivals overlap, as under a connection storm
			cpu := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := arrive(d, url, connect); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// arrive is one client's arrival: upgrade, connect and its reply, close.
func arrive(d ws.Dialer, url string, connect []byte) error {
	nc, br, _, err := d.Dial(context.Background(), url)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := wsutil.WriteClientText(nc, connect); err != nil {
		return err
	}
	var r io.Reader = nc
	if br != nil {
		r = io.MultiReader(br, nc)
	}
	reply, err := wsutil.ReadServerText(struct {
		io.Reader
		io.Writer
	}{r, nc})
	if err != nil {
		return err
	}
	if !bytes.Contains(reply, []byte(`"connect"`)) {
		return fmt.Errorf("connect reply %s", reply)
	}
	return nil
}
