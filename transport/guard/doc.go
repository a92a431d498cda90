// Package guard protects the endpoints that open client connections, for
// any transport and any application that embeds the hub:
//
//   - Admission refuses new connections the node will not take before
//     they are opened: while it drains, past a bound on connections that
//     have not authenticated (per node and per client address), and past a
//     rate of new connections per client address.
//   - ClientAddr tells a client's address behind trusted proxies.
//   - SameOrigin, Origins and Listed check a browser's origin; CORS
//     answers preflights and sets the CORS headers.
//   - Listener serves WebSocket upgrade requests from the accept loop with
//     pooled buffers, and ReadDeadline bounds reading requests.
//
// transport/websocket and transport/httpstream use it; the server package
// wires it from the configuration, and examples/chat shows it in a small
// application. The package does not depend on the hub: the hub's
// ConnInfo.Admission takes a Ticket, and its NumPending is Config.Pending.
package guard
