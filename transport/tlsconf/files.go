package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
)

// CheckInterval is how often, at most, Files looks at the files'
// modification times: on a new connection, so an idle listener costs
// nothing and no goroutine watches.
const CheckInterval = time.Second

// Files serves a listener's certificate from Config's files and reloads
// them when they change. It is safe for concurrent use.
type Files struct {
	cfg Config
	log *slog.Logger

	cur       atomic.Pointer[loaded]
	nextCheck atomic.Int64 // unix nanoseconds of the next modification time check

	mu     sync.Mutex // serializes reloads
	failed stamps     // the files' stamps when loading them last failed, to log once per change
}

// stamps identify a version of the files: modification time and size of
// each. Stat follows symbolic links, so a Kubernetes secret volume's link
// swap counts as a change.
type stamps [3]struct {
	mod  time.Time
	size int64
}

// loaded is one version of the files, as a tls.Config ready to serve.
type loaded struct {
	conf   *tls.Config
	stamps stamps
}

// New loads cfg's files. The error names the option at fault.
func New(cfg Config, log *slog.Logger) (*Files, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l, err := load(cfg)
	if err != nil {
		return nil, err
	}
	f := &Files{cfg: cfg, log: log}
	f.cur.Store(l)
	f.nextCheck.Store(time.Now().Add(CheckInterval).UnixNano())
	return f, nil
}

// TLSConfig is the configuration of a listener offering protos over ALPN
// (e.g. "h2", "http/1.1"). Each handshake gets the current certificate and
// client CAs.
func (f *Files) TLSConfig(protos ...string) *tls.Config {
	// A connection keeps the config it was served with for its lifetime:
	// one config per version of the files, shared by its connections,
	// rather than a copy per connection.
	type served struct {
		from *loaded
		conf *tls.Config
	}
	var cache atomic.Pointer[served]
	return &tls.Config{
		// The outer config only decides which inner one serves; its
		// version bounds the ClientHello that is read at all.
		MinVersion: f.cur.Load().conf.MinVersion,
		NextProtos: protos,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			f.checkFiles()
			cur := f.cur.Load()
			if s := cache.Load(); s != nil && s.from == cur {
				return s.conf, nil
			}
			c := cur.conf.Clone()
			c.NextProtos = protos
			cache.Store(&served{from: cur, conf: c})
			return c, nil
		},
	}
}

// Certificate is the certificate being served.
func (f *Files) Certificate() *tls.Certificate {
	return &f.cur.Load().conf.Certificates[0]
}

// Reload reads the files again now, whether or not they changed. On error
// the previous certificate stays in use.
func (f *Files) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, err := load(f.cfg)
	if err != nil {
		return err
	}
	f.cur.Store(l)
	f.log.Info("tls: certificate reloaded", "cert_file", f.cfg.CertFile, "not_after", l.conf.Certificates[0].Leaf.NotAfter)
	return nil
}

// checkFiles reloads the files when their stamps changed, at most once per
// CheckInterval.
func (f *Files) checkFiles() {
	now := time.Now().UnixNano()
	next := f.nextCheck.Load()
	if now < next || !f.nextCheck.CompareAndSwap(next, now+int64(CheckInterval)) {
		return
	}
	s, err := stat(f.cfg)
	if err != nil || s == f.cur.Load().stamps {
		// A file missing for a moment (being replaced) is looked at
		// again at the next check.
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s == f.cur.Load().stamps || s == f.failed {
		return
	}
	l, err := load(f.cfg)
	if err != nil {
		f.failed = s
		f.log.Error("tls: the certificate files changed but do not load; still serving the previous certificate", "error", err)
		return
	}
	f.cur.Store(l)
	f.log.Info("tls: certificate files changed, reloaded", "cert_file", f.cfg.CertFile, "not_after", l.conf.Certificates[0].Leaf.NotAfter)
}

func stat(cfg Config) (stamps, error) {
	var s stamps
	for i, name := range []string{cfg.CertFile, cfg.KeyFile, cfg.ClientCAFile} {
		if name == "" {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			return s, err
		}
		s[i].mod, s[i].size = fi.ModTime(), fi.Size()
	}
	return s, nil
}

// load reads cfg's files (and inline PEM) into a tls.Config. The stamps
// are taken first, so that a file changing while it is read is read again
// at the next check.
func load(cfg Config) (*loaded, error) {
	conf, err := cfg.policy()
	if err != nil {
		return nil, err
	}
	s, err := stat(cfg)
	if err != nil {
		return nil, statError(cfg, err)
	}
	certItem, keyItem := cfg.cert(), cfg.key()
	certPEM, err := certItem.read()
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyItem.read()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// tls.X509KeyPair does not say which of the two it could not
		// use: a certificate without a certificate is at fault, else
		// the key.
		if !hasCertificate(certPEM) {
			return nil, &optionerr.Error{Field: certItem.Field(), Message: certItem.name() + ": " + err.Error()}
		}
		return nil, &optionerr.Error{Field: keyItem.Field(), Message: keyItem.name() + ": " + err.Error() + " (the certificate: " + certItem.name() + ")"}
	}
	if time.Now().After(cert.Leaf.NotAfter) {
		return nil, &optionerr.Error{Field: certItem.Field(), Message: fmt.Sprintf("%s: the certificate expired at %s", certItem.name(), cert.Leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	conf.Certificates = []tls.Certificate{cert}
	if ca := cfg.clientCA(); ca.Set() {
		pool, err := clientCAPool(ca)
		if err != nil {
			return nil, err
		}
		conf.ClientCAs = pool
	}
	return &loaded{conf: conf, stamps: s}, nil
}

// clientCAPool reads the client CA certificates of ca.
func clientCAPool(ca pemItem) (*x509.CertPool, error) {
	data, err := ca.read()
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, &optionerr.Error{Field: ca.Field(), Message: ca.name() + ": no PEM certificate found"}
	}
	return pool, nil
}

// statError names the option whose file could not be looked at.
func statError(cfg Config, err error) *optionerr.Error {
	field := "CertFile"
	var pe *os.PathError
	if errors.As(err, &pe) {
		if pe.Path == cfg.KeyFile {
			field = "KeyFile"
		} else if pe.Path == cfg.ClientCAFile {
			field = "ClientCAFile"
		}
	}
	return &optionerr.Error{Field: field, Message: err.Error()}
}

// hasCertificate reports whether data holds a parsable certificate.
func hasCertificate(data []byte) bool {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" {
			_, err := x509.ParseCertificate(block.Bytes)
			return err == nil
		}
	}
}
