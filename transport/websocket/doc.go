// Package websocket is Herald's WebSocket transport, built to hold hundreds of
// thousands of mostly idle connections per node.
//
// After the HTTP upgrade (gobwas/ws) the net/http goroutine returns and the
// connection is read by one of two read paths, chosen by Config.Poller:
//
// The epoll path (Linux; the default there) holds no goroutine and no read
// or write buffer for an idle connection: it costs its socket, a small Conn
// and its Receiver. The raw socket fd is registered with an epoll instance
// owned by the Server (EPOLLONESHOT), and when it becomes readable a worker
// from a fixed pool (Config.Workers) reads everything available into the
// worker's own buffer, hands every complete data message to the Receiver in
// order and re-arms the fd, so one connection is served by one worker at a
// time. A frame that arrives only in part is copied aside until the rest
// comes, for at most Config.ReadTimeout. The hijacked connection must expose
// its file descriptor (syscall.Conn), so TLS is terminated in front of
// Herald.
//
// The portable path (every system; the default off Linux) reads each
// connection on a goroutine of its own, with blocking reads on the net.Conn
// into a buffer of the connection's own (4 KiB, grown for a large frame and
// shrunk back after it). A read deadline enforces Config.ReadTimeout while a
// message is half-read; an idle connection has none. It works over any
// net.Conn, TLS included, but an idle connection costs a goroutine stack and
// its read buffer more than on the epoll path, so a node holds fewer of them
// in the same memory.
//
// Both paths parse frames with the same code and behave the same for the
// Receiver: HandleFrame for every complete data message in order, HandleClose
// exactly once, the same close codes.
//
// Writes go straight to the socket from the caller's goroutine, with a
// deadline, through a buffer borrowed for the duration of the call.
//
// Framing follows RFC 6455: text and binary data frames, fragmented messages
// (with control frames between the fragments), ping answered by pong, and the
// closing handshake. Text frames are not checked for valid UTF-8: the
// protocol decoder rejects what it cannot parse.
//
// permessage-deflate (RFC 7692) is accepted when Config.Compression is on
// and the client offers it, always without context takeover, so that a
// connection holds no compressor or decompressor between messages: both
// come from pools for one message at a time. Outgoing messages smaller
// than Config.CompressionMinSize go out uncompressed; incoming compressed
// messages are decompressed with MaxMessageSize applied to the result
// (1009 beyond it), so a decompression bomb costs at most that much.
//
// Server.UniHandler serves Centrifugo's unidirectional WebSocket on the same
// read path: the client's first message (or the cf_connect query
// parameter) is a JSON connect request, and the hub's replies go out as
// bare pushes, one per text frame (see uni.go).
//
// The encoding is chosen at the upgrade: subprotocol centrifuge-protobuf, or
// the query parameter format=protobuf or cf_protocol=protobuf, select
// Protobuf in binary frames; anything else is JSON in text frames.
//
// The Server checks the origin (Config.CheckOrigin) and nothing else before
// upgrading: put a guard.Admission's Handler in front of it to bound the
// connections that have not authenticated, per node and per address, and
// the rate of new ones, and to refuse them while draining; guard.Listener
// reads upgrade requests with pooled buffers (package transport/guard).
package websocket
