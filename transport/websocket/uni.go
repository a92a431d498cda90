package websocket

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/protocol"
)

// Unidirectional WebSocket (Centrifugo's uni_websocket): the client sends
// one JSON ConnectRequest, as its first message or in the cf_connect query
// parameter, and then only receives. Every message the hub writes goes out
// as a bare push (protocol.ReplyToPush), one push per text frame, as
// Centrifugo sends them by default. What the client sends after the
// connect request is read (so that pings, pongs and the close frame are
// handled) and ignored, as Centrifugo does. A connection the server closes
// gets a disconnect push, then the close frame with the same code.

// UniConnectParam is the query parameter that may carry the connect
// request instead of the first message: a JSON ConnectRequest.
const UniConnectParam = "cf_connect"

// UniReceiver is the hub's side of a unidirectional connection (hub.Client
// implements it). Connect is called once, with the client's connect
// request; HandleClose exactly once, when the connection is gone, as for
// Receiver.
type UniReceiver interface {
	Connect(req *protocol.ConnectRequest)
	HandleClose()
}

// UniAcceptFunc is called for every upgraded unidirectional connection; it
// returns the receiver of its connect request. It may call
// c.WriteFrame and c.Close. If it returns nil the connection is closed
// (1011 unless it was closed already) and HandleClose is not called.
type UniAcceptFunc func(c *UniConn, r *http.Request) UniReceiver

// UniConn is a unidirectional connection. It implements hub.Transport.
type UniConn struct {
	c *Conn
	// A frame that StartFrame began and the socket did not take at once:
	// the buffer holding the push being written (a large one is written
	// from it) and the messages of the frame after it. Set only while such
	// a write waits.
	pwb  *writeBuf
	rest []byte
}

// Protocol is always JSON: Centrifugo's unidirectional WebSocket has no
// Protobuf form.
func (u *UniConn) Protocol() protocol.Type { return protocol.TypeJSON }

// RemoteAddr is the peer's address, for logs.
func (u *UniConn) RemoteAddr() string { return u.c.RemoteAddr() }

// WriteFrame writes every message of frame (replies joined with '\n', the
// hub's framing) as a bare push in a text frame of its own. A reply that has
// no push form (the answer to a command a unidirectional client cannot
// send) is dropped with a debug log. Same contract as Conn.WriteFrame.
func (u *UniConn) WriteFrame(frame []byte) error {
	srv := u.c.srv
	wb := srv.getWriteBuf()
	defer srv.putWriteBuf(wb)
	// The JSON encoder drops raw newlines from embedded payloads, so a
	// newline always separates two messages.
	if srv.cfg.UniJoinPushes {
		return u.writeJoined(wb, frame)
	}
	return protocol.SplitFrame(protocol.TypeJSON, frame, func(msg []byte) error {
		push, err := protocol.ReplyToPush(protocol.TypeJSON, wb.b[:0], msg)
		if err != nil {
			srv.log.Debug("uni_websocket: reply not sent", "remote", u.RemoteAddr(), "error", err)
			return nil
		}
		wb.b = push
		return u.c.WriteFrame(push)
	})
}

// StartFrame is WriteFrame without waiting (hub.WriteStarter): it writes
// the pushes of frame until the socket does not take one at once, and
// reports whether it wrote them all. When it did not, FinishFrame, which
// the caller must call next with the same frame, writes the rest.
func (u *UniConn) StartFrame(frame []byte) (bool, error) {
	srv := u.c.srv
	wb := srv.getWriteBuf()
	if srv.cfg.UniJoinPushes {
		// One joined frame: started, and finished by FinishFrame with
		// nothing after it.
		out, err := u.joinPushes(wb, frame)
		if err != nil || len(out) == 0 {
			srv.putWriteBuf(wb)
			return err == nil, err
		}
		done, err := u.c.StartFrame(out)
		if err != nil || done {
			srv.putWriteBuf(wb)
			return err == nil, err
		}
		u.pwb = wb
		return false, nil
	}
	waiting := false
	err := protocol.SplitFrame(protocol.TypeJSON, frame, func(msg []byte) error {
		if waiting {
			return nil
		}
		push, err := protocol.ReplyToPush(protocol.TypeJSON, wb.b[:0], msg)
		if err != nil {
			srv.log.Debug("uni_websocket: reply not sent", "remote", u.RemoteAddr(), "error", err)
			return nil
		}
		wb.b = push
		done, err := u.c.StartFrame(push)
		if err == nil && !done {
			// msg is a part of frame: what follows it is the rest.
			waiting, u.rest = true, frame[cap(frame)-cap(msg)+len(msg):]
		}
		return err
	})
	if !waiting {
		srv.putWriteBuf(wb)
		return err == nil, err
	}
	u.pwb = wb
	return false, nil
}

// FinishFrame writes the rest of the frame StartFrame began.
func (u *UniConn) FinishFrame([]byte) error {
	wb, rest := u.pwb, u.rest
	if wb == nil {
		return nil
	}
	u.pwb, u.rest = nil, nil
	err := u.c.FinishFrame(nil)
	u.c.srv.putWriteBuf(wb)
	if err != nil || len(rest) == 0 {
		return err
	}
	return u.WriteFrame(rest)
}

// writeJoined writes the pushes of frame in one text frame, joined with
// '\n' (Config.UniJoinPushes).
func (u *UniConn) writeJoined(wb *writeBuf, frame []byte) error {
	out, err := u.joinPushes(wb, frame)
	if err != nil || len(out) == 0 {
		return err
	}
	return u.c.WriteFrame(out)
}

// joinPushes converts the replies of frame to pushes joined with '\n'
// in wb, and returns them.
func (u *UniConn) joinPushes(wb *writeBuf, frame []byte) ([]byte, error) {
	out := wb.b[:0]
	err := protocol.SplitFrame(protocol.TypeJSON, frame, func(msg []byte) error {
		start := len(out)
		if start > 0 {
			out = append(out, '\n')
		}
		push, err := protocol.ReplyToPush(protocol.TypeJSON, out, msg)
		if err != nil {
			u.c.srv.log.Debug("uni_websocket: reply not sent", "remote", u.RemoteAddr(), "error", err)
			out = out[:start]
			return nil
		}
		out = push
		return nil
	})
	wb.b = out
	return out, err
}

// Close writes a disconnect push with code and reason, then closes the
// connection with the same code and reason in the close frame, as
// Centrifugo does by default. Safe to call more than once and concurrently
// with WriteFrame.
func (u *UniConn) Close(code uint32, reason string) {
	d := protocol.DisconnectCode(code).Push()
	if reason != "" {
		d.Reason = reason
	}
	if u.c.srv.cfg.UniNoDisconnectPush {
		u.closeConn(code, reason)
		return
	}
	if push, err := protocol.AppendPushOnly(protocol.TypeJSON, nil, &protocol.Push{Disconnect: d}); err == nil {
		// Fails harmlessly when the connection is closing already.
		_ = u.c.WriteFrame(push)
	}
	u.closeConn(code, reason)
}

// closeConn closes the connection with a close frame of code and reason,
// or, with Config.UniNoClosingHandshake, drops it without one.
func (u *UniConn) closeConn(code uint32, reason string) {
	if u.c.srv.cfg.UniNoClosingHandshake {
		u.c.abort()
		return
	}
	u.c.Close(code, reason)
}

// uniReceiver adapts a UniReceiver to the read side: the first message is
// the connect request unless cf_connect carried it, and later ones are
// ignored.
type uniReceiver struct {
	u         *UniConn
	next      UniReceiver
	connected bool // the connect request has been handed over; read side only
}

func (s *uniReceiver) HandleFrame(frame []byte) bool {
	if s.connected {
		return true
	}
	s.connected = true
	req, err := decodeUniConnect(frame)
	if err != nil {
		s.u.c.srv.log.Info("uni_websocket: bad connect request", "remote", s.u.RemoteAddr(), "error", err)
		s.u.closeConn(uint32(protocol.DisconnectBadRequest), protocol.DisconnectBadRequest.Reason())
		return false
	}
	s.next.Connect(req)
	return true
}

func (s *uniReceiver) HandleClose() { s.next.HandleClose() }

// decodeUniConnect decodes a JSON ConnectRequest (Centrifugo's form:
// token, data, subs, name, version).
func decodeUniConnect(b []byte) (*protocol.ConnectRequest, error) {
	req := &protocol.ConnectRequest{}
	if err := json.Unmarshal(bytes.TrimSpace(b), req); err != nil {
		return nil, fmt.Errorf("connect request: %w", err)
	}
	return req, nil
}

// UniHandler returns the handler of the unidirectional WebSocket endpoint
// (mounted at /connection/uni_websocket by the server layer). It shares
// the Server's read path, limits, origin check and compression with
// ServeHTTP. A cf_connect parameter that is not a JSON ConnectRequest is
// answered 400 before the upgrade.
func (s *Server) UniHandler(accept UniAcceptFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var early *protocol.ConnectRequest
		if v := r.URL.Query().Get(UniConnectParam); v != "" {
			req, err := decodeUniConnect([]byte(v))
			if err != nil {
				s.log.Info("uni_websocket: bad connect request in "+UniConnectParam, "remote", r.RemoteAddr, "error", err)
				http.Error(w, "invalid connect request", http.StatusBadRequest)
				return
			}
			early = req
		}
		s.upgrade(w, r, true, func(c *Conn, r *http.Request) Receiver {
			u := &UniConn{c: c}
			next := accept(u, r)
			if next == nil {
				return nil
			}
			us := &uniReceiver{u: u, next: next}
			if early != nil {
				us.connected = true
				next.Connect(early)
			}
			return us
		})
	})
}
