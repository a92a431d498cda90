// Package websocket is Herald's WebSocket transport, built to hold hundreds of
// thousands of mostly idle connections per node.
//
// An idle connection costs its socket, a small Conn and its Session: no
// goroutine is parked on it and no read or write buffer is held for it. After
// the HTTP upgrade (gobwas/ws) the net/http goroutine returns; the raw socket
// fd is registered with an epoll instance owned by the Server (EPOLLONESHOT),
// and when it becomes readable a worker from a fixed pool reads everything
// available into the worker's own buffer, hands every complete data message
// to the Session in order and re-arms the fd, so one connection is served by
// one worker at a time. A frame that arrives only in part is copied aside
// until the rest comes, for at most Config.ReadTimeout.
//
// Writes go straight to the socket from the caller's goroutine, with a
// deadline, through a buffer borrowed for the duration of the call.
//
// Framing follows RFC 6455: text and binary data frames, fragmented messages
// (with control frames between the fragments), ping answered by pong, and the
// closing handshake. permessage-deflate is not supported (it is optional for
// Centrifugo clients) and text frames are not checked for valid UTF-8: the
// protocol decoder rejects what it cannot parse.
//
// The encoding is chosen at the upgrade: subprotocol centrifuge-protobuf, or
// the query parameter format=protobuf or cf_protocol=protobuf, select
// Protobuf in binary frames; anything else is JSON in text frames.
//
// The readiness loop needs Linux (epoll); elsewhere NewServer returns an
// error. The hijacked connection must expose its file descriptor
// (syscall.Conn), so TLS is terminated in front of Herald.
package websocket
