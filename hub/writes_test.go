package hub_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
)

// TestSlowClientStalledWrites is the slow-client case without a socket: a
// subscriber's writes stall while publications keep coming; once its
// write queue passes QueueMaxSize it is closed with 3008, while a
// subscriber that reads gets every publication. When its writer gets
// through again, the client finds the publications written before the
// limit, in order, then the close.
func TestSlowClientStalledWrites(t *testing.T) {
	t.Parallel()
	events := make(chan disconnectEvent, 8)
	n := startNodeMem(t, hub.Config{
		Channels: openChannels(),
		Client:   hub.ClientConfig{QueueMaxSize: 64 << 10},
		Handlers: hub.Handlers{OnDisconnect: recordDisconnects(events)},
	})
	slow, conn := n.dialMem(t)
	slow.Connect("slow")
	slow.MustSubscribe(2, "s", "")
	fast := n.dial(t)
	fast.Connect("fast")
	fast.MustSubscribe(2, "s", "")
	conn.Stall()

	seq := publishUntilSlowClosed(t, n, fast, events, 4<<10)

	conn.Resume()
	var got []int64
	for {
		data, err := slow.Wire().Read(5 * time.Second)
		var sc *wire.CloseError
		if errors.As(err, &sc) {
			if sc.Code != 3008 || sc.Reason != "slow" {
				t.Fatalf("close %d %q, want 3008 slow", sc.Code, sc.Reason)
			}
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, m := range slow.DecodeFrame(string(data)) {
			got = append(got, jsonclient.Num(jsonclient.Path(m, "push", "pub", "data", "seq")))
		}
	}
	for i, s := range got {
		if s != int64(i+1) {
			t.Fatalf("stalled client's publications are not 1, 2, ...: %v", got)
		}
	}
	if len(got) >= seq {
		t.Fatalf("stalled client got %d of %d publications before the close", len(got), seq)
	}
	select {
	case ev := <-events:
		t.Fatalf("unexpected disconnect %+v", ev)
	default:
	}
}

// TestWriteError breaks one subscriber's connection: the failed write
// closes it with 3009, and the other subscriber still gets the
// publication.
func TestWriteError(t *testing.T) {
	t.Parallel()
	events := make(chan disconnectEvent, 8)
	n := startNodeMem(t, hub.Config{
		Channels: openChannels(),
		Handlers: hub.Handlers{OnDisconnect: recordDisconnects(events)},
	})
	broken, conn := n.dialMem(t)
	broken.Connect("broken")
	broken.MustSubscribe(2, "s", "")
	ok := n.dial(t)
	ok.Connect("ok")
	ok.MustSubscribe(2, "s", "")

	conn.FailWrites(errors.New("connection reset by peer"))
	publishN(t, n.hub, "s", 1)
	select {
	case ev := <-events:
		if ev.user != "broken" || ev.code != 3009 || ev.reason != "write error" {
			t.Fatalf("disconnect %+v, want the broken client with 3009 write error", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no disconnect after a failed write")
	}
	broken.ExpectClose(3009, "write error")
	select {
	case <-conn.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("HandleClose not called after the hub closed the connection")
	}
	if p := jsonclient.PushesOf(ok.Drain(), "s", "pub"); len(p) != 1 {
		t.Fatalf("the other subscriber: %v", p)
	}
}
