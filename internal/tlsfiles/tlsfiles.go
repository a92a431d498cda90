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
	"os"

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
}

// IsSet reports whether any field is set.
func (f Files) IsSet() bool { return f != Files{} }

// Validate reports what is wrong with f without reading the files (a
// configuration is checked on machines that do not have them): a client
// certificate without its key or a key without its certificate. Each
// problem is an *optionerr.Error naming the Go field.
func (f Files) Validate() error {
	switch {
	case f.CertFile != "" && f.KeyFile == "":
		return &optionerr.Error{Field: "KeyFile", Message: "required with CertFile: the client certificate's private key"}
	case f.KeyFile != "" && f.CertFile == "":
		return &optionerr.Error{Field: "CertFile", Message: "required with KeyFile: the client certificate"}
	}
	return nil
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
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s: no PEM certificate in it", f.CAFile)
		}
		c.RootCAs = pool
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cert_file %s and key_file %s: %w", f.CertFile, f.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}
