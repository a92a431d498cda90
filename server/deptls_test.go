package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// TestEngineTLSFromConfig runs a node whose engine reaches Redis, or NATS
// with presence in Redis, over TLS with client certificates, configured
// by the engine.*.tls sections only: a publication reaches a subscriber
// through the engine, and presence works through Redis.
func TestEngineTLSFromConfig(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	client := ca.Client("herald")
	section := config.ClientTLS{Enabled: true, Files: config.ClientTLSFiles{CAFile: ca.File, CertFile: client.CertFile, KeyFile: client.KeyFile}}
	for _, typ := range []string{"redis", "nats"} {
		t.Run(typ, func(t *testing.T) {
			cfg := config.Default()
			cfg.HTTPAPI.Key = "k"
			cfg.Channel.WithoutNamespace.AllowSubscribeForClient = true
			cfg.Channel.WithoutNamespace.Presence = true
			cfg.Engine.Type = typ
			cfg.Engine.Redis.Address = config.StringList{testenv.StartTLSRedis(t, ca)}
			cfg.Engine.Redis.TLS = section
			if typ == "nats" {
				cfg.Engine.NATS.URL = testenv.StartTLSNATS(t, ca)
				cfg.Engine.NATS.TLS = section
				cfg.Engine.NATS.Presence = "redis"
			}
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			c := connectClient(t, s, "alice")
			c.MustSubscribe(2, "news", "")
			if got := apiCall(t, s, "publish", `{"channel":"news","data":{"over":"tls"}}`); strings.Contains(got, "error") {
				t.Fatalf("publish: %s", got)
			}
			push := c.Next()
			if !strings.Contains(jsonclient.Compact(t, push), `"over":"tls"`) {
				t.Fatalf("push: %v", push)
			}
			if got := apiCall(t, s, "presence", `{"channel":"news"}`); !strings.Contains(got, `"user":"alice"`) {
				t.Fatalf("presence: %s", got)
			}
		})
	}
}

// TestEngineTLSRefused: a node whose engine.redis.tls cannot verify the
// server, or whose files cannot be read, does not start, and says why.
func TestEngineTLSRefused(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	addr := testenv.StartTLSRedis(t, ca)
	client := ca.Client("herald")
	for _, c := range []struct {
		name string
		ca   string
		want string
	}{
		{"system roots", "", "x509: certificate signed by unknown authority"},
		{"missing file", "/nonexistent/ca.pem", "engine.redis.tls: ca_file: open /nonexistent/ca.pem"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			cfg := config.Default()
			cfg.Address = "127.0.0.1:0"
			cfg.Client.Token.HMACSecretKey = "secret"
			cfg.Engine.Type = "redis"
			cfg.Engine.Redis.Address = config.StringList{addr}
			cfg.Engine.Redis.TLS = config.ClientTLS{Enabled: true, Files: config.ClientTLSFiles{CAFile: c.ca, CertFile: client.CertFile, KeyFile: client.KeyFile}}
			s, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil {
				_ = s.Shutdown(context.Background())
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestProxyTLSFromConfig connects a client through a connect proxy whose
// backend is HTTPS with a private CA, a certificate for another name than
// the URL's host, and client certificates required: the proxies[].tls
// section makes the call go through.
func TestProxyTLSFromConfig(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	pair := ca.ServerFor("backend", "backend.internal")
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	seen := make(chan string, 1)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.TLS.PeerCertificates[0].Subject.CommonName
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"result":{"user":"`+r.TLS.PeerCertificates[0].Subject.CommonName+`"}}`)
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	backend.StartTLS()
	t.Cleanup(backend.Close)
	client := ca.Client("herald-node")

	cfg, err := config.Parse([]byte(`
proxies:
  - name: app
    endpoint: ` + backend.URL + `/connect
    tls:
      ca_file: ` + ca.File + `
      cert_file: ` + client.CertFile + `
      key_file: ` + client.KeyFile + `
      server_name: backend.internal
client:
  proxy:
    connect: app
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	c := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+WebSocketPath, protocol.TypeJSON), "secret")
	if m := c.Call(`{"id":1,"connect":{}}`); m["connect"] == nil {
		t.Fatalf("connect through the TLS proxy: %v", m)
	}
	// The handler ran before the reply, so what it saw is here.
	if cn := <-seen; cn != "herald-node" {
		t.Fatalf("the backend saw client certificate %q, want herald-node", cn)
	}
}
