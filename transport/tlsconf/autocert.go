package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/heraldhq/herald/internal/optionerr"
)

// AutocertConfig obtains and renews certificates over ACME (Let's Encrypt
// or any ACME server) with the HTTP-01 challenge. The tags are the keys of
// Herald's tls_autocert section.
type AutocertConfig struct {
	Enabled         bool     `yaml:"enabled" doc:"obtain and renew the certificates of the main listener over ACME instead of 'tls.cert_file'; needs 'host_whitelist', 'cache_dir' and the HTTP-01 challenge reachable on port 80 of every host name ('http_address'). 'tls.min_version', 'tls.cipher_suites' and the client certificate options still apply"`
	HostWhitelist   []string `yaml:"host_whitelist" example:"[realtime.example.com]" doc:"the host names certificates are requested for (the TLS server name clients send); others get no certificate, so that a scanner cannot make Herald request certificates for names of its choosing"`
	CacheDir        string   `yaml:"cache_dir" doc:"directory where the account key and certificates are kept across restarts (created with mode 0700); without it every start requests new certificates and soon meets the ACME server's rate limits"`
	Email           string   `yaml:"email" doc:"contact address given to the ACME server for expiry and account notices"`
	DirectoryURL    string   `yaml:"directory_url" defaultdoc:"Let's Encrypt" doc:"the ACME server's directory URL; empty: Let's Encrypt production ('https://acme-v02.api.letsencrypt.org/directory'); use the staging URL while testing"`
	DirectoryCAFile string   `yaml:"directory_ca_file" doc:"PEM CA certificates the ACME server's own HTTPS is verified against, for a private ACME server; empty: the system's roots"`
	HTTPAddress     string   `yaml:"http_address" default:":80" doc:"where the HTTP-01 challenge listener listens; ACME servers connect to port 80 of each host name. Other requests to it are redirected to https"`
	// ServerName is Centrifugo's tls_autocert.server_name (v6.9.1
	// internal/app/tls.go): the name of a handshake without SNI.
	ServerName string `yaml:"server_name" doc:"the host name whose certificate a client that sends no server name (SNI) gets, e.g. one that connects by IP address; empty: such a client gets none"`
}

// Autocert serves certificates obtained over ACME.
type Autocert struct {
	m          *autocert.Manager
	policy     *tls.Config
	serverName string // AutocertConfig.ServerName
}

// withServerName answers a handshake without SNI as one for name (when
// set), so that get picks that name's certificate.
func withServerName(name string, get func(*tls.ClientHelloInfo) (*tls.Certificate, error)) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if name == "" {
		return get
	}
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if hello.ServerName == "" {
			h := *hello
			h.ServerName = name
			hello = &h
		}
		return get(hello)
	}
}

// NewAutocert sets up ACME for ac with the version, cipher and client
// certificate policy of policy (whose files are not used). Certificates
// are requested on the first handshake for a host name.
func NewAutocert(ac AutocertConfig, policy Config, log *slog.Logger) (*Autocert, error) {
	if len(ac.HostWhitelist) == 0 {
		return nil, &optionerr.Error{Field: "HostWhitelist", Message: "required: the host names to request certificates for"}
	}
	p, err := policy.policy()
	if err != nil {
		return nil, err
	}
	if ca := policy.clientCA(); ca.Set() {
		if p.ClientCAs, err = clientCAPool(ca); err != nil {
			return nil, err
		}
	}
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		HostPolicy: autocert.HostWhitelist(ac.HostWhitelist...),
		Email:      ac.Email,
	}
	if ac.CacheDir != "" {
		m.Cache = autocert.DirCache(ac.CacheDir)
	}
	if ac.DirectoryURL != "" || ac.DirectoryCAFile != "" {
		c := &acme.Client{DirectoryURL: ac.DirectoryURL}
		if ac.DirectoryCAFile != "" {
			data, err := os.ReadFile(ac.DirectoryCAFile)
			if err != nil {
				return nil, &optionerr.Error{Field: "DirectoryCAFile", Message: err.Error()}
			}
			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM(data) {
				return nil, &optionerr.Error{Field: "DirectoryCAFile", Message: ac.DirectoryCAFile + ": no PEM certificate found"}
			}
			c.HTTPClient = &http.Client{
				Timeout:   time.Minute,
				Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
			}
		}
		m.Client = c
	}
	if log != nil {
		log.Info("tls: certificates over ACME", "hosts", ac.HostWhitelist, "cache_dir", ac.CacheDir, "directory", directoryOrDefault(ac.DirectoryURL))
	}
	return &Autocert{m: m, policy: p, serverName: ac.ServerName}, nil
}

func directoryOrDefault(u string) string {
	if u == "" {
		return autocert.DefaultACMEDirectory
	}
	return u
}

// TLSConfig is the configuration of a listener offering protos over ALPN;
// it also answers the TLS-ALPN-01 challenge.
func (a *Autocert) TLSConfig(protos ...string) *tls.Config {
	c := a.policy.Clone()
	c.GetCertificate = withServerName(a.serverName, a.m.GetCertificate)
	c.NextProtos = append(append([]string(nil), protos...), acme.ALPNProto)
	return c
}

// HTTPHandler answers the HTTP-01 challenge and redirects every other
// request to https (fallback nil) or hands it to fallback.
func (a *Autocert) HTTPHandler(fallback http.Handler) http.Handler {
	h := a.m.HTTPHandler(fallback)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// autocert checks the Host header against host_whitelist as it
		// is; an ACME server that reaches the listener on a port other
		// than 80 (a port forward, a test) sends it with the port.
		if host, _, err := net.SplitHostPort(r.Host); err == nil {
			r.Host = host
		}
		h.ServeHTTP(w, r)
	})
}

// Validate checks ac; every problem is an *optionerr.Error naming the Go
// field (package config names the key), joined.
func (ac AutocertConfig) Validate() error {
	if !ac.Enabled {
		return nil
	}
	var errs []error
	if len(ac.HostWhitelist) == 0 {
		errs = append(errs, &optionerr.Error{Field: "HostWhitelist", Message: "required with Enabled: the host names to request certificates for"})
	}
	if ac.HTTPAddress == "" {
		errs = append(errs, &optionerr.Error{Field: "HTTPAddress", Message: "required with Enabled: ACME servers check the HTTP-01 challenge on port 80"})
	}
	if ac.DirectoryCAFile != "" {
		if _, err := os.Stat(ac.DirectoryCAFile); err != nil {
			errs = append(errs, &optionerr.Error{Field: "DirectoryCAFile", Message: err.Error()})
		}
	}
	if ac.CacheDir != "" {
		if fi, err := os.Stat(ac.CacheDir); err == nil && !fi.IsDir() {
			errs = append(errs, &optionerr.Error{Field: "CacheDir", Message: fmt.Sprintf("%s is not a directory", ac.CacheDir)})
		}
	}
	return errors.Join(errs...)
}
