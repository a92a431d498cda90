package api

import (
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald/protocol"
)

// Off returns the handler of a node that serves no API (no key is
// configured): every request is answered 403 with an error in the API's
// own shape, {"error":{"code":108,"message":"…"}}, whose message says the
// API is off and, with how, how to turn it on. A backend that publishes
// to such a node learns why instead of getting a bare 404.
func Off(how string) http.Handler {
	msg := "the HTTP API is off on this node"
	if how != "" {
		msg += ": " + how
	}
	reply := struct {
		Error Error `json:"error"`
	}{Error{Code: protocol.ErrorNotAvailable, Message: msg}}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		// The status is out; a failed write means the caller has gone.
		_ = json.NewEncoder(w).Encode(reply)
	})
}
