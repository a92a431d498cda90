package hub_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// TestCloseFrameAlwaysSent closes many subscribed connections from a
// command (sub_refresh with another user's token: 3500) and requires that
// every one of them receives the close frame, never a bare TCP close.
func TestCloseFrameAlwaysSent(t *testing.T) {
	t.Parallel()
	// About the socket: the close frame must be on the wire before the TCP
	// close, so this runs over WebSocket whatever startNode uses.
	n := startNodeWS(t, hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}}}, websocket.Config{})
	connect := `{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "u"}) + `"}}`
	subscribe := `{"id":2,"subscribe":{"channel":"$a","token":"` + subToken(t, auth.SubscribeClaims{User: "u", Channel: "$a"}) + `"}}`
	refresh := `{"id":3,"sub_refresh":{"channel":"$a","token":"` + subToken(t, auth.SubscribeClaims{User: "v", Channel: "$a"}) + `"}}`

	// once runs one connection and returns how it was closed.
	once := func() string {
		d := gws.Dialer{HandshakeTimeout: 5 * time.Second}
		conn, resp, err := d.Dial(n.url, nil)
		if err != nil {
			return "dial: " + err.Error()
		}
		resp.Body.Close()
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for _, cmd := range []string{connect, subscribe} {
			if err := conn.WriteMessage(gws.TextMessage, []byte(cmd)); err != nil {
				return "write: " + err.Error()
			}
			// Wait for the reply (the frame may batch both replies).
			for {
				_, data, err := conn.ReadMessage()
				if err != nil {
					return "read: " + err.Error()
				}
				if strings.Contains(string(data), `"id":2,`) || (cmd == connect && strings.Contains(string(data), `"id":1,`)) {
					break
				}
			}
		}
		if err := conn.WriteMessage(gws.TextMessage, []byte(refresh)); err != nil {
			return "write: " + err.Error()
		}
		for {
			_, _, err := conn.ReadMessage()
			if err == nil {
				continue
			}
			var ce *gws.CloseError
			if errors.As(err, &ce) {
				return fmt.Sprintf("close %d %s", ce.Code, ce.Text)
			}
			return err.Error()
		}
	}
	var (
		mu      sync.Mutex
		results = map[string]int{}
		wg      sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				r := once()
				mu.Lock()
				results[r]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(results) != 1 || results["close 3500 invalid token"] != 2400 {
		t.Fatalf("how 2400 connections were closed: %v", results)
	}
}
