package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// The examples in this file embed a hub the way an application would, and
// talk to it as a browser's Centrifugo client would, over a real
// WebSocket, so that what they print is what clients receive.

// An application decides who connects: here, by a name the client sends
// as connect data. A refused client is closed with the application's code.
func ExampleHandlers_authentication() {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Handlers: hub.Handlers{
			OnConnecting: func(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
				var d struct {
					Name string `json:"name"`
				}
				if err := json.Unmarshal(ev.Data, &d); err != nil || d.Name == "" {
					// 4500–4999: the client must not reconnect.
					return hub.ConnectReply{}, &hub.Disconnect{Code: 4501, Reason: "a name is required"}
				}
				greeting, err := json.Marshal(map[string]string{"greeting": "hello, " + d.Name})
				return hub.ConnectReply{User: d.Name, Data: greeting}, err
			},
		},
	})
	if err != nil {
		panic(err)
	}
	url, stop := serveExample(h)
	defer stop()

	alice := dialExample(url)
	defer alice.close()
	alice.send(`{"id":1,"connect":{"data":{"name":"alice"}}}`)
	var reply struct {
		Connect struct {
			Data json.RawMessage `json:"data"`
		} `json:"connect"`
	}
	alice.readJSON(&reply)
	fmt.Println("alice got:", string(reply.Connect.Data))
	fmt.Println("users connected:", h.NumUsers())

	nameless := dialExample(url)
	defer nameless.close()
	nameless.send(`{"id":1,"connect":{}}`)
	fmt.Println("nameless client:", nameless.closed())
	// Output:
	// alice got: {"greeting":"hello, alice"}
	// users connected: 1
	// nameless client: closed 4501 a name is required
}

// OnRPC answers a client's calls. The handler calls reply exactly once,
// before it returns or later from another goroutine; an *hub.Error answers
// with that error code.
func ExampleHandlers_rpc() {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Handlers: hub.Handlers{
			OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
				switch ev.Method {
				case "sum":
					var args struct{ A, B int }
					if err := json.Unmarshal(ev.Data, &args); err != nil {
						reply(hub.RPCReply{}, &hub.Error{Code: 400, Message: `sum takes {"a": n, "b": n}`})
						return
					}
					reply(hub.RPCReply{Data: fmt.Appendf(nil, `{"sum":%d}`, args.A+args.B)}, nil)
				case "report":
					// Slow work goes elsewhere; the client's next command
					// waits for this reply, so replies stay in order.
					go func() {
						reply(hub.RPCReply{Data: []byte(`{"ready":true}`)}, nil)
					}()
				default:
					reply(hub.RPCReply{}, &hub.Error{Code: 104, Message: "method not found"})
				}
			},
		},
	})
	if err != nil {
		panic(err)
	}
	url, stop := serveExample(h)
	defer stop()

	c := dialExample(url)
	defer c.close()
	c.send(`{"id":1,"connect":{}}`)
	c.ok()
	c.send(`{"id":2,"rpc":{"method":"sum","data":{"a":2,"b":3}}}`)
	c.send(`{"id":3,"rpc":{"method":"report","data":{}}}`)
	c.send(`{"id":4,"rpc":{"method":"sum","data":"two and three"}}`)
	c.send(`{"id":5,"rpc":{"method":"dance","data":{}}}`)
	for range 4 {
		fmt.Println(c.read())
	}
	// Output:
	// {"id":2,"rpc":{"data":{"sum":5}}}
	// {"id":3,"rpc":{"data":{"ready":true}}}
	// {"id":4,"error":{"code":400,"message":"sum takes {\"a\": n, \"b\": n}"}}
	// {"id":5,"error":{"code":104,"message":"method not found"}}
}

// The application publishes from its own code to every subscriber of a
// channel. In a namespace with history, the publication gets an offset in
// the channel's stream.
func ExampleHub_Publish() {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{
			Name: "news",
			NamespaceOptions: hub.NamespaceOptions{
				AllowSubscribeForClient:    true,
				AllowSubscribeForAnonymous: true,
				HistorySize:                10,
				HistoryTTL:                 time.Hour,
			},
		}}},
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
	})
	if err != nil {
		panic(err)
	}
	url, stop := serveExample(h)
	defer stop()

	reader := dialExample(url)
	defer reader.close()
	reader.send(`{"id":1,"connect":{}}`)
	reader.ok()
	reader.send(`{"id":2,"subscribe":{"channel":"news:world"}}`)
	reader.ok()

	pos, err := h.Publish(context.Background(), "news:world", []byte(`{"headline":"hello"}`), hub.PublishOptions{
		Tags: map[string]string{"kind": "breaking"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("published at offset", pos.Offset)
	fmt.Println(reader.read())
	// Output:
	// published at offset 1
	// {"push":{"channel":"news:world","pub":{"data":{"headline":"hello"},"offset":1,"tags":{"kind":"breaking"}}}}
}

// A chat room that knows who is in it: the namespace keeps presence and
// sends join and leave events, the application reads presence with
// Hub.Presence, and when a user goes away it tells the room with
// Hub.Publish from OnDisconnect.
func ExampleHub_Presence() {
	const room = "room:lobby"
	var h *hub.Hub
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{
			Name: "room",
			NamespaceOptions: hub.NamespaceOptions{
				AllowSubscribeForClient:    true,
				Presence:                   true,
				JoinLeave:                  true,
				AllowPresenceForSubscriber: true, // and so receive join and leave events
			},
		}}},
		Handlers: hub.Handlers{
			// A real application checks a login; this one takes the
			// token as the user's name.
			OnConnecting: func(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
				if ev.Token == "" {
					return hub.ConnectReply{}, &hub.Disconnect{Code: 4501, Reason: "a name is required"}
				}
				return hub.ConnectReply{User: ev.Token}, nil
			},
			OnDisconnect: func(c *hub.Client, ev hub.DisconnectEvent) {
				msg, _ := json.Marshal(map[string]string{"system": c.User() + " left"})
				if _, err := h.Publish(context.Background(), room, msg, hub.PublishOptions{}); err != nil {
					// The hub may be shutting down: a lost notice is not
					// worth failing anything for.
					slog.Warn("announce a departure", "user", c.User(), "error", err)
				}
			},
		},
	})
	if err != nil {
		panic(err)
	}
	url, stop := serveExample(h)
	defer stop()
	online := func() []string {
		present, err := h.Presence(context.Background(), room)
		if err != nil {
			panic(err)
		}
		users := make(map[string]bool)
		for _, info := range present {
			users[info.User] = true
		}
		return slices.Sorted(maps.Keys(users))
	}

	enter := func(name string) *exampleConn {
		c := dialExample(url)
		c.send(fmt.Sprintf(`{"id":1,"connect":{"token":%q}}`, name))
		c.ok()
		c.send(`{"id":2,"subscribe":{"channel":"room:lobby","join_leave":true}}`)
		c.ok()
		return c
	}
	alice := enter("alice")
	defer alice.close()
	bob := enter("bob")
	fmt.Println("online:", online())

	// alice's page hears of bob, then of his departure.
	fmt.Println("alice sees:", alice.event())
	fmt.Println("alice sees:", alice.event())
	bob.close()
	fmt.Println("alice sees:", alice.event())
	fmt.Println("alice sees:", alice.event())
	fmt.Println("online:", online())
	// Output:
	// online: [alice bob]
	// alice sees: alice joined
	// alice sees: bob joined
	// alice sees: bob left
	// alice sees: message {"system":"bob left"}
	// online: [alice]
}

// serveExample starts h and serves it over WebSocket on a loopback port.
// stop closes everything, so that no goroutine outlives the example.
func serveExample(h *hub.Hub) (url string, stop func()) {
	if err := h.Start(context.Background()); err != nil {
		panic(err)
	}
	ws, err := websocket.NewServer(websocket.Config{}, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		return h.NewClient(c, c.RemoteAddr())
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(ws)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), func() {
		srv.Close()
		_ = h.Shutdown(context.Background())
		_ = ws.Close()
	}
}

// exampleConn is the client side of an example: a WebSocket speaking the
// Centrifugo JSON protocol.
type exampleConn struct {
	conn    *gws.Conn
	pending [][]byte // messages of a frame not read yet
}

func dialExample(url string) *exampleConn {
	conn, _, err := gws.DefaultDialer.Dial(url, nil)
	if err != nil {
		panic(err)
	}
	return &exampleConn{conn: conn}
}

func (c *exampleConn) close() { _ = c.conn.Close() }

func (c *exampleConn) send(cmd string) {
	if err := c.conn.WriteMessage(gws.TextMessage, []byte(cmd)); err != nil {
		panic(err)
	}
}

// next returns the next message from the server. The hub may batch
// several messages in one frame, one per line.
func (c *exampleConn) next() ([]byte, error) {
	for len(c.pending) == 0 {
		_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, frame, err := c.conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		c.pending = bytes.Split(bytes.TrimSpace(frame), []byte("\n"))
	}
	msg := c.pending[0]
	c.pending = c.pending[1:]
	return msg, nil
}

// read returns the next message, which must come.
func (c *exampleConn) read() string {
	msg, err := c.next()
	if err != nil {
		panic(err)
	}
	return string(msg)
}

// ok reads a reply that must not be an error.
func (c *exampleConn) ok() {
	var reply struct {
		Error json.RawMessage `json:"error"`
	}
	c.readJSON(&reply)
	if reply.Error != nil {
		panic("error reply: " + string(reply.Error))
	}
}

func (c *exampleConn) readJSON(v any) {
	if err := json.Unmarshal([]byte(c.read()), v); err != nil {
		panic(err)
	}
}

// closed waits for the server to close the connection and tells how.
func (c *exampleConn) closed() string {
	for {
		_, err := c.next()
		var ce *gws.CloseError
		if errors.As(err, &ce) {
			return fmt.Sprintf("closed %d %s", ce.Code, ce.Text)
		}
		if err != nil {
			return err.Error()
		}
	}
}

// event reads the next push of a channel and describes it: a join, a
// leave or a publication.
func (c *exampleConn) event() string {
	var m struct {
		Push struct {
			Join  *struct{ Info struct{ User string } } `json:"join"`
			Leave *struct{ Info struct{ User string } } `json:"leave"`
			Pub   *struct{ Data json.RawMessage }       `json:"pub"`
		} `json:"push"`
	}
	c.readJSON(&m)
	switch p := m.Push; {
	case p.Join != nil:
		return p.Join.Info.User + " joined"
	case p.Leave != nil:
		return p.Leave.Info.User + " left"
	case p.Pub != nil:
		return "message " + string(p.Pub.Data)
	}
	return "something else"
}
