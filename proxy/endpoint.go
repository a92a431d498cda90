package proxy

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
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

// Endpoint is one named backend endpoint.
type Endpoint struct {
	// Name is how the configuration refers to the endpoint.
	Name string
	// URL receives the calls as HTTP POST with a JSON body (http or
	// https), or, as grpc://host:port, is a gRPC backend implementing
	// Centrifugo's proxy.proto (grpc.go).
	URL string
	// Timeout bounds one call (DefaultTimeout when 0, at most MaxTimeout).
	Timeout time.Duration
	// HTTPHeaders names the headers of the client's HTTP request (and,
	// for connect, of its emulated headers) forwarded to the backend,
	// Cookie and Authorization for instance.
	HTTPHeaders []string
	// GRPCMetadata names the metadata keys of a uni_grpc client's
	// request forwarded to the backend (as headers to an HTTP one).
	GRPCMetadata []string
	// StaticHTTPHeaders are sent with every call, over forwarded ones of
	// the same name (a shared secret for the backend, say); HTTP only.
	StaticHTTPHeaders map[string]string
	// GRPCCredentialsKey and GRPCCredentialsValue, for a gRPC endpoint,
	// are a metadata pair sent with every call (Centrifugo's per-call
	// credentials), the gRPC counterpart of StaticHTTPHeaders.
	GRPCCredentialsKey   string
	GRPCCredentialsValue string
	// GRPCCompression compresses a gRPC endpoint's calls with gzip.
	GRPCCompression bool
	// BinaryEncoding sends data as base64 (b64data, encoding "binary")
	// instead of raw JSON (data).
	BinaryEncoding bool
	// IncludeConnectionMeta adds the meta the connect result attached to
	// the connection to every later call.
	IncludeConnectionMeta bool
	// TLS, for an https URL, replaces the default TLS configuration
	// (the system's roots, the URL's host as server name): a private CA,
	// a client certificate for backends that verify callers, another
	// server name. An endpoint with TLS gets its own connection pool.
	// For a grpc URL it turns TLS on (without it the connection is
	// plaintext HTTP/2, as Centrifugo's).
	TLS *tls.Config
}

// FieldProblem is one thing wrong with an Endpoint, naming the field by
// its configuration key.
type FieldProblem struct {
	Field   string
	Message string
}

// Check lists what is wrong with e.
func (e Endpoint) Check() []FieldProblem {
	var ps []FieldProblem
	bad := func(field, format string, args ...any) {
		ps = append(ps, FieldProblem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if e.Name == "" {
		bad("name", "required: the name events refer to the proxy by")
	}
	if e.URL == "" {
		bad("endpoint", "required, e.g. http://localhost:3000/centrifugo/connect")
	} else if u, err := url.Parse(e.URL); err != nil {
		bad("endpoint", "%q is not a URL: %v", e.URL, err)
	} else if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != grpcScheme {
		bad("endpoint", "%q: want an http://, https:// or grpc:// URL", e.URL)
	} else if u.Host == "" {
		bad("endpoint", "%q: the URL has no host", e.URL)
	} else if u.Scheme == grpcScheme {
		if u.Port() == "" {
			bad("endpoint", "%q: a grpc:// endpoint needs a port, grpc://host:port", e.URL)
		} else if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			bad("endpoint", "%q: a grpc:// endpoint is host:port only; the service is centrifugal.centrifugo.proxy.CentrifugoProxy", e.URL)
		}
		if len(e.StaticHTTPHeaders) > 0 {
			bad("static_http_headers", "HTTP headers do not apply to a grpc:// endpoint; use grpc.credentials_key and grpc.credentials_value")
		}
	} else if e.TLS != nil && u.Scheme != "https" {
		bad("tls", "%q is not an https:// URL, so TLS settings do not apply", e.URL)
	}
	if !e.isGRPC() {
		if e.GRPCCredentialsKey != "" || e.GRPCCredentialsValue != "" {
			bad("grpc.credentials_key", "set for %q, which is not a grpc:// endpoint", e.URL)
		}
		if e.GRPCCompression {
			bad("grpc.compression", "set for %q, which is not a grpc:// endpoint", e.URL)
		}
	}
	if e.GRPCCredentialsKey != "" && !validMetadataKey(e.GRPCCredentialsKey) {
		bad("grpc.credentials_key", "%q is not a valid gRPC metadata key (lowercase letters, digits, '-', '_', '.'; not grpc-*, not *-bin)", e.GRPCCredentialsKey)
	} else if e.GRPCCredentialsKey == "" && e.GRPCCredentialsValue != "" {
		bad("grpc.credentials_key", "required with grpc.credentials_value")
	} else if !validHeaderValue(e.GRPCCredentialsValue) {
		bad("grpc.credentials_value", "the value has control characters")
	}
	for i, k := range e.GRPCMetadata {
		if !validMetadataKey(k) {
			bad(fmt.Sprintf("grpc_metadata[%d]", i), "%q is not a valid gRPC metadata key (lowercase letters, digits, '-', '_', '.'; not grpc-*, not *-bin)", k)
		}
	}
	if e.Timeout < 0 {
		bad("timeout", "%s: must be positive (0 means the default, %s)", e.Timeout, DefaultTimeout)
	} else if e.Timeout > MaxTimeout {
		bad("timeout", "%s: longer than %s; a client would wait that long for one command", e.Timeout, MaxTimeout)
	}
	for i, h := range e.HTTPHeaders {
		if !validHeaderName(h) {
			bad(fmt.Sprintf("http_headers[%d]", i), "%q is not a valid HTTP header name", h)
		}
	}
	for k, v := range e.StaticHTTPHeaders {
		if !validHeaderName(k) {
			bad("static_http_headers", "%q is not a valid HTTP header name", k)
		} else if !validHeaderValue(v) {
			bad("static_http_headers."+k, "the value is not a valid HTTP header value")
		} else if strings.EqualFold(k, "Content-Type") {
			bad("static_http_headers."+k, "Content-Type is always application/json")
		}
	}
	return ps
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
