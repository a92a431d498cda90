package hub

import "github.com/heraldhq/herald/protocol"

// Transport is a client connection as the hub sees it. The WebSocket
// transport implements it; so can any other bidirectional transport.
type Transport interface {
	// Protocol is the connection's encoding for its whole life.
	Protocol() protocol.Type
	// WriteFrame writes one frame holding one or more encoded messages,
	// batched with protocol.AppendMessage. The hub calls it from one
	// goroutine at a time per connection; it may block up to the
	// transport's write timeout and must not keep frame after returning.
	WriteFrame(frame []byte) error
	// Close sends the close code and reason to the client and closes the
	// connection. It is safe to call more than once and concurrently with
	// WriteFrame.
	Close(code uint32, reason string)
}
