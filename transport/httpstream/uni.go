package httpstream

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// UniHTTPStream serves /connection/uni_http_stream: a POST whose body is
// one JSON ConnectRequest (not a Command: {"token":"…"}), answered by a
// chunked stream of bare JSON pushes, each followed by "\n"; the first is
// the connect push. An empty body is an empty request (anonymous access).
func (s *Server) UniHTTPStream() http.Handler {
	return s.cors("POST, OPTIONS", func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.opening(w, r, "uni_http_stream", false, "POST with a JSON connect request as the body")
		if !ok {
			return
		}
		req, err := parseConnectRequest(body)
		if err != nil {
			http.Error(w, "uni_http_stream: body: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.serve(w, r, streamSpec{transport: hub.TransportUniHTTPStream, framing: framingStream, uni: true}, protocol.TypeJSON, nil, req)
	})
}

// UniSSE serves /connection/uni_sse: a GET with one JSON ConnectRequest in
// the cf_connect query parameter (or a POST with it as the body),
// answered by a text/event-stream of "data: <push>" events.
func (s *Server) UniSSE() http.Handler {
	return s.cors("GET, POST, OPTIONS", func(w http.ResponseWriter, r *http.Request) {
		raw, ok := s.opening(w, r, "uni_sse", true, "GET with the cf_connect query parameter, or POST")
		if !ok {
			return
		}
		req, err := parseConnectRequest(raw)
		if err != nil {
			http.Error(w, "uni_sse: connect request: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.serve(w, r, streamSpec{transport: hub.TransportUniSSE, framing: framingSSE, uni: true}, protocol.TypeJSON, nil, req)
	})
}

// parseConnectRequest decodes a unidirectional client's JSON
// ConnectRequest; empty input is an empty request.
func parseConnectRequest(b []byte) (*protocol.ConnectRequest, error) {
	req := &protocol.ConnectRequest{}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return req, nil
	}
	if !protocol.ValidJSONPayload(b) {
		return nil, fmt.Errorf("not valid JSON in UTF-8: want a connect request such as {\"token\":\"…\"}")
	}
	if err := req.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("want a connect request such as {\"token\":\"…\"}: %w", err)
	}
	return req, nil
}

// opening reads what opens a stream: the body of a POST, or with allowGet
// the cf_connect query parameter of a GET, bounded by MaxRequestBodySize.
// It answers a wrong method (saying what the endpoint wants), an oversize
// request and an unreadable body itself, and then reports false.
func (s *Server) opening(w http.ResponseWriter, r *http.Request, name string, allowGet bool, want string) ([]byte, bool) {
	switch {
	case r.Method == http.MethodPost:
		return readBody(w, r, s.cfg.MaxRequestBodySize, name)
	case r.Method == http.MethodGet && allowGet:
		raw := []byte(r.URL.Query().Get("cf_connect"))
		if int64(len(raw)) > s.cfg.MaxRequestBodySize {
			http.Error(w, name+": cf_connect too large", http.StatusRequestEntityTooLarge)
			return nil, false
		}
		return raw, true
	}
	allow := "POST, OPTIONS"
	if allowGet {
		allow = "GET, POST, OPTIONS"
	}
	w.Header().Set("Allow", allow)
	http.Error(w, name+": want "+want, http.StatusMethodNotAllowed)
	return nil, false
}
