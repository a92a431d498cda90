package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// soakPosition is where a slot's last session left its channel's stream.
type soakPosition struct {
	epoch  string
	offset uint64
}

// soakTokens returns a function that signs a connection token for a user.
func soakTokens(secret string) (func(string) (string, error), error) {
	signer, err := auth.NewHMACSigner(secret, "HS256")
	if err != nil {
		return nil, fmt.Errorf("soak: token signer: %w", err)
	}
	return func(user string) (string, error) {
		return signer.ConnectToken(auth.ConnectClaims{User: user})
	}, nil
}

// soakIdle bounds a wait for any frame: the server pings every 25 s.
const soakIdle = 40 * time.Second

// session runs one connection: connect, subscribe to ch (recovering from
// pos when the slot had a session before), check each publication's
// offset follows the last one, and close normally after life. It returns
// the position to recover from next.
func (s *soakState) session(ctx context.Context, node SoakNode, user, ch string, pos *soakPosition, life time.Duration) *soakPosition {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, _, _, err := ws.Dialer{}.Dial(dctx, node.WS)
	cancel()
	if err != nil {
		if !over(ctx) {
			s.fail(&s.dialErrs, "dial %s: %v", node.WS, err)
			sleepUntil(ctx, time.Second)
		}
		return pos
	}
	defer conn.Close()
	s.sessions.Add(1)
	tok, err := s.token(user)
	if err != nil {
		s.fail(&s.connectErrs, "token: %v", err)
		return pos
	}
	// recoverable makes the subscription positioned from the start: its
	// result carries the stream's position, and the server watches it.
	sub := map[string]any{"channel": ch, "recoverable": true}
	if pos != nil {
		sub["recover"], sub["offset"], sub["epoch"] = true, pos.offset, pos.epoch
	}
	connect, _ := json.Marshal(map[string]any{"id": 1, "connect": map[string]any{"token": tok}})
	subscribe, _ := json.Marshal(map[string]any{"id": 2, "subscribe": sub})
	if err := wsutil.WriteClientMessage(conn, ws.OpText, append(append(connect, '\n'), subscribe...)); err != nil {
		s.fail(&s.connectErrs, "write connect to %s: %v", node.WS, err)
		return pos
	}
	end := time.Now().Add(life)
	recovering := pos != nil
	subscribed := false
	for ctx.Err() == nil {
		deadline := earliest(end, time.Now().Add(soakIdle))
		if ctxDeadline, ok := ctx.Deadline(); ok {
			deadline = earliest(deadline, ctxDeadline)
		}
		_ = conn.SetReadDeadline(deadline)
		data, _, err := wsutil.ReadServerData(conn)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(end) {
				break // the session's life is over
			}
			if over(ctx) {
				break
			}
			var closed wsutil.ClosedError
			if errors.As(err, &closed) {
				s.fail(&s.serverCloses, "%s closed by the server: %d %s", user, closed.Code, closed.Reason)
			} else {
				s.fail(&s.readErrs, "%s read from %s: %v", user, node.WS, err)
			}
			return pos
		}
		replies, err := protocol.DecodeReplies(protocol.TypeJSON, data)
		if err != nil {
			s.fail(&s.readErrs, "%s: undecodable frame: %v", user, err)
			return pos
		}
		for _, r := range replies {
			switch {
			case r.Id == 1:
				if r.Error != nil {
					s.fail(&s.connectErrs, "%s connect: error %d %s", user, r.Error.Code, r.Error.Message)
					return pos
				}
			case r.Id == 2:
				if r.Error != nil || r.Subscribe == nil {
					s.fail(&s.subErrs, "%s subscribe %s: %v", user, ch, r.Error)
					return pos
				}
				res := r.Subscribe
				subscribed = true
				if recovering {
					if !res.Recovered {
						s.fail(&s.recoveryFails, "%s %s: not recovered from offset %d epoch %s (stream at %d epoch %s)",
							user, ch, pos.offset, pos.epoch, res.Offset, res.Epoch)
						pos = &soakPosition{epoch: res.Epoch, offset: res.Offset}
						continue
					}
					s.recovered.Add(1)
					for _, p := range res.Publications {
						s.check(user, ch, pos, p.Offset)
					}
					continue
				}
				pos = &soakPosition{epoch: res.Epoch, offset: res.Offset}
			case r.Push != nil && r.Push.Pub != nil && subscribed:
				s.check(user, ch, pos, r.Push.Pub.Offset)
			case r.Id == 0 && r.Push == nil:
				// A ping: answer it.
				if err := wsutil.WriteClientMessage(conn, ws.OpText, []byte("{}")); err != nil {
					s.fail(&s.readErrs, "%s pong: %v", user, err)
					return pos
				}
			}
		}
	}
	_ = ws.WriteFrame(conn, ws.MaskFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusNormalClosure, ""))))
	return pos
}

// check moves pos to offset when it is the next one, and counts a gap or a
// duplicate otherwise.
func (s *soakState) check(user, ch string, pos *soakPosition, offset uint64) {
	switch {
	case offset == pos.offset+1:
		s.received.Add(1)
	case offset <= pos.offset:
		s.fail(&s.dups, "%s %s: offset %d again (at %d)", user, ch, offset, pos.offset)
		return
	default:
		s.fail(&s.gaps, "%s %s: offset %d after %d", user, ch, offset, pos.offset)
	}
	pos.offset = offset
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// over reports a run that has ended, or is about to: an error at the
// run's deadline (a dial or read cut short by it) is not the server's.
func over(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < 100*time.Millisecond
}
