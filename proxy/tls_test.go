package proxy_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/tlsfiles"
	"github.com/heraldhq/herald/proxy"
)

// newTLSBackend is a backend over HTTPS with a certificate for
// "backend.internal" only, from ca, that requires a client certificate
// from ca.
func newTLSBackend(t *testing.T, ca *testcerts.CA) *backend {
	b := &backend{t: t, calls: make(chan call, 256), answers: map[string]http.HandlerFunc{}}
	pair := ca.ServerFor("backend", "backend.internal")
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM(pem)
	b.srv = httptest.NewUnstartedServer(b.handler())
	b.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs}
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

// TestEndpointTLS calls an HTTPS backend that has a certificate from a
// private CA, for another name than the URL's host, and requires a client
// certificate: with the endpoint's CA, client certificate and server name
// the call goes through, without any of them the client gets error 100.
func TestEndpointTLS(t *testing.T) {
	t.Parallel()
	ca := testcerts.NewCA(t, "herald-test")
	b := newTLSBackend(t, ca)
	client := ca.Client("herald-node")
	good := tlsfiles.Files{CAFile: ca.File, CertFile: client.CertFile, KeyFile: client.KeyFile, ServerName: "backend.internal"}
	config := func(t *testing.T, f *tlsfiles.Files) proxy.Config {
		var c *tls.Config
		if f != nil {
			var err error
			if c, err = f.Config(); err != nil {
				t.Fatal(err)
			}
		}
		return fullConfig(b, func(e *proxy.Endpoint) { e.TLS = c })
	}

	n := startNode(t, config(t, &good))
	c := n.dial(nil)
	b.answer("/connect", `{"result":{"user":"u1"}}`)
	m := c.Call(`{"id":1,"connect":{}}`)
	req := b.next()
	if _, ok := m["connect"].(map[string]any); !ok {
		t.Fatalf("connect through the TLS backend: %v", m)
	}
	if req.tls == nil || len(req.tls.PeerCertificates) == 0 || req.tls.PeerCertificates[0].Subject.CommonName != "herald-node" {
		t.Fatalf("the backend did not see the client certificate: %+v", req.tls)
	}

	noClientCert := good
	noClientCert.CertFile, noClientCert.KeyFile = "", ""
	wrongName := good
	wrongName.ServerName = ""
	otherCA := good
	otherCA.CAFile = testcerts.NewCA(t, "herald-test").File
	for name, f := range map[string]*tlsfiles.Files{
		"no tls settings (system roots)": nil,
		"no client certificate":          &noClientCert,
		"the URL's host as server name":  &wrongName,
		"another CA":                     &otherCA,
	} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			n := startNode(t, config(t, f))
			c := n.dial(nil)
			b.answer("/connect", `{"result":{"user":"u1"}}`)
			m := c.Call(`{"id":1,"connect":{}}`)
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != float64(100) {
				t.Fatalf("connect: %v, want error 100", m)
			}
			// The handler records a request before answering it, so one
			// that got through would be here by now.
			b.noCall()
		})
	}
}

// TestEndpointTLSNeedsHTTPS refuses TLS settings on an http:// endpoint,
// which would otherwise be ignored.
func TestEndpointTLSNeedsHTTPS(t *testing.T) {
	e := proxy.Endpoint{Name: "p", URL: "http://backend.internal/connect", TLS: &tls.Config{}}
	ps := optionerr.All(e.Validate())
	if len(ps) != 1 || ps[0].Field != "TLS" || !strings.Contains(ps[0].Message, "https://") {
		t.Fatalf("problems: %+v, want one for tls", ps)
	}
	if _, err := proxy.New(proxy.Config{Endpoints: []proxy.Endpoint{e}}); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("New: %v, want an error naming TLS", err)
	}
}
