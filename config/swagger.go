package config

// SwaggerConfig is Centrifugo's swagger section: the HTTP API's OpenAPI
// document (api.OpenAPI, the same as docs/openapi.json) and a page to try
// its methods, on the internal listener when there is one.
type SwaggerConfig struct {
	// Enabled and HandlerPrefix are wiring (the server mounts the endpoint).
	Enabled       bool   `yaml:"enabled" doc:"serve the HTTP API's OpenAPI 3 document at 'handler_prefix'/openapi.json and a page that lists its methods and calls them at 'handler_prefix'/ (on the internal listener when 'internal.address' is set), as Centrifugo's Swagger UI. The page is Herald's own, a few lines with no external scripts; point any OpenAPI tool at the document for more"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/swagger" doc:"the path of the OpenAPI page"`
}
