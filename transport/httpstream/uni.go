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
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST, OPTIONS")
			http.Error(w, "uni_http_stream: want POST with a JSON connect request as the body", http.StatusMethodNotAllowed)
			return
		}
		body, ok := readBody(w, r, s.cfg.MaxRequestBodySize, "uni_http_stream")
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
		var raw []byte
		switch r.Method {
		case http.MethodGet:
			raw = []byte(r.URL.Query().Get("cf_connect"))
			if int64(len(raw)) > s.cfg.MaxRequestBodySize {
				http.Error(w, "uni_sse: cf_connect too large", http.StatusRequestEntityTooLarge)
				return
			}
		case http.MethodPost:
			body, ok := readBody(w, r, s.cfg.MaxRequestBodySize, "uni_sse")
			if !ok {
				return
			}
			raw = body
		default:
			w.Header().Set("Allow", "GET, POST, OPTIONS")
			http.Error(w, "uni_sse: want GET with the cf_connect query parameter, or POST", http.StatusMethodNotAllowed)
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
