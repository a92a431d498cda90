package config

import (
	"reflect"

	"github.com/heraldhq/herald/hub"
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
	add := func(section string, err error) { ps = append(ps, tlsOptionProblems(section, err)...) }
	if c.TLSAutocert.Enabled {
		ps = append(ps, hubProblems(c.TLSAutocert.Validate(), reflect.TypeOf(c.TLSAutocert), "tls_autocert")...)
		if c.TLS.Enabled() {
			key := "tls.cert_file"
			if c.TLS.CertPEM != "" {
				key = "tls.cert_pem"
			}
			ps = append(ps, Problem{Key: key, Message: "set with tls_autocert.enabled: use either certificate files (or inline PEM) or ACME, not both"})
		}
		// The files are unused; the policy still applies.
		for _, p := range tlsOptionProblems("tls", c.TLS.WithoutCertificate().Validate()) {
			if p.Key != "tls.cert_file" {
				ps = append(ps, p)
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
		case !c.TLS.HasClientCA() || c.TLS.ClientAuth == "" || c.TLS.ClientAuth == "none":
			ps = append(ps, Problem{Key: "http_api.require_client_cert", Message: "needs tls.client_ca_file and tls.client_auth optional (only the API asks for a certificate) or require"})
		}
	}
	return ps
}

// tlsOptionProblems translates the problems tlsconf.Config.Validate
// reports (Go fields) into the keys of the tls section at section.
func tlsOptionProblems(section string, err error) Problems {
	return hubProblems(err, reflect.TypeOf(tlsconf.Config{}), section)
}

// TLSError is err, from tlsconf.New, NewAutocert or Files.Reload for the
// tls section at section ("admin.tls", or "tls_autocert" whose errors
// may also be about the tls section's policy), with its problems named by
// their keys, for the messages of a listener that fails to start or to
// reload.
func TLSError(section string, err error) error {
	if err == nil {
		return nil
	}
	files, acme := reflect.TypeOf(tlsconf.Config{}), reflect.TypeOf(tlsconf.AutocertConfig{})
	if section != "tls_autocert" {
		return hubProblems(err, files, section)
	}
	var ps Problems
	for _, oe := range hub.OptionErrors(err) {
		if _, ok := optionByGoName(acme, oe.Field); ok {
			ps = append(ps, hubProblems(oe, acme, section)...)
		} else {
			ps = append(ps, hubProblems(oe, files, "tls")...)
		}
	}
	if len(ps) == 0 {
		ps = Problems{{Key: section, Message: err.Error()}}
	}
	return ps
}
