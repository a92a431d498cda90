package hub_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/protocol"
)

// wire is one client connection as the tests drive it, in memory or over a
// real WebSocket: frames go out and come in exactly as sent and written.
type wire interface {
	// write sends one data frame.
	write(frame []byte) error
	// read returns the next data frame within timeout, or a *serverClose
	// once the server closed the connection.
	read(timeout time.Duration) ([]byte, error)
	// drop makes the client go away without a close handshake.
	drop()
}

// serverClose is the close code and reason the server sent.
type serverClose struct {
	code   int
	reason string
}

func (e *serverClose) Error() string {
	return fmt.Sprintf("closed by the server: %d %q", e.code, e.reason)
}

// memWire is a client on a hubtest.Conn.
type memWire struct{ conn *hubtest.Conn }

func (w memWire) write(frame []byte) error {
	// A frame for a connection the hub closed or stopped reading is lost,
	// as on a socket; the test then finds the close with read.
	if err := w.conn.Send(frame); err != nil && !errors.Is(err, hubtest.ErrClosed) {
		return err
	}
	return nil
}

func (w memWire) read(timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	f, err := w.conn.Next(ctx)
	var ce *hubtest.CloseError
	if errors.As(err, &ce) {
		return nil, &serverClose{code: int(ce.Code), reason: ce.Reason}
	}
	return f, err
}

func (w memWire) drop() { w.conn.Drop() }

// wsWire is a client on a gorilla WebSocket connection.
type wsWire struct {
	conn  *gws.Conn
	proto protocol.Type
}

func (w wsWire) frameType() int {
	if w.proto == protocol.TypeProtobuf {
		return gws.BinaryMessage
	}
	return gws.TextMessage
}

func (w wsWire) write(frame []byte) error { return w.conn.WriteMessage(w.frameType(), frame) }

func (w wsWire) read(timeout time.Duration) ([]byte, error) {
	_ = w.conn.SetReadDeadline(time.Now().Add(timeout))
	typ, data, err := w.conn.ReadMessage()
	var ce *gws.CloseError
	if errors.As(err, &ce) {
		return nil, &serverClose{code: ce.Code, reason: ce.Text}
	}
	if err != nil {
		return nil, err
	}
	if typ != w.frameType() {
		return nil, fmt.Errorf("%v connection got a frame of type %d: %q", w.proto, typ, data)
	}
	return data, nil
}

func (w wsWire) drop() { w.conn.Close() }

// expectCloseWire reads w until the server closes it, skipping the
// messages queued before the close, and checks code and reason ("" for
// any reason).
func expectCloseWire(t *testing.T, w wire, code int, reason string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		data, err := w.read(time.Until(deadline))
		if err == nil {
			continue // messages queued before the close
		}
		var sc *serverClose
		if !errors.As(err, &sc) {
			t.Fatalf("want close %d %q, got %v (last data %q)", code, reason, err, data)
		}
		if sc.code != code || (reason != "" && sc.reason != reason) {
			t.Fatalf("want close %d %q, got %d %q", code, reason, sc.code, sc.reason)
		}
		return
	}
}
