package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldhq/herald/internal/optionerr"
)

// Config is the TLS of one listener. The yaml, default and doc tags are the
// keys of Herald's configuration file (package config embeds this type).
type Config struct {
	CertFile     string   `yaml:"cert_file" doc:"PEM certificate chain (the server's certificate first) served on this listener; with 'key_file' it turns TLS on. Both files are read again when their modification time changes (checked at most once a second, on new connections) and on SIGHUP, without dropping open connections; a change that does not load keeps the previous certificate and logs why"`
	KeyFile      string   `yaml:"key_file" doc:"PEM private key of 'cert_file'"`
	CertPEM      string   `yaml:"cert_pem" doc:"the certificate chain of 'cert_file' given inline as PEM text instead of a file (e.g. from an environment variable); with 'key_pem' it turns TLS on. Read once at start: it is not reloaded (a file is)"`
	KeyPEM       string   `yaml:"key_pem" doc:"the private key of 'cert_pem' inline as PEM text instead of 'key_file'; read once at start, not reloaded"`
	MinVersion   string   `yaml:"min_version" default:"1.2" doc:"oldest TLS version accepted: '1.2' or '1.3'"`
	CipherSuites []string `yaml:"cipher_suites" defaultdoc:"Go's secure suites" example:"[TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]" doc:"TLS 1.2 cipher suites allowed, by their IANA names (e.g. 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'); empty: Go's default list of secure suites. TLS 1.3 suites are not configurable (all are secure). Suites Go considers insecure are refused"`
	ClientCAFile string   `yaml:"client_ca_file" doc:"PEM CA certificates that client certificates are verified against (mutual TLS); read again with the certificate"`
	ClientCAPEM  string   `yaml:"client_ca_pem" doc:"the CA certificates of 'client_ca_file' inline as PEM text instead of a file; read once at start, not reloaded"`
	ClientAuth   string   `yaml:"client_auth" default:"none" doc:"'none': no client certificate asked for; 'optional': a client certificate is asked for and, when sent, must verify against 'client_ca_file' (browsers without one still connect; 'http_api.require_client_cert' then requires one for the API only); 'require': every connection must present one that verifies"`
}

// Enabled reports whether the listener serves TLS from files or inline
// PEM.
func (c Config) Enabled() bool { return c.cert().Set() || c.key().Set() }

// HasClientCA reports whether a CA for client certificates is given, as a
// file or inline.
func (c Config) HasClientCA() bool { return c.clientCA().Set() }

// WithoutCertificate is c without its certificate and key, for its policy
// alone (with ACME, which obtains the certificates).
func (c Config) WithoutCertificate() Config {
	c.CertFile, c.KeyFile, c.CertPEM, c.KeyPEM = "", "", "", ""
	return c
}

// Validate checks the options and loads the files once, so that a wrong
// path or a key that does not match its certificate is reported before the
// listener starts. Every problem is an *optionerr.Error naming the Go
// field (package config names the key), joined.
func (c Config) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if _, err := c.minVersion(); err != nil {
		bad("MinVersion", "%v", err)
	}
	for _, name := range c.CipherSuites {
		if _, err := cipherSuite(name); err != nil {
			bad("CipherSuites", "%v", err)
		}
	}
	if _, err := c.clientAuth(); err != nil {
		bad("ClientAuth", "%v", err)
	}
	for _, it := range []pemItem{c.cert(), c.key(), c.clientCA()} {
		if it.Both() {
			bad(it.InlineField, "set with %s: give it either as a file or inline, not both", it.FileField)
		}
	}
	if !c.Enabled() {
		if c.HasClientCA() || c.ClientAuth != "" && c.ClientAuth != "none" {
			bad("CertFile", "required with ClientCAFile or ClientAuth (client certificates need TLS)")
		}
		return errors.Join(errs...)
	}
	if !c.cert().Set() {
		bad("CertFile", "required with KeyFile (or CertPEM with KeyPEM)")
	}
	if !c.key().Set() {
		bad("KeyFile", "required with CertFile (or KeyPEM with CertPEM)")
	}
	if auth, err := c.clientAuth(); err == nil && auth != tls.NoClientCert && !c.HasClientCA() {
		bad("ClientCAFile", "required with ClientAuth %q: the CA that client certificates are verified against (or ClientCAPEM)", c.ClientAuth)
	}
	if c.ClientAuth == "none" || c.ClientAuth == "" {
		if c.HasClientCA() {
			bad("ClientAuth", "%q with a client CA set: want optional or require, or remove ClientCAFile", c.ClientAuth)
		}
	}
	if len(errs) == 0 {
		if _, err := load(c); err != nil {
			var fe *optionerr.Error
			if !errors.As(err, &fe) {
				fe = &optionerr.Error{Field: "CertFile", Message: err.Error()}
			}
			errs = append(errs, fe)
		}
	}
	return errors.Join(errs...)
}

func (c Config) minVersion() (uint16, error) {
	switch c.MinVersion {
	case "", "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("%q: want 1.2 or 1.3", c.MinVersion)
}

func (c Config) clientAuth() (tls.ClientAuthType, error) {
	switch c.ClientAuth {
	case "", "none":
		return tls.NoClientCert, nil
	case "optional":
		return tls.VerifyClientCertIfGiven, nil
	case "require":
		return tls.RequireAndVerifyClientCert, nil
	}
	return 0, fmt.Errorf("%q: want none, optional or require", c.ClientAuth)
}

// cipherSuite is the ID of a TLS 1.2 suite Go considers secure.
func cipherSuite(name string) (uint16, error) {
	for _, s := range tls.CipherSuites() {
		if s.Name != name {
			continue
		}
		if !slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			return 0, fmt.Errorf("%s is a TLS 1.3 suite; those are not configurable", name)
		}
		return s.ID, nil
	}
	for _, s := range tls.InsecureCipherSuites() {
		if s.Name == name {
			return 0, fmt.Errorf("%s is insecure and not allowed", name)
		}
	}
	var names []string
	for _, s := range tls.CipherSuites() {
		if slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			names = append(names, s.Name)
		}
	}
	return 0, fmt.Errorf("unknown cipher suite %q (known: %s)", name, strings.Join(names, ", "))
}

// policy is the part of a tls.Config that the options set, without
// certificates.
func (c Config) policy() (*tls.Config, error) {
	v, err := c.minVersion()
	if err != nil {
		return nil, &optionerr.Error{Field: "MinVersion", Message: err.Error()}
	}
	auth, err := c.clientAuth()
	if err != nil {
		return nil, &optionerr.Error{Field: "ClientAuth", Message: err.Error()}
	}
	conf := &tls.Config{MinVersion: v, ClientAuth: auth}
	for _, name := range c.CipherSuites {
		id, err := cipherSuite(name)
		if err != nil {
			return nil, &optionerr.Error{Field: "CipherSuites", Message: err.Error()}
		}
		conf.CipherSuites = append(conf.CipherSuites, id)
	}
	return conf, nil
}
