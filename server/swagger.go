package server

import (
	_ "embed"
	"net/http"

	"github.com/heraldhq/herald/api"
)

// swaggerPage lists the API's methods and calls them, from openapi.json
// beside it: Herald's own page, with no external scripts (Centrifugo
// serves the Swagger UI bundle there, which Herald does not vendor).
//
//go:embed swagger.html
var swaggerPage []byte

// mountSwagger serves swagger.enabled: PREFIX/openapi.json, the OpenAPI
// document of the method table (docs/openapi.json), and PREFIX/, the page.
func (s *Server) mountSwagger(mux *http.ServeMux) {
	prefix := s.paths.Swagger
	doc := api.OpenAPI()
	mux.HandleFunc("GET "+prefix+"/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	mux.HandleFunc("GET "+prefix+"/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
		_, _ = w.Write(swaggerPage)
	})
	mux.Handle("GET "+prefix, http.RedirectHandler(prefix+"/", http.StatusMovedPermanently))
}
