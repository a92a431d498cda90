// Package api is Herald's server HTTP API: the Centrifugo-compatible
// endpoint that backends (for example the `cent` Python library) call to
// publish, read history and presence, and disconnect or unsubscribe users.
// GRPCService serves the same methods as Centrifugo's gRPC API service
// (api.proto); package api/grpcapi runs it on a gRPC server.
//
// # Mounting
//
// NewHandler returns an http.Handler that expects request paths of the form
// "/{method}", e.g. "/publish". The server mounts it under the Centrifugo
// prefix with the prefix stripped:
//
//	mux.Handle("/api/", http.StripPrefix("/api", handler))
//
// so that POST /api/publish reaches the handler as "/publish". The prefix
// itself ("/" or "" after stripping) is the single endpoint: a body of one
// or more {"id":…,"method":…,"params":{…}} commands, answered with one
// {"id":…,"result":…} or {"id":…,"error":…} line each, always HTTP 200,
// the method by name in any case or by Centrifugo's enum number
// (legacy.go). Mount the bare prefix too (mux.Handle("/api", …)).
//
// NewExecutor runs the same methods without HTTP, for callers inside the
// node (the asynchronous consumers of package consumer): the same checks,
// errors and idempotency window, no API key.
//
// # Methods
//
// Every method is one row of the method table (methods.go): its name, its
// number in Centrifugo's Command.MethodType, the function that runs it
// on its request type, its gRPC conversion, and its properties and doc
// lines. The /api/<method> routes, the single endpoint, the batch, the
// gRPC service (GRPCService), docs/api.md's method tables and the OpenAPI
// document (OpenAPI) are produced from it; Centrifugo's methods that
// Herald does not have are rows too, and answer 108 at the single
// endpoint and over gRPC. Errors are *Error.
//
// # Requests
//
// Every method is POST with a JSON object body whose keys are the field
// names of Centrifugo's api.proto in snake_case; `data`, `info` and
// `params` are embedded JSON, `b64data`/`b64info` carry binary as base64.
// An empty body is read as {}. The checks run in this order:
//
//  1. API key (unless Config.Insecure): X-API-Key, else
//     "Authorization: apikey <key>" (scheme case-insensitive), then, with
//     Config.AllowKeyInQuery only, the api_key query parameter; a missing
//     or wrong key gets a bare 401.
//  2. POST only, else 405 with "Allow: POST".
//  3. Known method, else 404 with error 104.
//  4. Body at most Config.MaxBodySize, else 413 (plain text), and fully
//     arrived within Config.BodyReadTimeout, else 408 (plain text) and the
//     connection is closed.
//  5. Body is JSON, else 400 (plain text). JSON whose values have the wrong
//     type (e.g. "channel": 5) is answered with error 107 naming the field.
//  6. A batch holds at most Config.MaxBatchCommands commands, else error
//     107 naming the limit, and none of them runs. Its replies are
//     streamed in command order and bounded by Config.MaxBatchResponseSize:
//     the reply that would pass it and every later one are error 106
//     naming the limit (in a sequential batch their commands do not run).
//
// # Responses
//
// Every method's result is bounded by Config.MaxResponseSize, over HTTP,
// the single endpoint, a batch (each reply) and gRPC: a result that would
// pass it is error 106 naming the limit and how to ask for less
// (response.go). history reads the stream a page at a time and stops
// there, so a limit of -1 on a long stream never loads it whole.
//
// By default every answered request is HTTP 200 with {"result":{…}} or
// {"error":{"code":N,"message":"…"}}; results without fields are {}. In
// transport error mode (Config.ErrorMode "transport", or the request header
// "X-Centrifugo-Error-Mode: transport") an error is sent as the bare error
// object with an HTTP status: 100 → 500, 102 and 104 → 404, 107 and 108 →
// 400, 112 → 416, 113 → 409, any other → 500. The batch method always
// answers 200 with {"replies":[…]} (each reply holds the method-named
// result or an error), and broadcast reports per-channel failures inside
// its responses, as Centrifugo does.
//
// # Differences from Centrifugo
//
//   - rpc answers 108: Herald has no API RPC extensions.
//   - unsubscribe does not check the channel's namespace (unknown
//     namespaces have no subscribers, so nothing happens); an empty channel
//     means every channel.
//   - disconnect, unsubscribe, subscribe and refresh need user, or client
//     or session for an anonymous connection, so that a forgotten field
//     never hits every anonymous connection. A session is the emulation
//     session of an HTTP-streaming or SSE connection (the connect reply's
//     session); WebSocket connections have none, so session never matches
//     them.
//   - publish, broadcast and map_publish take delta as Centrifugo does
//     (hub.PublishOptions.Delta); publish and broadcast accept and ignore
//     version and version_epoch. idempotency_key is honoured across the
//     cluster for hub.Config.IdempotencyWindow (5 minutes by default),
//     except on NATS, which answers 108.
//   - channels and connections ask every live node and wait at most 2s; a
//     node that has not answered is listed in missing_nodes with
//     partial: true. The channels pattern is a gobwas/glob pattern
//     without separators, as in Centrifugo: * matches any run of
//     characters (":" and "/" included), ? one character, [abc], [!a-c]
//     and {a,b} alternatives; \ escapes.
//   - history and presence entries whose data or info is not valid JSON
//     (published with b64data) are written as base64 JSON strings instead
//     of failing the whole response.
package api
