package hub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// streamHub is a node whose "st" namespace's subscriptions are stream
// subscriptions: each feed delivers what the test sends on feed, and
// reports its end (with the error deliver returned, if any) on ended.
type streamHub struct {
	*node
	feed  chan []byte
	stop  chan struct{} // closing it ends every feed by itself
	ended chan error
}

func startStreamHub(t *testing.T) *streamHub {
	sh := &streamHub{feed: make(chan []byte, 16), stop: make(chan struct{}), ended: make(chan error, 16)}
	cfg := hub.Config{Channels: hub.ChannelConfig{
		Namespaces: []hub.Namespace{ns("st", hub.NamespaceOptions{AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Minute})},
	}}
	cfg.Handlers.OnSubscribe = func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
		var publish func(context.Context, []byte) error
		if ev.Channel == "st:bidi" {
			// The client's publications go into the feed, and so come
			// back to it; one is refused.
			publish = func(_ context.Context, data []byte) error {
				if string(data) == `{"bad":1}` {
					return &hub.Error{Code: 1403, Message: "refused by the stream"}
				}
				sh.feed <- data
				return nil
			}
		}
		return hub.SubscribeReply{Data: []byte(`{"stream":true}`), StreamPublish: publish, Stream: func(ctx context.Context, deliver func([]byte, map[string]string) error) error {
			for {
				select {
				case data := <-sh.feed:
					if err := deliver(data, map[string]string{"via": "stream"}); err != nil {
						sh.ended <- err
						return err
					}
				case <-sh.stop:
					sh.ended <- nil
					return errors.New("backend went away")
				case <-ctx.Done():
					sh.ended <- ctx.Err()
					return ctx.Err()
				}
			}
		}}, nil
	}
	sh.node = startNode(t, cfg)
	return sh
}

func (sh *streamHub) awaitEnd(t *testing.T) error {
	t.Helper()
	select {
	case err := <-sh.ended:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end")
		return nil
	}
}

// TestStreamSubscription: a stream subscription receives what its feed
// delivers, with no stream position, and nothing published to the channel
// through the engine; unsubscribing ends the feed.
func TestStreamSubscription(t *testing.T) {
	t.Parallel()
	sh := startStreamHub(t)
	c := sh.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "st:a", `"recover":true,"positioned":true`)
	if jsonclient.Compact(t, res["data"]) != `{"stream":true}` || res["offset"] != nil || res["recoverable"] != nil {
		t.Fatalf("stream subscribe result: %v", res)
	}
	// Published to the channel: not for a stream subscription.
	if _, err := sh.hub.Publish(context.Background(), "st:a", []byte(`{"broker":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	sh.feed <- []byte(`{"n":1}`)
	m := c.Next()
	if jsonclient.Path(m, "push", "channel") != "st:a" || jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"n":1}` ||
		jsonclient.Path(m, "push", "pub", "tags", "via") != "stream" {
		t.Fatalf("want the feed's publication first, got %v", m)
	}
	c.Call(`{"id":3,"unsubscribe":{"channel":"st:a"}}`)
	if err := sh.awaitEnd(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("feed ended with %v, want its context cancelled", err)
	}
}

// TestStreamEndsByItself: when the feed returns, the client is
// unsubscribed with 2500 and may subscribe again; a disconnect ends the
// new feed.
func TestStreamEndsByItself(t *testing.T) {
	t.Parallel()
	sh := startStreamHub(t)
	c := sh.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "st:b", "")
	close(sh.stop)
	if err := sh.awaitEnd(t); err != nil {
		t.Fatalf("feed: %v", err)
	}
	m := c.Next()
	if jsonclient.Path(m, "push", "channel") != "st:b" || jsonclient.Num(jsonclient.Path(m, "push", "unsubscribe", "code")) != 2500 {
		t.Fatalf("want unsubscribe 2500, got %v", m)
	}
}

// TestStreamEndsWithConnection: closing the connection cancels the feed.
func TestStreamEndsWithConnection(t *testing.T) {
	t.Parallel()
	sh := startStreamHub(t)
	c := sh.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "st:c", "")
	c.Drop()
	if err := sh.awaitEnd(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("feed ended with %v, want its context cancelled", err)
	}
}

// TestBidirectionalStream: with StreamPublish, the client's publications
// to the channel go to the stream (and not to the engine), and the
// stream's error is the publish command's; once unsubscribed, publishing
// falls back to the namespace's permissions.
func TestBidirectionalStream(t *testing.T) {
	t.Parallel()
	sh := startStreamHub(t)
	c := sh.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "st:bidi", "")
	if m := c.Call(`{"id":3,"publish":{"channel":"st:bidi","data":{"up":1}}}`); m["publish"] == nil {
		t.Fatalf("publish into the stream: %v", m)
	}
	m := c.Next()
	if jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"up":1}` {
		t.Fatalf("want the stream's echo, got %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":4,"publish":{"channel":"st:bidi","data":{"bad":1}}}`), 1403)
	// Nothing went to the channel through the engine.
	if pubs, _, err := sh.hub.History(context.Background(), "st:bidi", nil, 10, false); err != nil || len(pubs) != 0 {
		t.Fatalf("history of st:bidi: %v, %v", pubs, err)
	}
	c.Call(`{"id":5,"unsubscribe":{"channel":"st:bidi"}}`)
	sh.awaitEnd(t)
	jsonclient.WantError(t, c.Call(`{"id":6,"publish":{"channel":"st:bidi","data":{"up":2}}}`), 103)
}
