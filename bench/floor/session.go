package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/gobwas/ws"
	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/protocol"
)

// Disconnect codes the floor sends, Herald's values.
const (
	closeInvalidToken = 3500
	closeBadRequest   = 3501
)

// session is the read side of one connection.
type session struct {
	s         *Server
	c         *conn
	connected bool
}

// serve reads frames until the connection ends (a close frame is not
// answered: the socket just closes). Only connect and subscribe are
// served; pongs are ignored and any other command gets a "not available"
// error reply.
func (s *Server) serve(c *conn, rd *bufio.Reader) {
	ss := session{s: s, c: c}
	var hdr [ws.MaxHeaderSize - 2]byte
	for {
		h, err := ws.ReadHeaderBuffer(rd, hdr[:])
		if err != nil {
			return
		}
		if h.Length > s.cfg.MaxFrame || !h.Fin {
			// herald-bench never fragments; a floor need not assemble.
			ss.close(closeBadRequest, "bad request")
			return
		}
		payload := make([]byte, h.Length)
		if _, err := io.ReadFull(rd, payload); err != nil {
			return
		}
		if h.Masked {
			ws.Cipher(payload, h.Mask, 0)
		}
		switch h.OpCode {
		case ws.OpClose:
			return
		case ws.OpPing:
			if _, err := c.nc.Write(appendFrame(nil, ws.OpPong, payload)); err != nil {
				return
			}
		case ws.OpText, ws.OpBinary:
			if err := ss.handle(payload); err != nil {
				s.log.Debug("connection ends", "remote", c.nc.RemoteAddr(), "error", err)
				return
			}
		}
	}
}

// handle answers one data frame.
func (ss *session) handle(payload []byte) error {
	s, t := ss.s, ss.c.proto
	if s.cfg.Bare {
		if ss.connected {
			return nil
		}
		return ss.bare(payload)
	}
	cmds, err := protocol.DecodeCommands(t, payload)
	if err != nil {
		ss.close(closeBadRequest, "bad request")
		return err
	}
	var out []byte
	var subs []string
	for _, cmd := range cmds {
		switch {
		case cmd.Connect != nil && !ss.connected:
			if err := ss.verify(cmd.Connect.Token); err != nil {
				return err
			}
			ss.connected = true
			s.stats.connects.Add(1)
			out, err = s.replies.appendConnect(t, out, cmd.Id)
		case !ss.connected:
			ss.close(closeBadRequest, "bad request")
			return errors.New("command before connect")
		case cmd.Subscribe != nil:
			out, err = s.replies.appendSubscribe(t, out, cmd.Id)
			subs = append(subs, cmd.Subscribe.Channel)
		case cmd.Id == 0 && cmd.Empty():
			// A pong; the floor never pings, but a client may answer anyway.
		default:
			out, err = appendError(t, out, cmd.Id, protocol.ErrorNotAvailable)
		}
		if err != nil {
			return err
		}
	}
	// Every channel is ready (with -redis: this node's subscription
	// confirmed) before the replies say so.
	var joined []*channel
	for _, name := range subs {
		ch, err := s.join(name)
		if err != nil {
			return err
		}
		if ch != nil {
			joined = append(joined, ch)
		}
	}
	if len(out) > 0 {
		// The replies go out before the connection joins a channel, so
		// they precede its first push.
		if _, err := ss.c.nc.Write(appendFrame(nil, dataOp(t), out)); err != nil {
			return err
		}
	}
	for _, ch := range joined {
		ch.add(ss.c)
	}
	return nil
}

// bare answers the first frame with the canned replies for its number of
// messages, without decoding them unless a token must be checked: the
// first is taken for a connect with id 1, the others for subscribes with
// ids 2, 3, … (what herald-bench sends); nobody joins a channel.
func (ss *session) bare(payload []byte) error {
	s, t := ss.s, ss.c.proto
	n := 0
	if err := protocol.SplitFrame(t, payload, func([]byte) error { n++; return nil }); err != nil || n == 0 || n > cannedIDs {
		ss.close(closeBadRequest, "bad request")
		return fmt.Errorf("first frame of %d messages: %v", n, err)
	}
	if s.parser != nil {
		cmds, err := protocol.DecodeCommands(t, payload)
		if err != nil || cmds[0].Connect == nil {
			ss.close(closeBadRequest, "bad request")
			return fmt.Errorf("first frame is not a connect: %v", err)
		}
		if err := ss.verify(cmds[0].Connect.Token); err != nil {
			return err
		}
	}
	ss.connected = true
	s.stats.connects.Add(1)
	_, err := ss.c.nc.Write(s.replies.bare[t][n])
	return err
}

// verify checks a connect token when the server has a secret.
func (ss *session) verify(token string) error {
	s := ss.s
	if s.parser == nil {
		return nil
	}
	if _, err := s.parser.Parse(token, func(*jwt.Token) (any, error) { return s.key, nil }); err != nil {
		s.stats.refusedToken.Add(1)
		ss.close(closeInvalidToken, "invalid token")
		return fmt.Errorf("connect token: %w", err)
	}
	return nil
}

// close sends a close frame; the caller returns and the socket closes.
func (ss *session) close(code ws.StatusCode, reason string) {
	_, _ = ss.c.nc.Write(appendFrame(nil, ws.OpClose, ws.NewCloseFrameBody(code, reason)))
}
