// Package webtransport serves the WebTransport client transport of the
// Centrifugo protocol (Centrifugo's 'webtransport', centrifuge-js's
// 'webtransport' transport) over HTTP/3.
//
// A client opens a WebTransport session at the endpoint (an extended
// CONNECT over HTTP/3) and then one bidirectional stream, which carries
// the protocol both ways for the session's life: JSON commands and replies
// each ended by "\n", or, with the query parameter cf_protocol=protobuf,
// varint-length-delimited Protobuf messages (the framing of Centrifugo's
// own handler, internal/wt in Centrifugo v6.9.1, which centrifuge-js
// reads). The stream is a byte stream, not a sequence of messages: the
// reader here splits it (read.go), and bounds each message by
// Options.MessageSizeLimit.
//
// The server closes a connection with a disconnect push on the stream,
// since centrifuge-js reports every closed session as code 4 whatever
// the session's close code says; it then ends its side of the stream,
// lets the client close the session (which it does on the push) and
// closes the session itself, with the code, if the client has not within
// a second.
//
// A write to a QUIC stream waits while the client's flow-control window is
// full, so the connection is a hub.WriteStarter: the hub's shared writers
// hand frames to a writer goroutine of the session's own (conn.go).
//
// Every session is one hub.Client opened with hub.Open. Mount
// Server.ServeHTTP on the handler of a quic-go http3.Server that a
// webtransport-go Server wraps (webtransport.ConfigureHTTP3Server), behind
// a guard.Admission like the other transports. The package does not
// depend on the server layer.
package webtransport
