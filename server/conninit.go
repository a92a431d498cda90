package server

import "net/http"

// connInit is Centrifugo's connection init endpoint (init.enabled): GET
// answers 200 with an empty JSON object, any other method 405, as
// Centrifugo 6.9.1 answers (internal/conninit, internal/middleware
// Method). It touches no node state, so a load balancer may probe it as
// often as it likes.
func connInit(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write([]byte("{}"))
}
