package nats

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// TestTLS delivers publications between two engines through a NATS
// server that requires TLS and client certificates; connections without
// the CA, without a client certificate or expecting another name are
// refused with the TLS error.
func TestTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	url := testenv.StartTLSNATS(t, ca)
	client := ca.Client("herald")
	files := tlsfiles.Files{CAFile: ca.File, CertFile: client.CertFile, KeyFile: client.KeyFile}
	config := func(f tlsfiles.Files) Config {
		tc, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		return Config{URL: url, TLS: tc, Prefix: "herald_tls", PingInterval: time.Second, ReconnectWait: 20 * time.Millisecond, Logger: testenv.Logger()}
	}

	named := files
	named.ServerName = "nats.internal"
	recA, recB := enginetest.NewRecorder(), enginetest.NewRecorder()
	a := startEngine(t, config(files), recA)
	b := startEngine(t, config(named), recB)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Subscribe(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	enginetest.PublishMarker(t, a, recB, "news", "over TLS")

	testenv.RequireTLSRefused(t, files, "bus.example", "nats engine: connect", func(ctx context.Context, f tlsfiles.Files) (io.Closer, error) {
		return New(ctx, config(f))
	})
}
