// Package httpstream serves the HTTP transports of the Centrifugo client
// protocol, for clients that cannot use WebSocket (a proxy or network that
// blocks it) or that only need to receive:
//
//   - HTTP-streaming (Server.HTTPStream, /connection/http_stream): the
//     client POSTs its first commands (the connect command) and reads its
//     replies from the chunked response, JSON lines or varint-delimited
//     Protobuf.
//   - SSE (Server.SSE, /connection/sse): the same over an EventSource, JSON
//     only; the connect command arrives in the cf_connect query parameter
//     (or as a POST body) and every reply is a "data:" event.
//   - Emulation (Server.Emulation, /emulation): the later commands of an
//     HTTP-streaming or SSE client, POSTed with the session and node its
//     connect result named. Any node may receive them; the hub routes them
//     to the node that holds the session.
//   - Unidirectional HTTP-streaming and SSE (Server.UniHTTPStream,
//     Server.UniSSE): the client sends one ConnectRequest and receives bare
//     pushes only, as Centrifugo's uni_http_stream and uni_sse do.
//
// Every stream is one hub.Client opened with hub.Open. The package does
// not depend on the server layer: mount the handlers on any mux, behind a
// guard.Admission's Handler (the streams then count against its limits as
// WebSocket connections do) or whatever admission control the application
// wants (Config.Opened tells it when the hub holds the connection).
package httpstream
