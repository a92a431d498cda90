package httpstream

import (
	"net/http"

	"github.com/heraldhq/herald/transport/guard"
)

// cors refuses browsers from origins CheckOrigin does not accept, answers
// their preflight requests, and gives the accepted ones the headers that
// let the page read the response. centrifuge-js sends its POSTs with
// Content-Type application/json or application/octet-stream, which is not
// a "simple" request, so a cross-origin page always preflights; it does
// not send credentials, but allowing them costs nothing for an origin that
// is named explicitly and helps clients that do (EventSource
// withCredentials).
func (s *Server) cors(methods string, next http.HandlerFunc) http.Handler {
	return guard.CORS{
		Allow:       s.cfg.CheckOrigin,
		Methods:     methods,
		Credentials: true,
		Refuse:      true,
		Logger:      s.cfg.Logger,
	}.Handler(next)
}
