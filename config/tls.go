package config

import (
	"github.com/heraldhq/herald/transport/tlsconf"
	"github.com/heraldhq/herald/transport/websocket"
)

// TLSConfig is how the main listener serves TLS: from certificate files
// (tls) or with certificates obtained over ACME (tls_autocert). The option
// types are tlsconf's, tagged there, so an embedding application takes the
// same options.
type TLSConfig struct {
	TLS         tlsconf.Config         `yaml:"tls"`
	TLSAutocert tlsconf.AutocertConfig `yaml:"tls_autocert"`
}

// TLSEnabled reports whether the main listener serves TLS.
func (c TLSConfig) TLSEnabled() bool { return c.TLS.Enabled() || c.TLSAutocert.Enabled }

// tlsProblems checks the TLS of every listener, loading the files, so
// that a wrong path is reported by `herald config check` and before
// anything listens.
func (c Config) tlsProblems() Problems {
	var ps Problems
	add := func(section string, errs []*tlsconf.FieldError) {
		for _, e := range errs {
			ps = append(ps, Problem{Key: section + "." + e.Field, Message: e.Message})
		}
	}
	if c.TLSAutocert.Enabled {
		add("tls_autocert", c.TLSAutocert.Validate())
		if c.TLS.Enabled() {
			ps = append(ps, Problem{Key: "tls.cert_file", Message: "set with tls_autocert.enabled: use either certificate files or ACME, not both"})
		}
		// The files are unused; the policy still applies.
		policy := c.TLS
		policy.CertFile, policy.KeyFile = "", ""
		for _, e := range policy.Validate() {
			if e.Field != "cert_file" {
				add("tls", []*tlsconf.FieldError{e})
			}
		}
	} else {
		add("tls", c.TLS.Validate())
	}
	add("admin.tls", c.Admin.TLS.Validate())
	if c.Admin.TLS.Enabled() && c.Admin.Address == "" {
		ps = append(ps, Problem{Key: "admin.tls.cert_file", Message: "set without admin.address: the admin listener is off"})
	}
	if c.TLSEnabled() && websocket.Poller(c.WebSocket.Poller) == websocket.PollerEpoll {
		ps = append(ps, Problem{Key: "websocket.poller", Message: `"epoll" reads plain TCP sockets only, and the listener serves TLS: use "auto" (portable with TLS) or "portable", or terminate TLS in front of Herald`})
	}
	if c.HTTPAPI.RequireClientCert {
		switch {
		case !c.TLSEnabled():
			ps = append(ps, Problem{Key: "http_api.require_client_cert", Message: "needs TLS on the main listener (tls.cert_file or tls_autocert) with tls.client_ca_file and tls.client_auth optional or require"})
		case c.TLS.ClientCAFile == "" || c.TLS.ClientAuth == "" || c.TLS.ClientAuth == "none":
			ps = append(ps, Problem{Key: "http_api.require_client_cert", Message: "needs tls.client_ca_file and tls.client_auth optional (only the API asks for a certificate) or require"})
		}
	}
	return ps
}
