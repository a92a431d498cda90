package hubtest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// ErrClosed is returned by Send when the frame was not delivered (the
// connection is closed, or the hub stopped reading it), by WriteFrame
// once the connection is closed, and by Next when the connection ended
// without a close from the hub (Drop).
var ErrClosed = errors.New("hubtest: connection closed")

// CloseError is what Next returns once the frames written before the hub's
// Close have been read: the close code and reason the hub sent.
type CloseError struct {
	Code   uint32
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("hubtest: connection closed by the hub: %d %q", e.Code, e.Reason)
}

// Receiver is the hub's side of a connection, which the Conn feeds;
// *hub.Client implements it.
type Receiver interface {
	HandleFrame(frame []byte) bool
	HandleClose()
}

// Conn is an in-memory connection: a hub.Transport for the hub, and the
// client's end for the test. Its methods are safe for concurrent use.
type Conn struct {
	proto protocol.Type

	// Read side: readMu serialises HandleFrame and HandleClose, as a
	// transport's single reader does.
	readMu  sync.Mutex
	stopped bool   // HandleFrame returned false
	scratch []byte // the frame handed to HandleFrame, reused like a read buffer

	finishOnce sync.Once
	done       chan struct{} // closed when HandleClose has returned

	// writing is set during WriteFrame, to catch two writers at once.
	writing atomic.Bool

	mu        sync.Mutex
	receiver  Receiver
	frames    [][]byte      // written, not read yet
	notify    chan struct{} // closed and replaced when frames or the state change
	gone      chan struct{} // closed when the connection closes, however
	hubClosed chan struct{} // closed when the hub called Close first
	closed    bool
	closeErr  *CloseError // the hub's close; nil before it or after Drop
	stall     chan struct{}
	failWith  error
}

// NewConn returns an unattached connection with encoding proto; the hub's
// client for it is attached with Attach. Dial does both.
func NewConn(proto protocol.Type) *Conn {
	if proto != protocol.TypeJSON && proto != protocol.TypeProtobuf {
		panic(fmt.Sprintf("hubtest: NewConn: unknown protocol type %v", proto))
	}
	return &Conn{
		proto:     proto,
		done:      make(chan struct{}),
		notify:    make(chan struct{}),
		gone:      make(chan struct{}),
		hubClosed: make(chan struct{}),
	}
}

// Attach sets the receiver of the connection's frames, usually
// the *hub.Client that hub.NewClient returned for c. It must be called
// once, before Send. If the hub closed c already (a hub that is shutting
// down does so inside NewClient), HandleClose follows.
func (c *Conn) Attach(s Receiver) {
	if s == nil {
		panic("hubtest: Attach: nil receiver")
	}
	c.mu.Lock()
	if c.receiver != nil {
		c.mu.Unlock()
		panic("hubtest: Attach called twice")
	}
	c.receiver = s
	closed := c.closed
	c.mu.Unlock()
	if closed {
		go c.finish()
	}
}

// Dial connects a new client to h over an in-memory connection with
// encoding proto: it is h.NewClient on a NewConn, attached. The client
// must send its connect command within the hub's stale delay, as over a
// socket.
func Dial(h *hub.Hub, proto protocol.Type) (*Conn, *hub.Client) {
	conn := NewConn(proto)
	client := h.NewClient(conn, "hubtest")
	conn.Attach(client)
	return conn, client
}

// Closed is closed when the hub has closed the connection (Close), not
// when the client dropped it; CloseCode then says how.
func (c *Conn) Closed() <-chan struct{} { return c.hubClosed }

// CloseCode is the code and reason the hub closed the connection with;
// zero and empty until it did, and after Drop.
func (c *Conn) CloseCode() (uint32, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeErr == nil {
		return 0, ""
	}
	return c.closeErr.Code, c.closeErr.Reason
}

// Done is closed when the connection is gone and the receiver's
// HandleClose has returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// markClosedLocked closes the connection; e is the hub's close, nil when
// the client dropped it. It reports whether the connection was open.
func (c *Conn) markClosedLocked(e *CloseError) bool {
	if c.closed {
		return false
	}
	c.closed = true
	c.closeErr = e
	close(c.gone)
	if e != nil {
		close(c.hubClosed)
	}
	c.signalLocked()
	return true
}

// signalLocked wakes the readers waiting in Next.
func (c *Conn) signalLocked() {
	close(c.notify)
	c.notify = make(chan struct{})
}

// finish calls HandleClose once, on the read side: after the HandleFrame
// in progress, if any, and never again after it.
func (c *Conn) finish() {
	c.finishOnce.Do(func() {
		c.readMu.Lock()
		defer c.readMu.Unlock()
		c.mu.Lock()
		s := c.receiver
		c.mu.Unlock()
		s.HandleClose()
		close(c.done)
	})
}
