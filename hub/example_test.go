package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// An application embeds a hub: it authenticates clients with its own
// login tokens, answers an RPC, and publishes from its own code.
func Example() {
	logins := map[string]string{"s3cr3t-login": "alice"} // the app's own login store

	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true,
		}},
		Handlers: hub.Handlers{
			// The app decides who connects: here, by its login token.
			OnConnecting: func(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
				user, ok := logins[ev.Token]
				if !ok {
					return hub.ConnectReply{}, &hub.Disconnect{Code: 4501, Reason: "unknown login"}
				}
				return hub.ConnectReply{User: user, Channels: []string{"news"}}, nil
			},
			OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
				if ev.Method != "whoami" {
					reply(hub.RPCReply{}, &hub.Error{Code: 104, Message: "method not found"})
					return
				}
				data, err := json.Marshal(map[string]string{"user": c.User()})
				reply(hub.RPCReply{Data: data}, err)
			},
		},
	})
	if err != nil {
		panic(err)
	}
	if err := h.Start(context.Background()); err != nil {
		panic(err)
	}
	ws, _ := websocket.NewServer(websocket.Config{}, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		return h.NewClient(c, c.RemoteAddr())
	})
	srv := httptest.NewServer(ws)
	defer func() {
		srv.Close()
		_ = h.Shutdown(context.Background())
		_ = ws.Close()
	}()

	// A client (any Centrifugo SDK would do) connects and calls the RPC.
	conn, _, err := gws.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	read := func() string {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, data, err := conn.ReadMessage()
		if err != nil {
			panic(err)
		}
		return string(data)
	}
	_ = conn.WriteMessage(gws.TextMessage, []byte(`{"id":1,"connect":{"token":"s3cr3t-login"}}`))
	var reply struct {
		Connect struct {
			Subs map[string]json.RawMessage `json:"subs"`
		} `json:"connect"`
	}
	_ = json.Unmarshal([]byte(read()), &reply)
	fmt.Println("subscribed by the server to:", len(reply.Connect.Subs), "channel(s)")

	_ = conn.WriteMessage(gws.TextMessage, []byte(`{"id":2,"rpc":{"method":"whoami","data":{}}}`))
	fmt.Println(read())

	// The app publishes from its own code; the client receives it.
	if _, err := h.Publish(context.Background(), "news", []byte(`{"headline":"hello"}`), hub.PublishOptions{}); err != nil {
		panic(err)
	}
	fmt.Println(read())
	// Output:
	// subscribed by the server to: 1 channel(s)
	// {"id":2,"rpc":{"data":{"user":"alice"}}}
	// {"push":{"channel":"news","pub":{"data":{"headline":"hello"}}}}
}
