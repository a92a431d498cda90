package proxy

import (
	"net/http"
	"slices"
)

// Centrifugo v6.9.0 stopped forwarding a client's emulated headers (those
// sent inside its connect command) through http_headers, which names
// headers the operator trusts by origin, and added emulated_headers for
// them. Centrifugo v6.9.1 internal/proxy/http.go:131-165 (requestHeaders)
// builds a call's header in this order, each step over the one before:
// static_headers, the emulated headers listed in emulated_headers, the
// HTTP request's headers listed in http_headers (a transport header wins
// over an emulated one of the same name); internal/proxy/grpc.go:82-126
// does the same for gRPC metadata. The emulated headers are those of the
// connect command, kept for the connection's life
// (internal/client/handler.go:396-397 for connect, 561-567 after it).
//
// Herald builds the header this way for an endpoint that sets
// emulated_headers. One that does not keeps Herald's older behaviour:
// http_headers also takes a connect call's emulated headers when the HTTP
// request lacks them, and static headers win (header, in call.go).

// emulatedNames returns the canonical forms of EmulatedHeaders.
func (e Endpoint) emulatedNames() []string {
	out := make([]string, 0, len(e.EmulatedHeaders))
	for _, h := range e.EmulatedHeaders {
		if n := http.CanonicalHeaderKey(h); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// headerWithEmulated builds a call's header as Centrifugo does for an
// endpoint with emulated_headers.
func (e *endpoint) headerWithEmulated(ci callInfo) http.Header {
	h := make(http.Header, len(e.forward)+len(e.emulated)+len(e.StaticHTTPHeaders)+1)
	for k, v := range e.StaticHTTPHeaders {
		h.Set(k, v)
	}
	for k, v := range ci.emulated {
		if slices.Contains(e.emulated, http.CanonicalHeaderKey(k)) {
			h.Set(k, v)
		}
	}
	for _, name := range e.forward {
		if vs := ci.header[name]; len(vs) > 0 {
			h[name] = append([]string(nil), vs...)
		}
	}
	h.Set("Content-Type", "application/json")
	return h
}

// EmulatedHeaderNames are the names of the connect command's headers
// that some endpoint of eps forwards (emulated_headers): what a
// connection must keep for its later calls (hub.Config.KeepConnectHeaders).
func EmulatedHeaderNames(eps []Endpoint) []string {
	var out []string
	for _, e := range eps {
		for _, n := range e.emulatedNames() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
