package main

import (
	"bytes"
	_ "embed"
	"net/http"
	"time"
)

//go:embed index.html
var indexHTML []byte

// pageHandler serves the chat page.
func pageHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(indexHTML))
	})
}

// scriptHandler serves the centrifuge-js bundle the page loads from
// /centrifuge.js. The repository does not carry a copy of it: it comes
// from npm (see README.md).
func scriptHandler(js []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		http.ServeContent(w, r, "centrifuge.js", time.Time{}, bytes.NewReader(js))
	})
}
