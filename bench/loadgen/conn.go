package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// Conn is one client connection of a Pool.
type Conn struct {
	pool *Pool
	nc   net.Conn
	rc   syscall.RawConn
	fd   int
	sub  int
	slot int32
	pong bool // the server wants pongs

	wmu sync.Mutex // orders writes: pongs from the shard, Send from others

	// Read state, owned by the shard goroutine.
	pending []byte // start of a frame whose end has not arrived
	frag    []byte // fragments of an unfinished message
	// left is when a turn last left bytes in the socket unread (Clock
	// ns; 0: it read until the socket was empty); unread is the longest
	// such wait so far (ServerClose.Unread).
	left   int64
	unread time.Duration

	// setupReply receives command replies while setup waits for them.
	setupReply func(*protocol.Reply)
}

// Sub is the subscriber index the connection reads as.
func (c *Conn) Sub() int { return c.sub }

// Send writes one command in its own frame. Replies reach the pool's
// Handler.Reply.
func (c *Conn) Send(cmd *protocol.Command) error {
	msg, err := protocol.AppendCommand(c.pool.cfg.Format, nil, cmd)
	if err != nil {
		return err
	}
	return c.writeFrame(c.dataOp(), protocol.AppendMessage(c.pool.cfg.Format, nil, msg))
}

func (c *Conn) dataOp() ws.OpCode {
	if c.pool.cfg.Format == protocol.TypeProtobuf {
		return ws.OpBinary
	}
	return ws.OpText
}

func (c *Conn) writeFrame(op ws.OpCode, payload []byte) error {
	buf := appendClientFrame(make([]byte, 0, len(payload)+14), op, payload)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.nc.Write(buf)
	return err
}

// pongPayload is the empty command that answers a ping, per encoding.
var pongPayload = [...][]byte{protocol.TypeJSON: []byte("{}"), protocol.TypeProtobuf: {0}}

func (c *Conn) sendPong() error {
	return c.writeFrame(c.dataOp(), pongPayload[c.pool.cfg.Format])
}

// closeNormal sends a close frame (1000) and closes the socket.
func (c *Conn) closeNormal() {
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_ = c.writeFrame(ws.OpClose, ws.NewCloseFrameBody(ws.StatusNormalClosure, ""))
	_ = c.nc.Close()
}

// setup dials, upgrades, connects and subscribes, reading synchronously
// until every reply is in; what arrived behind the replies is kept for
// the shard.
func (p *Pool) setup(ctx context.Context, sh *shard, i, sub int) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	u := p.urls[i%len(p.urls)]
	d := p.dialer(i)
	nc, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			nc.Close()
		}
	}()
	deadline, _ := ctx.Deadline()
	if err := nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	wd := ws.Dialer{}
	if p.cfg.Format == protocol.TypeProtobuf {
		wd.Protocols = []string{"centrifuge-protobuf"}
	}
	br, _, err := wd.Upgrade(nc, u)
	if err != nil {
		return nil, fmt.Errorf("websocket handshake with %s: %w", u.Host, err)
	}
	c := &Conn{pool: p, nc: nc, sub: sub, pong: true}
	frame, err := p.connectFrame(i)
	if err != nil {
		return nil, err
	}
	if err := c.writeFrame(c.dataOp(), frame); err != nil {
		return nil, fmt.Errorf("send connect: %w", err)
	}
	var rd io.Reader = nc
	if br != nil {
		rd = br
	}
	rest, err := c.awaitReplies(rd, sh, p.setupReplies())
	if br != nil {
		// Bytes the handshake reader buffered belong to the stream.
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			rest = append(rest, b...)
		}
		ws.PutReader(br)
	}
	if err != nil {
		return nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	sc, isSys := nc.(syscall.Conn)
	if !isSys {
		return nil, errors.New("connection has no file descriptor")
	}
	if c.rc, err = sc.SyscallConn(); err != nil {
		return nil, err
	}
	if err := c.rc.Control(func(fd uintptr) { c.fd = int(fd) }); err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		c.pending = rest
	}
	ok = true
	return c, nil
}

// dialer is connection i's TCP dialer: from its source address, if any.
func (p *Pool) dialer(i int) *net.Dialer {
	d := &net.Dialer{Control: bindNoPort}
	if len(p.sources) > 0 {
		// Sources advance once per round of URLs, so every URL gets every
		// source, whatever the two counts are.
		d.LocalAddr = p.sources[(i/len(p.urls))%len(p.sources)]
	}
	return d
}

// connectToken is connection i's JWT, or "" without a secret.
func (p *Pool) connectToken(i int) (string, error) {
	if p.signer == nil {
		return "", nil
	}
	tok, err := p.signer.ConnectToken(auth.ConnectClaims{User: p.cfg.UserPrefix + strconv.Itoa(i)})
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	return tok, nil
}

// connectFrame is the connect command followed by one subscribe per
// channel, batched in one frame (the protocol allows it and it saves
// round trips while ramping).
func (p *Pool) connectFrame(i int) ([]byte, error) {
	tok, err := p.connectToken(i)
	if err != nil {
		return nil, err
	}
	cmd := &protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Name: "herald-bench", Token: tok}}
	var frame, msg []byte
	if msg, err = protocol.AppendCommand(p.cfg.Format, msg, cmd); err != nil {
		return nil, err
	}
	frame = protocol.AppendMessage(p.cfg.Format, frame, msg)
	for j, ch := range p.cfg.Channels {
		sc := &protocol.Command{Id: uint32(2 + j), Subscribe: &protocol.SubscribeRequest{Channel: ch, Type: p.cfg.SubscribeType}}
		if p.cfg.TagsFilters > 0 {
			sc.Subscribe.Tf = TagsFilter(i, p.cfg.TagsFilters)
		}
		if msg, err = protocol.AppendCommand(p.cfg.Format, msg[:0], sc); err != nil {
			return nil, err
		}
		frame = protocol.AppendMessage(p.cfg.Format, frame, msg)
	}
	if t := p.cfg.Track; t != nil {
		// The server handles a connection's commands in order, so the
		// tracks follow the subscribes in the same frame.
		keys := t.trackKeys(i)
		items := make([]*protocol.KeyedItem, len(keys))
		for k, key := range keys {
			items[k] = &protocol.KeyedItem{Key: key}
		}
		now := time.Now().Unix()
		user := p.cfg.UserPrefix + strconv.Itoa(i)
		for j, ch := range p.cfg.Channels {
			batch := &protocol.TrackBatch{Signature: hub.SignTrack(t.Secret, ch, user, keys, now, now+3600), Items: items}
			rc := &protocol.Command{Id: uint32(2 + len(p.cfg.Channels) + j), SubRefresh: &protocol.SubRefreshRequest{Channel: ch, Type: 1, Track: []*protocol.TrackBatch{batch}}}
			if msg, err = protocol.AppendCommand(p.cfg.Format, msg[:0], rc); err != nil {
				return nil, err
			}
			frame = protocol.AppendMessage(p.cfg.Format, frame, msg)
		}
	}
	return frame, nil
}

// awaitReplies reads until the replies with ids 1..want arrived; the
// first error reply fails the connection. Pushes and pings are handled as
// the shard would. It returns unparsed bytes that followed.
func (c *Conn) awaitReplies(rd io.Reader, sh *shard, want int) ([]byte, error) {
	got := 0
	var failed error
	c.setupReply = func(r *protocol.Reply) {
		if r.Error != nil && failed == nil {
			failed = c.pool.setupError(r)
		}
		if r.Id == 1 && r.Connect != nil {
			c.pong = r.Connect.Pong || r.Connect.Ping == 0
		}
		if r.Subscribe != nil {
			c.pool.recovered.Add(int64(len(r.Subscribe.Publications)))
		}
		got++
	}
	defer func() { c.setupReply = nil }()
	buf := make([]byte, 0, 4096)
	for got < want && failed == nil {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, rerr := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		used, err := c.consume(sh.id, buf)
		buf = buf[:copy(buf, buf[used:])]
		if err != nil {
			return nil, err
		}
		if rerr != nil && got < want && failed == nil {
			return nil, fmt.Errorf("waiting for connect/subscribe replies (%d of %d): %w", got, want, rerr)
		}
	}
	if failed != nil {
		return nil, failed
	}
	return slices.Clone(buf), nil
}

// errClosedByServer carries the close frame's code.
type errClosedByServer struct {
	code   ws.StatusCode
	reason string
}

func (e errClosedByServer) Error() string {
	return fmt.Sprintf("closed by server: %d %s", e.code, e.reason)
}

// frameMessages turns a complete frame into replies, assembling
// fragments and answering control frames. Close frames return
// errClosedByServer.
func (c *Conn) frameMessages(f frame) ([]*protocol.Reply, error) {
	switch f.op {
	case ws.OpPing:
		return nil, c.writeFrame(ws.OpPong, f.payload)
	case ws.OpPong:
		return nil, nil
	case ws.OpClose:
		code, reason := ws.ParseCloseFrameData(f.payload)
		_ = c.writeFrame(ws.OpClose, ws.NewCloseFrameBody(code, ""))
		return nil, errClosedByServer{code: code, reason: reason}
	case ws.OpContinuation:
		if c.frag == nil {
			return nil, errors.New("continuation frame without a first fragment")
		}
		c.frag = append(c.frag, f.payload...)
		if !f.fin {
			return nil, nil
		}
		msg := c.frag
		c.frag = nil
		return protocol.DecodeReplies(c.pool.cfg.Format, msg)
	case ws.OpText, ws.OpBinary:
		if !f.fin {
			c.frag = append([]byte(nil), f.payload...)
			return nil, nil
		}
		return protocol.DecodeReplies(c.pool.cfg.Format, f.payload)
	}
	return nil, fmt.Errorf("unknown frame opcode %d", f.op)
}

// push hands a publication to the handler.
func (c *Conn) push(shard int, p *protocol.Push) {
	if p.Pub != nil && c.pool.handler != nil {
		c.pool.handler.Publication(shard, c.sub, p.Channel, p.Pub.Data, c.pool.clock.Now())
	}
}

// consume handles the complete frames at the start of data and returns
// how many bytes they used.
func (c *Conn) consume(shard int, data []byte) (int, error) {
	used := 0
	for {
		f, n, err := nextFrame(data[used:], c.pool.cfg.MaxMessage)
		if err != nil {
			return used, err
		}
		if n == 0 {
			return used, nil
		}
		used += n
		replies, err := c.frameMessages(f)
		if err != nil {
			return used, err
		}
		for _, r := range replies {
			switch {
			case r.Push != nil:
				c.push(shard, r.Push)
			case r.Id != 0 && c.setupReply != nil:
				c.setupReply(r)
			case r.Id != 0:
				if c.pool.handler != nil {
					c.pool.handler.Reply(c.sub, r.Id, r.Error)
				}
			case c.pong:
				if err := c.sendPong(); err != nil {
					return used, fmt.Errorf("send pong: %w", err)
				}
			}
		}
	}
}
