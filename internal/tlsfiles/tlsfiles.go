// Package tlsfiles builds the TLS configuration of a connection Herald
// makes to something it depends on (Redis, NATS, a proxy backend) from
// PEM files, so that every such connection reads the same settings the
// same way and fails with the same messages.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/internal/optionerr"
)

// Files names what a client-side TLS configuration is made of. The yaml,
// default and doc tags are the keys of Herald's configuration file
// (package config decodes its client tls sections into this type).
type Files struct {
	// CAFile is a PEM file of the certificate authorities that sign the
	// server's certificate; empty means the system's roots.
	CAFile string `yaml:"ca_file" defaultdoc:"the system's roots" doc:"PEM file of the certificate authorities that sign the server's certificate"`
	// CertFile and KeyFile are the PEM client certificate and its key,
	// for servers that verify clients; both or neither.
	CertFile string `yaml:"cert_file" doc:"PEM client certificate, for servers that verify clients (with 'key_file')"`
	KeyFile  string `yaml:"key_file" doc:"PEM private key of 'cert_file'"`
	// ServerName is the name the server's certificate must carry; empty
	// means the host the client dials, which every client library used
	// here fills in.
	ServerName string `yaml:"server_name" defaultdoc:"the host dialled" doc:"the name the server's certificate must carry, when it differs from the host in the address"`
	// InsecureSkipVerify accepts any server certificate: the connection
	// is encrypted but anyone on the path can impersonate the server.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify" doc:"accept any server certificate: the connection is encrypted but not authenticated; for tests only"`
	// CAPEM, CertPEM and KeyPEM are the same as the files, given inline
	// (Centrifugo's TLS objects take PEM text, e.g. from a variable).
	CAPEM   string `yaml:"ca_pem" doc:"the certificate authorities of 'ca_file' given inline as PEM text instead of a file; read once at start"`
	CertPEM string `yaml:"cert_pem" doc:"the client certificate of 'cert_file' inline as PEM text (with 'key_pem'); read once at start"`
	KeyPEM  string `yaml:"key_pem" doc:"the private key of 'cert_pem' inline as PEM text instead of 'key_file'; read once at start"`
}

// item is one piece of PEM, from a file or inline, with its file
// option's key for the messages of Config.
type item struct {
	PEM
	key string
}

func (f Files) items() (ca, cert, key item) {
	return item{PEM{"CAFile", f.CAFile, "CAPEM", f.CAPEM}, "ca_file"},
		item{PEM{"CertFile", f.CertFile, "CertPEM", f.CertPEM}, "cert_file"},
		item{PEM{"KeyFile", f.KeyFile, "KeyPEM", f.KeyPEM}, "key_file"}
}

// read is the item's PEM: inline, or read from its file.
func (i item) read() ([]byte, error) {
	data, err := i.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", i.key, err)
	}
	return data, nil
}

// name is how messages name the item: its file, or the inline option.
func (i item) name() string {
	if i.Inline != "" {
		return strings.TrimSuffix(i.key, "_file") + "_pem"
	}
	return i.key + " " + i.File
}

// IsSet reports whether any field is set.
func (f Files) IsSet() bool { return f != Files{} }

// Validate reports what is wrong with f without reading the files (a
// configuration is checked on machines that do not have them): a client
// certificate without its key or a key without its certificate, a file and
// inline PEM for the same item, inline PEM that does not load. Each
// problem is an *optionerr.Error naming the Go field.
func (f Files) Validate() error {
	ca, cert, key := f.items()
	var errs optionerr.List
	for _, i := range []item{ca, cert, key} {
		if i.Both() {
			errs.Add(i.InlineField, "set with %s: give it either as a file or inline, not both", i.FileField)
		}
	}
	// Inline PEM is at hand: checked here, where files wait for Config.
	if ca.Inline != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(ca.Inline)) {
		errs.Add("CAPEM", "no PEM certificate in it")
	}
	if cert.Inline != "" && key.Inline != "" {
		if _, err := tls.X509KeyPair([]byte(cert.Inline), []byte(key.Inline)); err != nil {
			errs.Add("KeyPEM", "with CertPEM: %v", err)
		}
	}
	switch {
	case cert.Set() && !key.Set():
		errs.Add("KeyFile", "required with CertFile (or KeyPEM with CertPEM): the client certificate's private key")
	case key.Set() && !cert.Set():
		errs.Add("CertFile", "required with KeyFile (or CertPEM with KeyPEM): the client certificate")
	}
	return errors.Join(errs...)
}

// Client is a connection's TLS that is off unless Enabled (the tls
// section of the Redis and NATS engines and of a grpc:// proxy).
type Client struct {
	Enabled bool `yaml:"enabled" doc:"connect with TLS"`
	Files   `yaml:",inline"`
}

// Validate reports the problems of c's files, and files set while TLS is
// off: a configuration that sets them expects TLS.
func (c Client) Validate() error {
	var errs []error
	if !c.Enabled && c.IsSet() {
		errs = append(errs, &optionerr.Error{Field: "Enabled", Message: "must be true for the other keys of the section to apply"})
	}
	return errors.Join(append(errs, c.Files.Validate())...)
}

// Config reads the files of an enabled Client; nil when TLS is off.
func (c Client) Config() (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	return c.Files.Config()
}

// Config reads the files and returns the TLS configuration they describe.
// TLS 1.2 is the minimum: every server Herald connects to supports it, and
// older versions have known weaknesses.
func (f Files) Config() (*tls.Config, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	c := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         f.ServerName,
		InsecureSkipVerify: f.InsecureSkipVerify, //nolint:gosec // only when configured so, documented as unsafe
	}
	ca, cert, key := f.items()
	if ca.Set() {
		pem, err := ca.read()
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", ca.name())
		}
		c.RootCAs = pool
	}
	if cert.Set() {
		certPEM, err := cert.read()
		if err != nil {
			return nil, err
		}
		keyPEM, err := key.read()
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", cert.name(), key.name(), err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
