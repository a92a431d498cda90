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
)

// Files names what a client-side TLS configuration is made of.
type Files struct {
	// CAFile is a PEM file of the certificate authorities that sign the
	// server's certificate; empty means the system's roots.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate and its key,
	// for servers that verify clients; both or neither.
	CertFile string
	KeyFile  string
	// ServerName is the name the server's certificate must carry; empty
	// means the host the client dials, which every client library used
	// here fills in.
	ServerName string
	// InsecureSkipVerify accepts any server certificate: the connection
	// is encrypted but anyone on the path can impersonate the server.
	InsecureSkipVerify bool
}

// Check reports what is wrong with f without reading the files: a client
// certificate without its key or a key without its certificate.
func (f Files) Check() error {
	switch {
	case f.CertFile != "" && f.KeyFile == "":
		return errors.New("key_file is required with cert_file")
	case f.KeyFile != "" && f.CertFile == "":
		return errors.New("cert_file is required with key_file")
	}
	return nil
}

// Config reads the files and returns the TLS configuration they describe.
// TLS 1.2 is the minimum: every server Herald connects to supports it, and
// older versions have known weaknesses.
func (f Files) Config() (*tls.Config, error) {
	if err := f.Check(); err != nil {
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
