package config

import (
	"crypto/tls"
	"fmt"
	"net/url"

	"github.com/heraldhq/herald/internal/tlsfiles"
)

// ClientTLSFiles is the TLS of a connection Herald makes to a server it
// depends on: which CA to trust, which client certificate to show and
// which name to expect.
type ClientTLSFiles struct {
	CAFile             string `yaml:"ca_file" defaultdoc:"the system's roots" doc:"PEM file of the certificate authorities that sign the server's certificate"`
	CertFile           string `yaml:"cert_file" doc:"PEM client certificate, for servers that verify clients (with 'key_file')"`
	KeyFile            string `yaml:"key_file" doc:"PEM private key of 'cert_file'"`
	ServerName         string `yaml:"server_name" defaultdoc:"the host dialled" doc:"the name the server's certificate must carry, when it differs from the host in the address"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify" doc:"accept any server certificate: the connection is encrypted but not authenticated; for tests only"`
}

// ClientTLS is the tls section of engine.redis and engine.nats.
type ClientTLS struct {
	Enabled        bool `yaml:"enabled" doc:"connect with TLS"`
	ClientTLSFiles `yaml:",inline"`
}

// Files converts the section for tlsfiles.
func (f ClientTLSFiles) Files() tlsfiles.Files {
	return tlsfiles.Files{CAFile: f.CAFile, CertFile: f.CertFile, KeyFile: f.KeyFile, ServerName: f.ServerName, InsecureSkipVerify: f.InsecureSkipVerify}
}

// set reports whether any key of the section is given.
func (f ClientTLSFiles) set() bool { return f != ClientTLSFiles{} }

// Config reads the files of an enabled section; nil when TLS is off.
func (c ClientTLS) Config() (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	return c.Files().Config()
}

// problems checks a section without reading its files (a configuration is
// checked on machines that do not have them), naming each key under key.
func (f ClientTLSFiles) problems(key string, bad func(key, format string, args ...any)) {
	switch {
	case f.CertFile != "" && f.KeyFile == "":
		bad(key+".key_file", "required with cert_file: the client certificate's private key")
	case f.KeyFile != "" && f.CertFile == "":
		bad(key+".cert_file", "required with key_file: the client certificate")
	}
}

// problems checks a tls section: its keys do nothing unless it is enabled,
// and a configuration that sets them expects TLS.
func (c ClientTLS) problems(key string, bad func(key, format string, args ...any)) {
	if !c.Enabled && c.set() {
		bad(key+".enabled", "must be true for the other %s keys to apply", key)
	}
	c.ClientTLSFiles.problems(key, bad)
}

// ProxyTLS returns the TLS configuration of proxy endpoint i (nil when its
// tls section is empty, or for a grpc:// endpoint when grpc.tls is not
// enabled), reading the files.
func (c Config) ProxyTLS(i int) (*tls.Config, error) {
	p := c.Proxies[i]
	if p.GRPC.TLS.Enabled {
		cfg, err := p.GRPC.TLS.Config()
		if err != nil {
			return nil, fmt.Errorf("proxies[%d].grpc.tls: %w", i, err)
		}
		return cfg, nil
	}
	if !p.TLS.set() {
		return nil, nil
	}
	cfg, err := p.TLS.Files().Config()
	if err != nil {
		return nil, fmt.Errorf("proxies[%d].tls: %w", i, err)
	}
	return cfg, nil
}

// proxyTLSProblems checks proxy endpoint p's tls and grpc.tls sections
// under key.
func proxyTLSProblems(key string, p ProxyEndpointConfig, bad func(key, format string, args ...any)) {
	u, err := url.Parse(p.Endpoint)
	scheme := ""
	if err == nil {
		scheme = u.Scheme
	}
	if p.GRPC.TLS.Enabled || p.GRPC.TLS.set() {
		if scheme != "" && scheme != "grpc" {
			bad(key+".grpc.tls", "the endpoint is %s://, not grpc://; use tls for an https:// endpoint", scheme)
		}
		p.GRPC.TLS.problems(key+".grpc.tls", bad)
	}
	if !p.TLS.set() {
		return
	}
	switch scheme {
	case "http":
		bad(key+".tls", "the endpoint is http://, so it has no TLS; use an https:// URL")
	case "grpc":
		bad(key+".tls", "for a grpc:// endpoint, TLS is set under grpc.tls (with enabled: true)")
	}
	p.TLS.problems(key+".tls", bad)
}

// clientTLSWarnings names each tls section that accepts any certificate.
func (c Config) clientTLSWarnings() []string {
	var w []string
	warn := func(key string) {
		w = append(w, key+".insecure_skip_verify is on: the server's certificate is not checked, so anyone on the path can pose as it; for tests only")
	}
	if c.Engine.Redis.TLS.Enabled && c.Engine.Redis.TLS.InsecureSkipVerify {
		warn("engine.redis.tls")
	}
	if c.Engine.NATS.TLS.Enabled && c.Engine.NATS.TLS.InsecureSkipVerify {
		warn("engine.nats.tls")
	}
	for i, p := range c.Proxies {
		if p.TLS.InsecureSkipVerify {
			warn(fmt.Sprintf("proxies[%d].tls", i))
		}
		if p.GRPC.TLS.Enabled && p.GRPC.TLS.InsecureSkipVerify {
			warn(fmt.Sprintf("proxies[%d].grpc.tls", i))
		}
	}
	return w
}
