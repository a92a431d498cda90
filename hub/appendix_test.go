package hub_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
)

// appendixConfig is the configuration the exchange in protocol.md's
// appendix was recorded with.
func appendixConfig() hub.Config {
	return hub.Config{
		Version: "0.0.0 OSS",
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient:   true,
			AllowPublishForSubscriber: true,
			Presence:                  true,
			JoinLeave:                 true,
			ForcePushJoinLeave:        true,
			HistorySize:               100,
			HistoryTTL:                300 * time.Second,
			ForceRecovery:             true,
		}},
	}
}

// TestAppendixExchange replays the recorded exchange with the reference
// server and checks every frame: shapes, codes, field order and batching.
func TestAppendixExchange(t *testing.T) {
	n := startNode(t, appendixConfig())
	// Two publications before the trace, as in the recording (offset 2).
	for i := 0; i < 2; i++ {
		if _, err := n.hub.Publish(context.Background(), "chat", []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := n.dial(t)
	tok := token(t, auth.ConnectClaims{User: "user1", ExpiresAt: time.Now().Add(7 * 24 * time.Hour)})

	c.Send(`{"id": 1, "connect": {"token": "` + tok + `", "name": "trace"}}`)
	got := c.Read()
	m := regexp.MustCompile(`^\{"id":1,"connect":\{"client":"([0-9a-f-]{36})","version":"0\.0\.0 OSS","expires":true,"ttl":(\d+),"ping":25,"pong":true\}\}$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("connect reply: %s", got)
	}
	id := m[1]
	info := `{"user":"user1","client":"` + id + `"}`

	c.Send(`{"id": 2, "subscribe": {"channel": "chat", "flag": 1}}`)
	got = c.Read()
	em := regexp.MustCompile(`^\{"id":2,"subscribe":\{"recoverable":true,"epoch":"([^"]+)","offset":2,"positioned":true\}\}\n\{"push":\{"channel":"chat","join":\{"info":` + regexp.QuoteMeta(info) + `\}\}\}$`).FindStringSubmatch(got)
	if em == nil {
		t.Fatalf("subscribe reply and join push: %s", got)
	}
	epoch := em[1]

	c.Send(`{"id": 3, "publish": {"channel": "chat", "data": {"text": "hi"}}}`)
	expect(t, c, `{"push":{"channel":"chat","pub":{"data":{"text": "hi"},"info":`+info+`,"offset":3}}}`+"\n"+`{"id":3,"publish":{}}`)

	c.Send(`{"id": 4, "presence": {"channel": "chat"}}`)
	expect(t, c, `{"id":4,"error":{"code":103,"message":"permission denied"}}`)
	c.Send(`{"id": 41, "presence_stats": {"channel": "chat"}}`)
	expect(t, c, `{"id":41,"error":{"code":103,"message":"permission denied"}}`)
	c.Send(`{"id": 5, "history": {"channel": "chat", "limit": 10}}`)
	expect(t, c, `{"id":5,"error":{"code":103,"message":"permission denied"}}`)
	c.Send(`{"id": 6, "subscribe": {"channel": "nons:x"}}`)
	expect(t, c, `{"id":6,"error":{"code":102,"message":"unknown channel"}}`)
	c.Send(`{"id": 7, "subscribe": {"channel": "chat"}}`)
	expect(t, c, `{"id":7,"error":{"code":105,"message":"already subscribed"}}`)
	c.Send(`{"id": 71, "unsubscribe": {"channel": "chat"}}`)
	expect(t, c, `{"id":71,"unsubscribe":{}}`)
	c.Send(`{"id": 72, "subscribe": {"channel": "chat", "recover": true, "offset": 0, "epoch": "bogus"}}`)
	expect(t, c, fmt.Sprintf(`{"id":72,"subscribe":{"recoverable":true,"epoch":"%s","offset":3,"positioned":true,"was_recovering":true}}`, epoch)+
		"\n"+`{"push":{"channel":"chat","join":{"info":`+info+`}}}`)
	c.Send(`{"id":9,"rpc":{"method":"x","data":{}}}`)
	expect(t, c, `{"id":9,"error":{"code":108,"message":"not available"}}`)
	c.Send(`{"id":8,"foo":{}}`)
	c.ExpectClose(3501, "bad request")
}

func expect(t *testing.T, c *rawClient, want string) {
	t.Helper()
	if got := c.Read(); got != want {
		t.Fatalf("frame\n got: %s\nwant: %s", got, want)
	}
}
