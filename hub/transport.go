package hub

import (
	"time"

	"github.com/heraldhq/herald/protocol"
)

// Transport is a client connection as the hub sees it. The WebSocket
// transport implements it, and so do the HTTP-streaming, SSE and
// unidirectional transports.
type Transport interface {
	// Protocol is the connection's encoding for its whole life.
	Protocol() protocol.Type
	// WriteFrame writes one frame holding one or more encoded replies,
	// batched with protocol.AppendMessage. The hub calls it from one
	// goroutine at a time per connection; it may block up to the
	// transport's write timeout and must not keep frame after returning.
	// A unidirectional transport turns the replies into bare pushes
	// (protocol.ReplyToPush) before it writes them.
	WriteFrame(frame []byte) error
	// Close sends the close code and reason to the client and closes the
	// connection (a close frame on WebSocket, a disconnect push on the
	// HTTP transports). It is safe to call more than once and
	// concurrently with WriteFrame.
	Close(code uint32, reason string)
}

// WriteStarter is a Transport whose writes can begin without waiting, so
// that the hub's writers, a small pool shared by every client, never wait
// on one client's socket. StartFrame writes what the connection takes at
// once and reports whether that was all of frame. When it was not, the
// write is still in progress: the hub hands the client to a goroutine of
// its own, which calls FinishFrame with the same frame (unchanged until
// then) to write the rest within the transport's write timeout, before
// any other write of the connection. A transport without it is written
// with WriteFrame on the pool's writers, which is fine only when its
// writes never wait long.
type WriteStarter interface {
	StartFrame(frame []byte) (done bool, err error)
	FinishFrame(frame []byte) error
}

// DeliveryReporter is a Transport that can tell whether its client is
// reading: Delivered is how many bytes the client has taken from the
// connection so far, as the kernel counts them (TCP's acknowledged bytes),
// and false when it cannot say. A write that waits says only that the
// socket's buffer is full, which a node too busy to run its writers in time
// also causes; with this the hub closes as slow only a client that takes
// nothing (slowLocked).
type DeliveryReporter interface {
	Delivered() (uint64, bool)
}

// WriteProgressBounder is a Transport whose writes fail on their own when
// the client takes (almost) nothing for long enough, WriteProgressTimeout
// at most: on WebSocket, websocket.write_timeout for a client that was not
// reading and three times it for one that was. A detached write holds no
// writer of the pool, only its client's bytes (which the queue bounds
// limit), so the hub does not cut it as slow sooner than that: a reader
// whose process got no CPU for a while (a load tool sharing the node's
// cores is starved for longer than 2 s at twice the capacity) is left to
// the transport's rule, which is not overruled by the hub's own stall.
type WriteProgressBounder interface {
	WriteProgressTimeout() time.Duration
}

// SendQueueReporter is a Transport that can tell how many of the bytes
// written to its connection the client has not yet acknowledged (the
// kernel's send queue), and false when it cannot say. With it the hub
// tells a ping still on its way to a client that reads, but is behind,
// from a client that does not answer (lifecycle_pong.go).
type SendQueueReporter interface {
	Unacknowledged() (int, bool)
}

// Transport names, as Centrifugo names them in its proxy requests and
// metrics.
const (
	TransportWebSocket     = "websocket"
	TransportHTTPStream    = "http_stream"
	TransportSSE           = "sse"
	TransportUniWebSocket  = "uni_websocket"
	TransportUniHTTPStream = "uni_http_stream"
	TransportUniSSE        = "uni_sse"
	TransportUniGRPC       = "uni_grpc"
	TransportWebTransport  = "webtransport"
)

// ConnInfo is what the transport knows about a connection when it opens
// it (Hub.Open).
type ConnInfo struct {
	// RemoteAddr is the client's address, for logs and handlers.
	RemoteAddr string
	// Transport is the transport's name (TransportWebSocket, ...); empty
	// means TransportWebSocket.
	Transport string
	// Unidirectional connections only receive: the transport hands the
	// hub one connect request (Client.Connect) and never a frame; the hub
	// pings them without waiting for pongs.
	Unidirectional bool
	// Session, when not empty, makes the connection an emulated one
	// (HTTP-streaming, SSE): the connect result carries the session and
	// this node's id, and the client's later commands arrive through
	// Hub.HandleEmulation on any node, which routes them here. It must
	// come from Hub.NewSession: HandleEmulation refuses a session this
	// node did not make.
	Session string
	// Header is the HTTP request that opened the connection's header,
	// with canonical names (an http.Header converts directly), for
	// handlers that forward some of it (the proxy). Nil when there was no
	// HTTP request.
	Header map[string][]string
	// Credentials, when not nil, are who the server already knows the
	// connection to be (an in-process client of the server itself, such
	// as the admin UI's live tail): the connect command takes them as
	// they are, without OnConnecting or a token. Never set it from what a
	// remote client sent.
	Credentials *ConnectReply
	// Admission, when not nil, is released once the connection no longer
	// counts as unauthenticated: it connected, or closed before it did.
	// Admission control that bounds such connections per client address
	// (transport/guard's TakeTicket) counts them with it.
	Admission interface{ Release() }
}
