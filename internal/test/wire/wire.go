package wire

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

// Wire is one client connection as the tests drive it, in memory or over a
// real WebSocket: frames go out and come in exactly as sent and written.
type Wire interface {
	// Write sends one data frame.
	Write(frame []byte) error
	// Read returns the next data frame within timeout, or a *CloseError
	// once the server closed the connection.
	Read(timeout time.Duration) ([]byte, error)
	// Drop makes the client go away without a close handshake.
	Drop()
}

// CloseError is the close code and reason the server sent.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("closed by the server: %d %q", e.Code, e.Reason)
}

// Mem is a Wire on a hubtest connection the caller attached to a hub.
func Mem(conn *hubtest.Conn) Wire { return memWire{conn: conn} }

type memWire struct{ conn *hubtest.Conn }

func (w memWire) Write(frame []byte) error {
	// A frame for a connection the hub closed or stopped reading is lost,
	// as on a socket; the test then finds the close with Read.
	if err := w.conn.Send(frame); err != nil && !errors.Is(err, hubtest.ErrClosed) {
		return err
	}
	return nil
}

func (w memWire) Read(timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	f, err := w.conn.Next(ctx)
	var ce *hubtest.CloseError
	if errors.As(err, &ce) {
		return nil, &CloseError{Code: int(ce.Code), Reason: ce.Reason}
	}
	return f, err
}

func (w memWire) Drop() { w.conn.Drop() }

// WebSocket is a Wire on a gorilla WebSocket connection speaking proto:
// text frames for JSON, binary frames for Protobuf. Like gorilla's
// connection it supports one reader and one writer at a time.
func WebSocket(conn *gws.Conn, proto protocol.Type) Wire { return wsWire{conn: conn, proto: proto} }

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

// writeTimeout bounds one write, so a server that stopped reading fails
// the test instead of hanging it.
const writeTimeout = 10 * time.Second

func (w wsWire) Write(frame []byte) error {
	_ = w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := w.conn.WriteMessage(w.frameType(), frame); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func (w wsWire) Read(timeout time.Duration) ([]byte, error) {
	_ = w.conn.SetReadDeadline(time.Now().Add(timeout))
	typ, data, err := w.conn.ReadMessage()
	var ce *gws.CloseError
	if errors.As(err, &ce) {
		return nil, &CloseError{Code: ce.Code, Reason: ce.Text}
	}
	if err != nil {
		return nil, err
	}
	if typ != w.frameType() {
		return nil, fmt.Errorf("%v connection got a frame of type %d: %q", w.proto, typ, data)
	}
	return data, nil
}

func (w wsWire) Drop() { _ = w.conn.Close() }

// Dial opens a WebSocket connection to url speaking proto (the Protobuf
// subprotocol is asked for and must be echoed) and closes it when t ends.
func Dial(t testing.TB, url string, proto protocol.Type) Wire {
	t.Helper()
	d := &gws.Dialer{HandshakeTimeout: 5 * time.Second}
	if proto == protocol.TypeProtobuf {
		d.Subprotocols = []string{websocket.SubprotocolProtobuf}
	}
	conn := DialWith(t, d, url, nil)
	if proto == protocol.TypeProtobuf && conn.Subprotocol() != websocket.SubprotocolProtobuf {
		t.Fatalf("subprotocol echoed: %q", conn.Subprotocol())
	}
	return WebSocket(conn, proto)
}

// DialWith dials url with a custom gorilla dialer (socket options, a
// subprotocol) and header, and closes the connection when t ends.
func DialWith(t testing.TB, d *gws.Dialer, url string, header http.Header) *gws.Conn {
	t.Helper()
	conn, resp, err := d.Dial(url, header)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return conn
}

// closeTimeout bounds the wait for the server's close, which may follow a
// ping interval or a backend's timeout.
const closeTimeout = 15 * time.Second

// ExpectClose reads w until the server closes it, skipping the messages
// queued before the close, and checks code and reason ("" for any
// reason).
func ExpectClose(t testing.TB, w Wire, code int, reason string) {
	t.Helper()
	ce, err := AwaitClose(w, closeTimeout)
	if err != nil {
		t.Fatalf("want close %d %q, got %v", code, reason, err)
	}
	if ce.Code != code || (reason != "" && ce.Reason != reason) {
		t.Fatalf("want close %d %q, got %d %q", code, reason, ce.Code, ce.Reason)
	}
}

// AwaitClose reads w until the server closes it, skipping the messages
// queued before the close, and returns the close; an error if the
// connection failed otherwise or timeout passed. It does not touch a
// testing.TB, so goroutines other than the test's may call it.
func AwaitClose(w Wire, timeout time.Duration) (*CloseError, error) {
	deadline := time.Now().Add(timeout)
	var last []byte
	for {
		data, err := w.Read(time.Until(deadline))
		if err == nil {
			last = data // a message queued before the close
			continue
		}
		var ce *CloseError
		if !errors.As(err, &ce) {
			return nil, fmt.Errorf("%w (last data %.200q)", err, last)
		}
		return ce, nil
	}
}
