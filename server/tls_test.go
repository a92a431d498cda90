package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/tlsconf"
)

// tlsNode starts a node serving TLS from pair, with the API on (key "k")
// and clients allowed to subscribe to any channel.
func tlsNode(t *testing.T, pair testcerts.Pair, edit func(*config.Config)) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.WebSocket.Poller = "auto"
	cfg.TLS.CertFile, cfg.TLS.KeyFile = pair.CertFile, pair.KeyFile
	cfg.HTTPAPI.Key = "k"
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	if edit != nil {
		edit(&cfg)
	}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// httpsClient trusts ca and offers HTTP/2, as browsers do.
func httpsClient(t *testing.T, ca *testcerts.CA, certs ...tls.Certificate) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.Pool, Certificates: certs},
		ForceAttemptHTTP2: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// wssClient connects user over wss, offering only HTTP/1.1 over ALPN as
// browsers do for WebSocket.
func wssClient(t *testing.T, s *Server, ca *testcerts.CA, user string) *jsonclient.Client {
	t.Helper()
	d := &gws.Dialer{HandshakeTimeout: 5 * time.Second, TLSClientConfig: &tls.Config{RootCAs: ca.Pool, NextProtos: []string{"http/1.1"}}}
	c := jsonclient.New(t, wire.WebSocket(wire.DialWith(t, d, "wss://"+s.Addr()+WebSocketPath, nil), protocol.TypeJSON), "secret")
	c.Connect(user)
	return c
}

func apiOver(t *testing.T, c *http.Client, s *Server, method, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "https://"+s.Addr()+"/api/"+method, strings.NewReader(body))
	req.Header.Set("X-API-Key", "k")
	r, err := c.Do(req)
	if err != nil {
		t.Fatalf("API %s over TLS: %v", method, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r, string(b)
}

// servedSerial is the serial of the certificate a new connection to addr
// gets.
func servedSerial(t *testing.T, addr string, ca *testcerts.CA) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("handshake with %s: %v", addr, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestTLSListener serves WebSocket over wss and the API over HTTP/2 on one
// TLS listener, and rotates the certificate on ReloadTLS (SIGHUP) without
// dropping the open WebSocket connection.
func TestTLSListener(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	first, second := ca.Server("first"), ca.Server("second")
	s := tlsNode(t, first, nil)
	if s.ws.Poller() != "portable" {
		t.Fatalf("poller %q with TLS, want portable", s.ws.Poller())
	}
	https := httpsClient(t, ca)
	r, err := https.Get("https://" + s.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK || r.ProtoMajor != 2 || r.TLS == nil {
		t.Fatalf("/healthz over TLS: status %d, protocol %s, want 200 over HTTP/2", r.StatusCode, r.Proto)
	}

	alice := wssClient(t, s, ca, "alice")
	alice.MustSubscribe(2, "room", "")
	if resp, body := apiOver(t, https, s, "publish", `{"channel":"room","data":{"n":1}}`); resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || strings.Contains(body, "error") {
		t.Fatalf("publish over HTTP/2: %d %s %s", resp.StatusCode, resp.Proto, body)
	}
	if got := alice.Read(); !strings.Contains(got, `"n":1`) {
		t.Fatalf("publication over wss: %s", got)
	}

	testcerts.Replace(t, first, second)
	if err := s.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, s.Addr(), ca); got != second.Serial.String() {
		t.Fatalf("after ReloadTLS a new connection got certificate %s, want the new one %s", got, second.Serial)
	}
	// The connection opened with the old certificate still delivers, and
	// a new WebSocket client gets in.
	if resp, body := apiOver(t, httpsClient(t, ca), s, "publish", `{"channel":"room","data":{"n":2}}`); resp.StatusCode != http.StatusOK || strings.Contains(body, "error") {
		t.Fatalf("publish after the reload: %d %s", resp.StatusCode, body)
	}
	if got := alice.Read(); !strings.Contains(got, `"n":2`) {
		t.Fatalf("publication on the connection opened before the reload: %s", got)
	}
	wssClient(t, s, ca, "bob")
}

// TestAPIClientCertificate turns on mutual TLS for the API only: without
// a client certificate the API answers 403 naming the option, while
// WebSocket clients without one still connect.
func TestAPIClientCertificate(t *testing.T) {
	ca, clients := testcerts.NewCA(t, "server"), testcerts.NewCA(t, "clients")
	s := tlsNode(t, ca.Server("server"), func(c *config.Config) {
		c.TLS.ClientCAFile, c.TLS.ClientAuth = clients.File, "optional"
		c.HTTPAPI.RequireClientCert = true
	})
	resp, body := apiOver(t, httpsClient(t, ca), s, "info", `{}`)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "http_api.require_client_cert") {
		t.Fatalf("API without a client certificate: %d %s, want 403 naming http_api.require_client_cert", resp.StatusCode, body)
	}
	resp, body = apiOver(t, httpsClient(t, ca, clients.Client("backend").Cert), s, "info", `{}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Fatalf("API with a client certificate: %d %s", resp.StatusCode, body)
	}
	wssClient(t, s, ca, "alice")
}

// TestAdminTLS serves the admin listener over TLS with its own files.
func TestAdminTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	admin := ca.Server("admin")
	s := tlsNode(t, ca.Server("main"), func(c *config.Config) {
		c.Admin.Address = "127.0.0.1:0"
		c.Admin.TLS = tlsconf.Config{CertFile: admin.CertFile, KeyFile: admin.KeyFile, MinVersion: "1.3"}
	})
	r, err := httpsClient(t, ca).Get("https://" + s.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK || r.TLS == nil || r.TLS.Version != tls.VersionTLS13 {
		t.Fatalf("admin /metrics over TLS: %d %+v", r.StatusCode, r.TLS)
	}
	if got := servedSerial(t, s.AdminAddr(), ca); got != admin.Serial.String() {
		t.Fatalf("admin listener serves certificate %s, want its own %s", got, admin.Serial)
	}
}

// TestTLSBadFiles checks that New refuses files that do not load, naming
// the key.
func TestTLSBadFiles(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	good, other := ca.Server("good"), ca.Server("other")
	cfg := config.Default()
	cfg.Client.Token.HMACSecretKey = "secret"
	cfg.TLS.CertFile, cfg.TLS.KeyFile = good.CertFile, other.KeyFile
	_, err := New(cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "tls.key_file") {
		t.Fatalf("New with a key of another certificate: %v, want an error naming tls.key_file", err)
	}
}

// TestHTTPTransportsOverHTTP2 runs the HTTP-streaming and SSE transports
// over HTTP/2 on a TLS listener: the stream, its emulation requests and a
// publication through the API.
func TestHTTPTransportsOverHTTP2(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	s := tlsNode(t, ca.Server("server"), nil)
	h2 := httpsClient(t, ca)
	h2.Timeout = 0 // the streams stay open
	for _, path := range []string{HTTPStreamPath, SSEPath} {
		t.Run(strings.TrimPrefix(path, "/connection/"), func(t *testing.T) {
			connect := `{"id":1,"connect":{"token":"` + token(t, "alice") + `"}}`
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			var req *http.Request
			if path == SSEPath {
				req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "https://"+s.Addr()+path+"?cf_connect="+url.QueryEscape(connect), nil)
			} else {
				req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "https://"+s.Addr()+path, strings.NewReader(connect))
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := h2.Do(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			c := &httpStreamClient{t: t, resp: resp, rd: bufio.NewReader(resp.Body), sse: path == SSEPath, cancel: cancel}
			t.Cleanup(c.close)
			if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
				t.Fatalf("open %s: %s over %s, want 200 over HTTP/2", path, resp.Status, resp.Proto)
			}
			var r struct {
				Connect *struct{ Session, Node string } `json:"connect"`
			}
			if err := json.Unmarshal(c.next(), &r); err != nil || r.Connect == nil {
				t.Fatalf("connect result: %v", err)
			}
			body, _ := json.Marshal(map[string]string{"session": r.Connect.Session, "node": r.Connect.Node, "data": `{"id":2,"subscribe":{"channel":"room"}}`})
			er, err := h2.Post("https://"+s.Addr()+EmulationPath, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			er.Body.Close()
			if er.StatusCode != http.StatusNoContent || er.ProtoMajor != 2 {
				t.Fatalf("emulation: %s over %s", er.Status, er.Proto)
			}
			c.awaitMessage(`"id":2,"subscribe"`)
			if resp, body := apiOver(t, h2, s, "publish", `{"channel":"room","data":{"via":"h2"}}`); resp.StatusCode != http.StatusOK || strings.Contains(body, "error") {
				t.Fatalf("publish: %d %s", resp.StatusCode, body)
			}
			c.awaitMessage(`"pub":{"data":{"via":"h2"}`)
		})
	}
}

// TestHTTPErrorLogLevels keeps failed handshakes, which scanners cause by
// the thousand, out of the default log level, and other HTTP server errors
// in it.
func TestHTTPErrorLogLevels(t *testing.T) {
	var out testenv.LockedBuffer
	l := httpErrorLog(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), "main")
	l.Print("http: TLS handshake error from 127.0.0.1:1234: EOF")
	l.Print("http: Accept error: too many open files; retrying in 5ms")
	got := out.String()
	for _, want := range []string{`level=DEBUG msg="http: TLS handshake error`, `level=WARN msg="http: Accept error`, "listener=main"} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q lacks %q", got, want)
		}
	}
}
