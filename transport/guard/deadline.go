package guard

import (
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// ReadDeadline bounds reading each request next serves to d from the start
// of its handling. A handler that reads a body may set its own deadline
// and lift it once the body is in; for endpoints that read no body, this
// deadline is what bounds net/http's discarding of one after they answer,
// which a caller could otherwise trickle for ever. A WebSocket upgrade
// clears it (net/http resets a hijacked connection's deadlines), and an
// HTTP stream lifts it once its body is read.
func ReadDeadline(d time.Duration, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		if err != nil && !errors.Is(err, http.ErrNotSupported) {
			log.Warn("http: set the request read deadline", "path", r.URL.Path, "error", err)
		}
		next.ServeHTTP(w, r)
	})
}
