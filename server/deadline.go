package server

import (
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// readDeadline bounds reading each request on the listener to d from the
// start of its handling. The API handler sets its own deadline for its
// body (the same http_api.body_read_timeout) and lifts it once the body is
// in; the other endpoints read no body, and this deadline is what bounds
// net/http's discarding of one after they answer, which a caller could
// otherwise trickle for ever. A WebSocket upgrade clears it: net/http
// resets a hijacked connection's deadlines.
func readDeadline(d time.Duration, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		if err != nil && !errors.Is(err, http.ErrNotSupported) {
			log.Warn("http: set the request read deadline", "path", r.URL.Path, "error", err)
		}
		next.ServeHTTP(w, r)
	})
}
