package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// Bounds of an endpoint's timeout.
const (
	// DefaultTimeout is an endpoint's timeout when none is configured.
	DefaultTimeout = time.Second
	// MaxTimeout bounds an endpoint's timeout: a client waits this long
	// at most for a proxied command, longer would look like a dead
	// connection to it.
	MaxTimeout = 60 * time.Second
)

// Endpoint is one named backend endpoint. It is also the file format's
// entry of proxies (package config decodes it from the yaml tags, which
// hold each key's default and doc line); TLS, tagged "-", is set by a
// program only.
type Endpoint struct {
	// Name is how the configuration refers to the endpoint.
	Name string `yaml:"name" defaultdoc:"required" doc:"how events refer to the endpoint"`
	// URL receives the calls as HTTP POST with a JSON body (http or
	// https), or, as grpc://host:port, is a gRPC backend implementing
	// Centrifugo's proxy.proto (grpc.go).
	URL string `yaml:"endpoint" defaultdoc:"required" doc:"the 'http://' or 'https://' URL that receives the calls (POST, JSON), or 'grpc://host:port' for a gRPC backend implementing Centrifugo's 'proxy.proto'"`
	// Timeout bounds one call (DefaultTimeout when 0, at most MaxTimeout).
	Timeout time.Duration `yaml:"timeout" default:"1s" doc:"one call's time limit, at most '60s'; past it the client gets error 100"`
	// HTTPHeaders names the headers of the client's HTTP request (and,
	// for connect, of its emulated headers) forwarded to the backend,
	// Cookie and Authorization for instance.
	HTTPHeaders []string `yaml:"http_headers" doc:"headers of the client's HTTP request forwarded to the backend, e.g. 'Cookie', 'Authorization'"`
	// EmulatedHeaders, when set, are the only headers of the client's
	// connect command (header emulation) forwarded to the backend, on
	// every call of the connection, as Centrifugo v6.9.1's option of the
	// same name (emulated.go); HTTPHeaders then names request headers only.
	EmulatedHeaders []string `yaml:"emulated_headers" doc:"headers a client sends inside its connect command (header emulation, as browsers' WebSocket clients do) forwarded to the backend on every call of the connection, as Centrifugo's option: set, it is the only way such headers reach this endpoint, and 'http_headers' takes those of the HTTP request alone, which win over an emulated one of the same name. The client chooses these values: list only names the backend checks itself (a signed token, say). Unset, 'http_headers' also takes a connect call's emulated headers when the HTTP request lacks them"`
	// GRPCMetadata names the metadata keys of a uni_grpc client's
	// request forwarded to the backend (as headers to an HTTP one).
	GRPCMetadata []string `yaml:"grpc_metadata" doc:"metadata keys of a 'uni_grpc' client's request forwarded to the backend (as headers to an HTTP one), e.g. 'x-tenant'"`
	// StaticHTTPHeaders are sent with every call, over forwarded ones of
	// the same name (a shared secret for the backend, say); HTTP only.
	StaticHTTPHeaders map[string]string `yaml:"static_http_headers" doc:"a mapping of headers sent with every call to an HTTP endpoint (they win over forwarded ones)"`
	// StatusToCodeTransforms turn HTTP statuses of the backend into
	// client errors or disconnects (statuscodes.go).
	StatusToCodeTransforms []StatusTransform `yaml:"status_to_code_transforms" doc:"a list of '{status_code: 403, to_error: {code: 103, message: denied}}' or '{status_code: 401, to_disconnect: {code: 4501, reason: unauthorized}}': an HTTP endpoint that answers that status gives the client that error or disconnect instead of error 100, as Centrifugo's 'http.status_to_code_transforms'"`
	// BinaryEncoding sends data as base64 (b64data, encoding "binary")
	// instead of raw JSON (data).
	BinaryEncoding bool `yaml:"binary_encoding" doc:"payloads go as base64 ('b64data') instead of raw JSON ('data')"`
	// IncludeConnectionMeta adds the meta the connect result attached to
	// the connection to every later call.
	IncludeConnectionMeta bool `yaml:"include_connection_meta" doc:"send the connection's 'meta' (from the connect result) with every later call"`
	// TLSFiles, for an https URL, replace the default TLS configuration
	// (the system's roots, the URL's host as server name): a private CA,
	// a client certificate for backends that verify callers, another
	// server name. An endpoint with TLS gets its own connection pool.
	TLSFiles tlsfiles.Files `yaml:"tls"`
	// GRPC are the options of a grpc:// endpoint.
	GRPC GRPCOptions `yaml:"grpc"`
	// TLS, when set, is used instead of TLSFiles (or GRPC.TLS): the
	// TLS configuration of an https URL, or for a grpc URL what turns TLS
	// on (without it the connection is plaintext HTTP/2, as Centrifugo's).
	TLS *tls.Config `yaml:"-"`
}

// GRPCOptions are an Endpoint's options for a grpc:// URL (Centrifugo
// v6's keys).
type GRPCOptions struct {
	// TLS turns TLS on; without it the connection is plaintext HTTP/2.
	TLS tlsfiles.Client `yaml:"tls"`
	// CredentialsKey and CredentialsValue are a metadata pair sent with
	// every call (Centrifugo's per-call credentials), the gRPC
	// counterpart of StaticHTTPHeaders.
	CredentialsKey   string `yaml:"credentials_key" doc:"a metadata key sent with every call, with 'credentials_value' (a shared secret for the backend, e.g. 'authorization')"`
	CredentialsValue string `yaml:"credentials_value" doc:"the value of 'credentials_key'"`
	// StaticMetadata is Centrifugo's grpc.static_metadata: pairs set on
	// every call first, so that the forwarded headers and the credentials
	// override them (v6.9.1 internal/proxy/grpc.go, requestMetadata).
	StaticMetadata map[string]string `yaml:"static_metadata" doc:"metadata pairs sent with every call; a forwarded header ('http_headers') or 'credentials_key' of the same name overrides them"`
	// Compression compresses the calls with gzip.
	Compression bool `yaml:"compression" doc:"compress calls with gzip"`
}

// tlsConfig is the TLS configuration of e: TLS, else what TLSFiles or,
// for a grpc URL, an enabled GRPC.TLS describe, read from the files; nil
// for none.
func (e Endpoint) tlsConfig() (*tls.Config, error) {
	switch {
	case e.TLS != nil:
		return e.TLS, nil
	case e.isGRPC():
		return e.GRPC.TLS.Config()
	case e.TLSFiles.IsSet():
		return e.TLSFiles.Config()
	}
	return nil, nil
}

// Validate reports every problem of e, each an *optionerr.Error naming
// the Go field (package config names the key). It reads no file.
func (e Endpoint) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if e.Name == "" {
		bad("Name", "required: the name events refer to the proxy by")
	}
	scheme := ""
	if e.URL == "" {
		bad("URL", "required, e.g. http://localhost:3000/centrifugo/connect")
	} else if u, err := url.Parse(e.URL); err != nil {
		bad("URL", "%q cannot be parsed: %v", e.URL, err)
	} else if scheme = u.Scheme; u.Scheme != "http" && u.Scheme != "https" && u.Scheme != grpcScheme {
		bad("URL", "%q: want an http://, https:// or grpc:// URL", e.URL)
	} else if u.Host == "" {
		bad("URL", "%q: the URL has no host", e.URL)
	} else if u.Scheme == grpcScheme {
		if u.Port() == "" {
			bad("URL", "%q: a grpc:// endpoint needs a port, grpc://host:port", e.URL)
		} else if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			bad("URL", "%q: a grpc:// endpoint is host:port only; the service is centrifugal.centrifugo.proxy.CentrifugoProxy", e.URL)
		}
		if len(e.StaticHTTPHeaders) > 0 {
			bad("StaticHTTPHeaders", "HTTP headers do not apply to a grpc:// endpoint; send a shared secret with the GRPC credentials instead")
		}
	} else if e.TLS != nil && u.Scheme != "https" {
		bad("TLS", "%q is not an https:// URL, so TLS settings do not apply", e.URL)
	}
	checkStatusTransforms(e.StatusToCodeTransforms, &errs)
	if !e.isGRPC() {
		if e.GRPC.CredentialsKey != "" || e.GRPC.CredentialsValue != "" {
			bad("GRPC.CredentialsKey", "set for %q, which is not a grpc:// endpoint", e.URL)
		}
		if e.GRPC.Compression {
			bad("GRPC.Compression", "set for %q, which is not a grpc:// endpoint", e.URL)
		}
	}
	for k := range e.GRPC.StaticMetadata {
		if !validMetadataKey(strings.ToLower(k)) {
			bad("GRPC.StaticMetadata", "%q is not a valid gRPC metadata key (letters, digits, '-', '_', '.'; not grpc-*, not *-bin)", k)
		}
	}
	if e.GRPC.CredentialsKey != "" && !validMetadataKey(e.GRPC.CredentialsKey) {
		bad("GRPC.CredentialsKey", "%q is not a valid gRPC metadata key (lowercase letters, digits, '-', '_', '.'; not grpc-*, not *-bin)", e.GRPC.CredentialsKey)
	} else if e.GRPC.CredentialsKey == "" && e.GRPC.CredentialsValue != "" {
		bad("GRPC.CredentialsKey", "required with CredentialsValue")
	} else if !validHeaderValue(e.GRPC.CredentialsValue) {
		bad("GRPC.CredentialsValue", "the value has control characters")
	}
	if e.GRPC.TLS.Enabled || e.GRPC.TLS.IsSet() {
		if scheme != "" && scheme != grpcScheme {
			bad("GRPC.TLS", "the endpoint is %s://, not grpc://, so it does not apply", scheme)
		}
		errs = append(errs, optionerr.Prefix("GRPC.TLS", e.GRPC.TLS.Validate()))
	}
	if e.TLSFiles.IsSet() {
		switch scheme {
		case "http":
			bad("TLSFiles", "the endpoint is http://, so it has no TLS; use an https:// URL")
		case grpcScheme:
			bad("TLSFiles", "for a grpc:// endpoint, TLS is set under GRPC (with its TLS enabled)")
		}
		errs = append(errs, optionerr.Prefix("TLSFiles", e.TLSFiles.Validate()))
	}
	for i, k := range e.GRPCMetadata {
		if !validMetadataKey(k) {
			bad(fmt.Sprintf("GRPCMetadata[%d]", i), "%q is not a valid gRPC metadata key (lowercase letters, digits, '-', '_', '.'; not grpc-*, not *-bin)", k)
		}
	}
	if e.Timeout < 0 {
		bad("Timeout", "%s: must be positive (0 means the default, %s)", e.Timeout, DefaultTimeout)
	} else if e.Timeout > MaxTimeout {
		bad("Timeout", "%s: longer than %s; a client would wait that long for one command", e.Timeout, MaxTimeout)
	}
	for i, h := range e.HTTPHeaders {
		if !validHeaderName(h) {
			bad(fmt.Sprintf("HTTPHeaders[%d]", i), "%q is not a valid HTTP header name", h)
		}
	}
	for i, h := range e.EmulatedHeaders {
		if !validHeaderName(h) {
			bad(fmt.Sprintf("EmulatedHeaders[%d]", i), "%q is not a valid HTTP header name", h)
		}
	}
	for k, v := range e.StaticHTTPHeaders {
		if !validHeaderName(k) {
			bad("StaticHTTPHeaders", "%q is not a valid HTTP header name", k)
		} else if !validHeaderValue(v) {
			bad("StaticHTTPHeaders."+k, "the value is not a valid HTTP header value")
		} else if strings.EqualFold(k, "Content-Type") {
			bad("StaticHTTPHeaders."+k, "Content-Type is always application/json")
		}
	}
	return errors.Join(errs...)
}

func (e Endpoint) timeout() time.Duration {
	if e.Timeout <= 0 {
		return DefaultTimeout
	}
	return e.Timeout
}

// forwardNames returns the canonical forms of the header names to
// forward, and of the metadata keys: a connection keeps both in its
// header (hub.Client.Header).
func (e Endpoint) forwardNames() []string {
	out := make([]string, 0, len(e.HTTPHeaders)+len(e.GRPCMetadata))
	for _, h := range e.HTTPHeaders {
		out = append(out, http.CanonicalHeaderKey(h))
	}
	for _, h := range canonicalMetadataNames(e.GRPCMetadata) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// validHeaderName reports whether s is an HTTP token (RFC 9110 5.1).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue refuses control characters, which would split or
// corrupt the request's header.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
