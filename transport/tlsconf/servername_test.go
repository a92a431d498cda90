package tlsconf

import (
	"crypto/tls"
	"testing"
)

// TestWithServerName: with tls_autocert.server_name, a handshake without
// SNI asks for that name's certificate; one with SNI keeps its own, and
// without the option nothing changes.
func TestWithServerName(t *testing.T) {
	var asked string
	get := func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		asked = h.ServerName
		return nil, nil
	}
	for _, c := range []struct{ option, sni, want string }{
		{"rt.example.com", "", "rt.example.com"},
		{"rt.example.com", "other.example.com", "other.example.com"},
		{"", "", ""},
	} {
		hello := &tls.ClientHelloInfo{ServerName: c.sni}
		_, _ = withServerName(c.option, get)(hello)
		if asked != c.want || hello.ServerName != c.sni {
			t.Errorf("server_name %q, SNI %q: asked for %q (hello now %q), want %q and the hello unchanged", c.option, c.sni, asked, hello.ServerName, c.want)
		}
	}
}
