package httpstream

import (
	"net/http"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// HTTPStream serves /connection/http_stream: a POST whose body holds the
// client's first commands (JSON lines, or varint-delimited Protobuf with
// Content-Type application/octet-stream), answered by a chunked stream of
// replies in the same encoding: each JSON reply followed by "\n",
// Protobuf replies varint-delimited.
func (s *Server) HTTPStream() http.Handler {
	return s.cors("POST, OPTIONS", func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.opening(w, r, "http_stream", false, "POST with the connect command as the body")
		if !ok {
			return
		}
		if len(body) == 0 {
			http.Error(w, "http_stream: empty body: want the connect command", http.StatusBadRequest)
			return
		}
		s.serve(w, r, streamSpec{transport: hub.TransportHTTPStream, framing: framingStream}, requestProtocol(r), body, nil)
	})
}

// SSE serves /connection/sse: an EventSource GET with the connect command
// (JSON) in the cf_connect query parameter, or a POST with it as the
// body, answered by a text/event-stream of "data: <reply>" events. JSON
// only.
func (s *Server) SSE() http.Handler {
	return s.cors("GET, POST, OPTIONS", func(w http.ResponseWriter, r *http.Request) {
		first, ok := s.opening(w, r, "sse", true, "GET with the cf_connect query parameter, or POST")
		if !ok {
			return
		}
		if len(first) == 0 {
			http.Error(w, "sse: no connect command: send it in the cf_connect query parameter (GET) or as the body (POST)", http.StatusBadRequest)
			return
		}
		s.serve(w, r, streamSpec{transport: hub.TransportSSE, framing: framingSSE}, protocol.TypeJSON, first, nil)
	})
}
