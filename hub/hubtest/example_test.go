package hubtest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/protocol"
)

// A test connects a client to a hub in memory, subscribes it, and checks
// what a publication and a disconnect look like on the wire.
func Example() {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true,
		}},
	})
	if err != nil {
		panic(err)
	}
	if err := h.Start(context.Background()); err != nil {
		panic(err)
	}
	defer h.Shutdown(context.Background())

	conn, client := hubtest.Dial(h, protocol.TypeJSON)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// Connect and subscribe in one frame, as the SDKs do. The replies may
	// come after Send returns: wait for both.
	if err := conn.Send([]byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"news"}}`)); err != nil {
		panic(err)
	}
	for replies := 0; replies < 2; {
		frame, err := conn.Next(ctx)
		if err != nil {
			panic(err)
		}
		replies += bytes.Count(frame, []byte("\n")) + 1
	}

	if _, err := h.Publish(ctx, "news", []byte(`{"headline":"hello"}`), hub.PublishOptions{}); err != nil {
		panic(err)
	}
	frame, err := conn.Next(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(frame))

	client.Disconnect(4000, "bye")
	_, err = conn.Next(ctx)
	var ce *hubtest.CloseError
	if errors.As(err, &ce) {
		fmt.Println("closed:", ce.Code, ce.Reason)
	}
	<-conn.Done() // the hub has seen the connection go
	// Output:
	// {"push":{"channel":"news","pub":{"data":{"headline":"hello"}}}}
	// closed: 4000 bye
}
