package loadgen

import (
	"context"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// Subscribe phases and the map subscription type of the client protocol.
const (
	mapPhaseLive   = 0
	mapPhaseStream = 1
	mapPhaseState  = 2
	subscribeMap   = 1
)

// MapClient is one client connection that subscribes to a map channel:
// state pages, then stream pages, then live. Its reads happen on the
// goroutine that calls its methods; it is not safe for concurrent use.
type MapClient struct {
	ws     *websocket.Conn
	format protocol.Type
	pong   bool
	nextID uint32
	// OnPub receives every publication pushed after the live reply.
	OnPub func(channel string, pub *protocol.Publication, at time.Time)
	// AfterStatePage, when set, runs after each state page is read (tests
	// change the map there, so that the stream has pages to read).
	AfterStatePage func(page int) error
	// CountOnly counts the state's entries and the stream's changes
	// instead of keeping the set of keys (MapSync.Keys is then exact
	// only when the map does not change during the read): a thousand
	// readers of a large map at once would otherwise hold a thousand
	// copies of its keys.
	CountOnly bool
}

// MapSync is what a map subscribe read before it went live.
type MapSync struct {
	StatePages  int
	StreamPages int
	Keys        int // distinct keys after applying state and stream
	Changes     int // stream changes applied
	Epoch       string
	Offset      uint64
}

// DialMap connects to url as user (a token minted with secret; none when
// secret is empty).
func DialMap(ctx context.Context, url string, format protocol.Type, secret, user string) (*MapClient, error) {
	opts := &websocket.DialOptions{}
	if format == protocol.TypeProtobuf {
		opts.Subprotocols = []string{"centrifuge-protobuf"}
	}
	ws, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	// A state page of max_page_size entries can be large.
	ws.SetReadLimit(64 << 20)
	c := &MapClient{ws: ws, format: format}
	req := &protocol.ConnectRequest{Name: "herald-bench"}
	if secret != "" {
		s, err := auth.NewHMACSigner(secret, "HS256")
		if err != nil {
			ws.CloseNow()
			return nil, fmt.Errorf("token signer: %w", err)
		}
		if req.Token, err = s.ConnectToken(auth.ConnectClaims{User: user}); err != nil {
			ws.CloseNow()
			return nil, fmt.Errorf("mint token: %w", err)
		}
	}
	rep, err := c.call(ctx, &protocol.Command{Connect: req})
	if err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if rep.Connect != nil {
		c.pong = rep.Connect.Pong
	}
	return c, nil
}

// Close closes the connection normally.
func (c *MapClient) Close() error { return c.ws.Close(websocket.StatusNormalClosure, "") }

// call sends cmd with the next id and reads until its reply, handling
// pings and pushes on the way.
func (c *MapClient) call(ctx context.Context, cmd *protocol.Command) (*protocol.Reply, error) {
	c.nextID++
	cmd.Id = c.nextID
	if err := c.send(ctx, cmd); err != nil {
		return nil, err
	}
	for {
		replies, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range replies {
			if r.Id != cmd.Id {
				continue
			}
			if r.Error != nil {
				return nil, fmt.Errorf("error %d %s", r.Error.Code, r.Error.Message)
			}
			return r, nil
		}
	}
}

// send writes cmd in a frame of its own, with the id it has.
func (c *MapClient) send(ctx context.Context, cmd *protocol.Command) error {
	msg, err := protocol.AppendCommand(c.format, nil, cmd)
	if err != nil {
		return err
	}
	return c.ws.Write(ctx, c.messageType(), protocol.AppendMessage(c.format, nil, msg))
}

func (c *MapClient) messageType() websocket.MessageType {
	if c.format == protocol.TypeProtobuf {
		return websocket.MessageBinary
	}
	return websocket.MessageText
}

// read reads one frame, answers a ping, hands pushes to OnPub, and returns
// the command replies in it.
func (c *MapClient) read(ctx context.Context) ([]*protocol.Reply, error) {
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	at := time.Now()
	replies, err := protocol.DecodeReplies(c.format, data)
	if err != nil {
		return nil, fmt.Errorf("decode frame: %w", err)
	}
	out := replies[:0]
	for _, r := range replies {
		switch {
		case r.Id > 0:
			out = append(out, r)
		case r.Push != nil:
			if r.Push.Disconnect != nil {
				return nil, fmt.Errorf("disconnected: %d %s", r.Push.Disconnect.Code, r.Push.Disconnect.Reason)
			}
			if r.Push.Unsubscribe != nil {
				return nil, fmt.Errorf("unsubscribed from %s: %d %s", r.Push.Channel, r.Push.Unsubscribe.Code, r.Push.Unsubscribe.Reason)
			}
			if r.Push.Pub != nil && c.OnPub != nil {
				c.OnPub(r.Push.Channel, r.Push.Pub, at)
			}
		case c.pong:
			if err := c.ws.Write(ctx, c.messageType(), pongPayload[c.format]); err != nil {
				return nil, fmt.Errorf("pong: %w", err)
			}
		}
	}
	return out, nil
}

// SubscribeMap reads channel's state in pages of limit, then the stream
// until the live reply. With allState false it reads the first state page
// only, for its position, and goes live from there: a subscriber that
// wants changes, not the snapshot.
func (c *MapClient) SubscribeMap(ctx context.Context, channel string, limit int32, allState bool) (MapSync, error) {
	var s MapSync
	keys := map[string]struct{}{}
	counted := 0 // with CountOnly
	applyChanges := func(pubs []*protocol.Publication) int {
		if !c.CountOnly {
			return applyMapChanges(keys, pubs)
		}
		for _, p := range pubs {
			if p.Removed {
				counted--
			}
		}
		return len(pubs)
	}
	cursor := ""
	for {
		req := &protocol.SubscribeRequest{Channel: channel, Type: subscribeMap, Phase: mapPhaseState, Limit: limit, Cursor: cursor}
		if s.StatePages > 0 {
			req.Epoch, req.Offset = s.Epoch, s.Offset
		}
		r, err := c.call(ctx, &protocol.Command{Subscribe: req})
		if err != nil {
			return s, fmt.Errorf("state page %d: %w", s.StatePages+1, err)
		}
		res := r.Subscribe
		// The last state page may go live at once, with the stream's
		// changes since the first page (Centrifugo does when the stream
		// has not moved by more than a page: centrifuge v0.40.1,
		// client_map.go, handleMapStateToLive).
		if res == nil || (res.Phase != mapPhaseState && res.Phase != mapPhaseLive) {
			return s, fmt.Errorf("state page %d: want a reply of phase %d or %d", s.StatePages+1, mapPhaseState, mapPhaseLive)
		}
		if s.StatePages == 0 {
			s.Epoch, s.Offset = res.Epoch, res.Offset
		}
		s.StatePages++
		if c.CountOnly {
			counted += len(res.State)
		} else {
			for _, p := range res.State {
				keys[p.Key] = struct{}{}
			}
		}
		if c.AfterStatePage != nil {
			if err := c.AfterStatePage(s.StatePages); err != nil {
				return s, err
			}
		}
		if res.Phase == mapPhaseLive {
			s.Changes += applyChanges(res.Publications)
			s.Epoch, s.Offset = res.Epoch, res.Offset
			s.Keys = len(keys) + counted
			return s, nil
		}
		if res.Cursor == "" || !allState {
			break
		}
		if res.Cursor == cursor {
			return s, fmt.Errorf("state page %d: the cursor did not advance (%q)", s.StatePages, cursor)
		}
		cursor = res.Cursor
	}
	for {
		req := &protocol.SubscribeRequest{Channel: channel, Type: subscribeMap, Phase: mapPhaseStream, Limit: limit, Epoch: s.Epoch, Offset: s.Offset}
		r, err := c.call(ctx, &protocol.Command{Subscribe: req})
		if err != nil {
			return s, fmt.Errorf("stream page %d: %w", s.StreamPages+1, err)
		}
		res := r.Subscribe
		if res == nil {
			return s, fmt.Errorf("stream page %d: no subscribe result", s.StreamPages+1)
		}
		s.Changes += applyChanges(res.Publications)
		switch res.Phase {
		case mapPhaseStream:
			if res.Offset <= s.Offset {
				return s, fmt.Errorf("stream page %d: offset %d did not advance past %d", s.StreamPages+1, res.Offset, s.Offset)
			}
			s.StreamPages++
			s.Offset = res.Offset
		case mapPhaseLive:
			s.Epoch, s.Offset = res.Epoch, res.Offset
			s.Keys = len(keys) + counted
			return s, nil
		default:
			return s, fmt.Errorf("stream page %d: unexpected phase %d", s.StreamPages+1, res.Phase)
		}
	}
}

// applyMapChanges applies stream changes to a key set (last change wins,
// removed deletes) and returns how many there were.
func applyMapChanges(keys map[string]struct{}, pubs []*protocol.Publication) int {
	for _, p := range pubs {
		if p.Removed {
			delete(keys, p.Key)
		} else {
			keys[p.Key] = struct{}{}
		}
	}
	return len(pubs)
}

// ReadLive reads pushes (to OnPub) until ctx ends; it returns nil then.
func (c *MapClient) ReadLive(ctx context.Context) error {
	for {
		if _, err := c.read(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}
