package redis

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// TestTLS runs the engine and a standalone presence against a Redis that
// accepts TLS only: publications go through and are kept, and presence
// works; connections without the CA, without a client certificate or
// expecting another name are refused with the TLS error.
func TestTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	addr := testenv.StartTLSRedis(t, ca)
	client := ca.Client("herald")
	files := tlsfiles.Files{CAFile: ca.File, CertFile: client.CertFile, KeyFile: client.KeyFile}
	config := func(f tlsfiles.Files) Config {
		tc, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		return Config{Addrs: []string{addr}, TLS: tc, Prefix: "herald_tls_" + randomToken(6), Logger: testenv.Logger(),
			HealthInterval: 200 * time.Millisecond, ReconnectMin: 10 * time.Millisecond, ReconnectMax: 200 * time.Millisecond}
	}

	for _, name := range []string{"", "redis.internal"} {
		t.Run("server_name="+name, func(t *testing.T) {
			f := files
			f.ServerName = name
			opts := config(f)
			rec := enginetest.NewRecorder()
			e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return New(ctx, opts) })
			enginetest.StartEngine(t, e, rec)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := e.Subscribe(ctx, "news"); err != nil {
				t.Fatal(err)
			}
			enginetest.PublishMarker(t, e, rec, "news", "over TLS")
			if _, err := e.Publish(ctx, "kept", &engine.Publication{Data: []byte("h")}, engine.PublishOptions{HistorySize: 5, HistoryTTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
			pubs, _, err := e.History(ctx, "kept", engine.HistoryRequest{Limit: -1})
			if err != nil || len(pubs) != 1 || string(pubs[0].Data) != "h" {
				t.Fatalf("history over TLS: %v, %v", pubs, err)
			}

			p, err := NewPresence(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := p.AddPresence(ctx, "room", &engine.ClientInfo{User: "u", Client: "c"}, time.Minute); err != nil {
				t.Fatal(err)
			}
			if m, err := p.Presence(ctx, "room"); err != nil || m["c"] == nil {
				t.Fatalf("presence over TLS: %v, %v", m, err)
			}
		})
	}

	testenv.RequireTLSRefused(t, files, "cache.example", "redis engine: ping", func(ctx context.Context, f tlsfiles.Files) (io.Closer, error) {
		return New(ctx, config(f))
	})
}
