package auth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/auth"
)

// idpKey is a signing key of the identity provider the tests play: tokens
// are issued with go-jose, not with the package under test.
type idpKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newIdPKey(t testing.TB, kid string, alg jose.SignatureAlgorithm) idpKey {
	t.Helper()
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case jose.RS256, jose.RS384, jose.RS512:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.ES384:
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return idpKey{kid: kid, alg: alg, priv: priv}
}

// public is the key as the provider publishes it.
func (k idpKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// mint signs claims as a JWT with the key's kid in the header, plus any
// extra header.
func (k idpKey) mint(t testing.TB, claims map[string]any, extra map[jose.HeaderKey]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{ExtraHeaders: extra}).WithType("JWT")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// jwksPath is where the key set is configured to be.
const jwksPath = "/.well-known/jwks.json"

// jwksServer is the provider's key set endpoint over HTTPS with a
// certificate of its own CA. It counts the fetches, can hold them until
// released, and can be made to fail.
type jwksServer struct {
	srv     *httptest.Server
	fetches atomic.Int64

	mu       sync.Mutex
	keys     []jose.JSONWebKey
	down     bool
	gate     chan struct{}
	redirect string // answer jwksPath with a redirect to it, when set
}

func newJWKSServer(t testing.TB, keys ...idpKey) *jwksServer {
	s := &jwksServer{}
	s.publish(keys...)
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		gate, down, redirect := s.gate, s.down, s.redirect
		set := jose.JSONWebKeySet{Keys: s.keys}
		s.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		if redirect != "" && r.URL.Path == jwksPath {
			http.Redirect(w, r, redirect, http.StatusFound)
			return
		}
		if down {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// publish replaces the key set: the rotation.
func (s *jwksServer) publish(keys ...idpKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = s.keys[:0]
	for _, k := range keys {
		s.keys = append(s.keys, k.public())
	}
}

func (s *jwksServer) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// redirectTo makes the endpoint answer with a redirect to url.
func (s *jwksServer) redirectTo(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect = url
}

// hold makes fetches wait until the returned function is called.
func (s *jwksServer) hold() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.gate = nil
		s.mu.Unlock()
		close(gate)
	}
}

// tls trusts the server's certificate, as client.token.jwks_tls.ca_file does.
func (s *jwksServer) tls() *tls.Config {
	return s.srv.Client().Transport.(*http.Transport).TLSClientConfig
}

func (s *jwksServer) config(name string) *auth.JWKSConfig {
	return &auth.JWKSConfig{URL: s.srv.URL + jwksPath, TLS: s.tls(), Name: name}
}

// metric returns the value of a gauge or counter of the Verifier, the
// sum over label values matching labels.
func metric(t testing.TB, cs []prometheus.Collector, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// clock is a time source the test moves forward.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(v *auth.Verifier) *clock {
	c := &clock{now: time.Now()}
	auth.SetJWKSClock(v, c.Now)
	return c
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
